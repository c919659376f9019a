"""The evaluation stage of the real workflow: runs, scores, metrics.parquet and Table 2 for a
registry of four kinds (reused, local sentence-transformers, bm25, cross-encoder), and what a
change to the registry reruns. Questions come from the scripted fake LLM server."""

import base64
import json
import re
import xml.etree.ElementTree as ET
import zipfile

import ir_measures
import pandas as pd
import pyarrow.parquet as pq
import pytest
from ir_measures import Judged, R, nDCG

from boolbench.labels import LABEL_COLUMNS
from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.paths import artifact
from boolbench.report.figures import FIGURES
from boolbench.retrieval.runs import RUN_SCHEMA
from tests.conftest import Workflow, tiny_config
from tests.html_tables import Tables
from tests.scripted_llm import respond, scripted_config
from tests.tiny_models import tiny_cross_encoder, tiny_sentence_transformer

pytestmark = pytest.mark.workflow  # runs the real Snakefile


def registry(models_dir):
    return {
        "minilm-l6": {
            "kind": "sentence-transformers",
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "max_seq_length": 128,
        },
        "tiny-st": {
            "kind": "sentence-transformers",
            "model": str(models_dir / "st"),
            "query_prompt_name": "query",
            "shards": 1,
        },
        "bm25": {"kind": "bm25"},
        "tiny-ce": {
            "kind": "cross-encoder",
            "model": str(models_dir / "cross"),
            "rerank": "bm25",
            "depth": 20,
        },
    }


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    models_dir = tmp_path_factory.mktemp("models")
    tiny_sentence_transformer(models_dir)
    tiny_cross_encoder(models_dir)
    with FakeOpenAIServer(responder=respond) as server:
        flow = Workflow(tmp_path_factory.mktemp("evaluation"))

        def config(models):
            return scripted_config(
                server,
                candidates={"n_groups": 3},
                # the scripted groups are all of one kind ("records"): split by kind, every
                # question would be in one split, and contrastive training needs train ones
                split={"by": "group"},
                models=models,
                baselines={
                    "retriever": "tiny-st",
                    "split": "all",
                    "train_on": ["not"],
                    "training": {"max_steps": 2, "batch_size": 4},
                },
            )

        flow.write_config(config(registry(models_dir)))
        flow.run()
        yield flow, config, registry(models_dir)


def test_runs_follow_the_run_format(evaluated):
    flow, _, models = evaluated
    questions = pd.read_parquet(flow.path(artifact("dataset", corpus="tiny")))
    # The models search every written question: the judge pools their runs before it keeps any.
    written = pd.read_parquet(flow.path(artifact("written_questions", corpus="tiny")))
    assert set(questions.qid) <= set(written.qid)
    queries = pd.read_parquet(flow.path(artifact("original_queries", corpus="tiny")))
    assert len(questions) > 0 and len(queries) > 0
    for model in models:
        for path, query_ids in (
            (f"results/tiny/runs/{model}.parquet", set(written.qid)),
            (f"results/tiny/runs/original/{model}.parquet", set(queries.qid)),
        ):
            table = pq.read_table(flow.path(path))
            assert table.schema.equals(RUN_SCHEMA, check_metadata=False), path
            run = table.to_pandas()
            assert set(run.qid) <= query_ids
            depth = 20 if model == "tiny-ce" else 100
            for _, ranked in run.groupby("qid"):
                assert ranked["rank"].tolist() == list(range(1, len(ranked) + 1))
                assert len(ranked) <= depth and ranked["score"].is_monotonic_decreasing
            if models[model]["kind"] != "bm25" and "rerank" not in models[model]:
                assert set(run.qid) == query_ids
                assert run.groupby("qid").size().eq(min(depth, 60)).all()
    # bm25 leaves out passages without a shared term; the cross-encoder re-ranks its top 20.
    # One passage per Wikipedia article: no query is scoped to a document of 2+ passages.
    for model in models:
        for name in ("", "original/"):
            table = pq.read_table(flow.path(f"results/tiny/runs/document/{name}{model}.parquet"))
            assert table.schema.equals(RUN_SCHEMA, check_metadata=False) and table.num_rows == 0
    for name in ("", "original/"):
        bm25 = pd.read_parquet(flow.path(f"results/tiny/runs/{name}bm25.parquet"))
        reranked = pd.read_parquet(flow.path(f"results/tiny/runs/{name}tiny-ce.parquet"))
        expected = bm25.groupby("qid").size().clip(upper=20)
        assert reranked.groupby("qid").size().sort_index().equals(expected.sort_index())


def test_the_clustering_embeddings_are_reused_when_the_model_matches(evaluated):
    flow, _, _ = evaluated
    assert flow.path("results/tiny/models/clustering-encoder/embeddings.npy").exists()
    assert not flow.path("results/tiny/models/minilm-l6/embeddings.npy").exists()
    assert flow.path("results/tiny/models/minilm-l6/index.faiss").exists()
    assert flow.path("results/tiny/models/tiny-st/embeddings.npy").exists()


def test_metrics_and_table2(evaluated):
    flow, _, models = evaluated
    metrics = pd.read_parquet(flow.path(artifact("metrics", corpus="tiny")))
    assert set(metrics.model) == set(models)
    per_model = metrics.groupby("model").size()
    # label sets x (splits x types x metrics (5, and Recall@k% for 4 percents), + original)
    assert per_model.eq(2 * (3 * 4 * 9 + 9)).all()
    recall = metrics[metrics.metric.str.endswith("%")]
    assert set(recall.metric) == {"Recall@1%", "Recall@5%", "Recall@10%", "Recall@20%"}
    assert recall["n_queries"].eq(0).all() and recall["value"].isna().all()
    table = pd.read_csv(flow.path(artifact("table2_csv", corpus="tiny")))
    assert table["model"].tolist() == list(models)
    keys = ["model", "query_set", "labels", "split", "type", "metric"]
    picked = metrics.set_index(keys)["value"]
    for _, row in table.iterrows():
        model = row["model"]
        for labels in ("group", "completed"):
            assert row[f"{labels.title()} MRR@10 ALL"] == pytest.approx(  # in percent
                100 * picked[(model, "boolquestions", labels, "all", "ALL", "MRR@10")], abs=1e-4
            )
        assert row["NegRecall@10 NOT"] == pytest.approx(
            100 * picked[(model, "boolquestions", "completed", "all", "NOT", "NegRecall@10")],
            abs=1e-4,
        )
        # Every model's top 10 is pooled (pooling.depth 10, every model) and judged: the
        # completed labels judge all of it, the group labels only a part.
        assert row["Completed Judged@10 ALL"] == pytest.approx(100)
        assert 0 < row["Group Judged@10 ALL"] < 100
    markdown = flow.path(artifact("table2_md", corpus="tiny")).read_text()
    assert all(f"| {m} |" in markdown for m in models) and "**" in markdown
    assert "with negatives" in markdown
    assert "pooled negatives" in markdown and "nothing pooled" not in markdown
    assert r"\textbf{" in flow.path(artifact("table2_tex", corpus="tiny")).read_text()


def test_document_recall_table_says_no_query_is_scoped(evaluated):
    flow, config, models = evaluated
    scores = pd.read_parquet(flow.path("results/tiny/scores/bm25.parquet"))
    assert list(scores.columns[-4:]) == ["Recall@1%", "Recall@5%", "Recall@10%", "Recall@20%"]
    markdown = flow.path(artifact("document_recall_md", corpus="tiny")).read_text()
    assert markdown.startswith("No query") and markdown.count("\n") == 1
    # New percents rerun the scoring and what follows it, not the searches.
    flow.write_config(config(models) | {"evaluation": {"document_recall": {"percents": [50]}}})
    try:
        jobs = flow.planned_jobs()
        assert jobs["score_model"] == len(models) + 1  # and the contrastive model
        assert jobs["document_recall_table"] == 1
        assert not {"search", "rerank", "encode_shard"} & set(jobs)
    finally:
        flow.write_config(config(models))


def test_written_scores_equal_ir_measures_on_the_written_trec_files(evaluated):
    """The workflow's TREC runs and qrels (trec/qrels.txt: completed labels; qrels_group.txt;
    qrels_negatives.txt) scored by ir_measures equal scores/{model}.parquet."""
    flow, _, models = evaluated
    base = flow.path("results/tiny")
    questions = pd.read_parquet(base / "boolquestions.parquet")

    def qrels(name):
        return list(ir_measures.read_trec_qrels(str(base / "trec" / name)))

    for model in models:
        run = list(ir_measures.read_trec_run(str(base / f"runs/{model}.trec")))
        assert {r.query_id for r in run} <= set(questions.qid)
        scores = pd.read_parquet(base / f"scores/{model}.parquet")
        scores = scores[scores.query_set == "boolquestions"].set_index(["labels", "qid"])
        for labels, name, column, measure in (
            ("completed", "qrels.txt", "nDCG@10", nDCG @ 10),
            ("completed", "qrels.txt", "Recall@100", R @ 100),
            ("completed", "qrels.txt", "Judged@10", Judged @ 10),
            ("group", "qrels_group.txt", "nDCG@10", nDCG @ 10),
            ("completed", "qrels_negatives.txt", "NegRecall@10", R @ 10),
        ):
            values = list(ir_measures.iter_calc([measure], qrels(name), run))
            assert values
            for value in values:
                assert abs(scores.loc[(labels, value.query_id), column] - value.value) < 1e-9


def test_the_exports_carry_a_dataset_card_that_follows_the_config(evaluated):
    """released/README.md and beir/README.md: the passage template, the label counts of the
    dataset and the config that made it; a setting the cards report reruns the exports."""
    flow, config, models = evaluated
    questions = pd.read_parquet(flow.path(artifact("dataset", corpus="tiny")))
    for layout in ("released", "beir"):
        card = flow.path(f"results/tiny/{layout}/README.md").read_text()
        assert card.startswith("---\npretty_name: BoolQuestions regenerated by boolbench (tiny)")
        assert "reading a passage as `{text}` (`corpora.tiny.passage_template`" in card
        total = [sum(map(len, questions[c])) for c in LABEL_COLUMNS]
        assert total[2] + total[3] > 0  # every model's top 10 was pooled
        assert f"| ALL | {len(questions)} | " in card
        assert f"| {' | '.join(map(str, total))} |" in card
        assert "the union of the top 10 of each of the models" in card
        assert "llm:\n  backend: openai" in card
    beir = pd.read_csv(flow.path(artifact("beir_qrels_test", corpus="tiny")), sep="\t", dtype=str)
    trec = pd.read_csv(
        flow.path(artifact("trec_qrels", corpus="tiny")), sep=" ", header=None, dtype=str
    )
    test = set(questions.loc[questions.split == "test", "qid"])
    assert sorted(map(tuple, beir.values.tolist())) == sorted(
        (q, p, r) for q, _, p, r in trec.values.tolist() if q in test
    )
    changed = config(models)
    changed["evaluation"] = {"depth": 50}
    flow.write_config(changed)
    try:
        jobs = flow.planned_jobs()
        assert jobs["export_beir"] == 1 and jobs["export_released"] == 1
    finally:
        flow.write_config(config(models))


# The jobs that encode or index the corpus, or write questions: a change to the registry
# reruns none of them for the models it keeps.
CORPUS_AND_QUESTION_JOBS = {
    "encode_shard", "gather_embeddings", "build_faiss_index",
    "build_bm25_index", "atomic_questions", "compose_questions",
}  # fmt: skip


def registry_change_reruns(planned: dict, own_jobs: dict) -> None:
    """What a change to the models reruns: their own jobs, and, since every model's top 10 is
    pooled (pooling.models null), the judge (only the new pooled passages reach the LLM: the
    rest is cached), the dataset's pooled labels and everything scored on them."""
    assert {k: planned.get(k) for k in own_jobs} == own_jobs
    assert not (CORPUS_AND_QUESTION_JOBS - set(own_jobs)) & set(planned)
    assert planned["judge_questions"] == 1 and planned["assemble_dataset"] == 1
    assert planned["evaluation_tables"] == 1 and planned["all"] == 1


def test_adding_or_removing_a_model_reruns_its_jobs_and_the_pool_not_the_corpus(evaluated):
    flow, config, models = evaluated
    assert flow.planned_jobs() == {}
    grown = {
        **models,
        "l3": {"kind": "onnx", "shards": 2},
        "bm25-unstemmed": {"kind": "bm25", "stemmer": None},
    }
    flow.write_config(config(grown))
    try:
        planned = flow.planned_jobs()
        own = {"encode_shard": 2, "gather_embeddings": 1, "build_faiss_index": 1,
               "build_bm25_index": 1}  # fmt: skip
        registry_change_reruns(planned, own)
        # the two new models, and the model trained on the questions (their labels changed)
        assert planned["search"] == 3
        assert planned["score_model"] == len(grown) + 1  # + the trained model
        # Removing a model: its runs leave the pool; no model job runs but the trained one's.
        flow.write_config(config({k: v for k, v in models.items() if k != "minilm-l6"}))
        planned = flow.planned_jobs()
        registry_change_reruns(planned, {})
        assert planned.get("search", 0) <= 1
    finally:
        flow.write_config(config(models))


def test_changing_one_prompt_reruns_its_questions_and_everything_that_shows_them(evaluated):
    flow, config, models = evaluated
    changed = config(models)
    changed["generation"]["prompts"]["not"] = "NOT|{draft}|again"
    flow.write_config(changed)
    try:
        assert flow.planned_jobs() == {
            # the NOT questions
            "compose_questions": 1,
            "gather_composed_questions": 1,
            "written_questions": 1,
            "judge_questions": 1,
            "gather_answers": 1,
            "assemble_dataset": 1,
            "dataset_statistics": 1,
            "export_beir": 1,
            # every model searches the new questions (none re-encodes the corpus)...
            "search": 4,
            "rerank": 1,
            "score_model": 5,
            "trec_runs": 4,  # the TREC files of the registry's runs, and the qrels
            "trec_qrels": 1,
            "export_released": 1,
            # ...and the model trained on NOT questions is trained again (its query encoder
            # only: it searches tiny-st's index, nothing is encoded again)
            "train_contrastive": 1,
            "evaluation_tables": 1,
            "document_recall_table": 1,
            # the baselines decompose the questions again
            "decompose_questions": 1,
            "gather_decomposed_questions": 1,
            "boolean_operation_run": 2,
            "table3": 1,
            # the report: every page and figure that shows questions, and the config
            "significance": 1,
            "figure": 3,  # not the cluster sizes and SVD variance
            "llm_accounting": 1,
            "example_questions": 1,
            "rankings": 1,
            "audit_sheet": 1,  # the sample is drawn from the kept questions and their runs
            "run_config": 1,
            "all": 1,
        }
    finally:
        flow.write_config(config(models))


def test_a_changed_bm25_parameter_reruns_that_model_and_the_pool(evaluated):
    flow, config, models = evaluated
    changed = {**models, "bm25": {**models["bm25"], "k1": 1.2}}
    flow.write_config(config(changed))
    try:
        # bm25 and the cross-encoder re-ranking its run (both pooled), and what the pool
        # changes; the other models' runs stay.
        planned = flow.planned_jobs()
        registry_change_reruns(planned, {"build_bm25_index": 1, "rerank": 1})
        assert planned["search"] == 2  # bm25, and the model trained on the questions
    finally:
        flow.write_config(config(models))


def test_table3_rows_and_the_contrastive_models_go_through_the_evaluation(evaluated):
    flow, _, _ = evaluated
    table = pd.read_csv(flow.path(artifact("table3_csv", corpus="tiny")))
    assert table["model"].tolist() == [
        "tiny-st",
        "Decomposed query",
        "Oracle decomposition",
        "Boolean contrastive (NOT)",
    ]
    for name in ("contrastive-not",):
        assert flow.path(f"results/tiny/models/{name}/model/config.json").exists()
        assert flow.path(f"results/tiny/runs/{name}.parquet").exists()
        # Trained on the query side: it searched tiny-st's passage vectors and index.
        assert not flow.path(f"results/tiny/models/{name}/index.faiss").exists()
    notes = flow.path(artifact("table3_md", corpus="tiny")).read_text()
    assert "the query encoder only (passages keep tiny-st's vectors and index" in notes
    n_train = pd.read_parquet(flow.path(artifact("dataset", corpus="tiny"))).split == "train"
    assert f"On the {n_train.sum()} train questions themselves, MRR@10 ALL: " in notes
    # The base row equals tiny-st's row of Table 2 (same questions: the split is "all").
    table2 = pd.read_csv(flow.path(artifact("table2_csv", corpus="tiny"))).set_index("model")
    base = table.set_index("model").loc["tiny-st"]
    for column in ("Completed MRR@10 ALL", "Completed Judged@10 NOT"):
        assert base[column] == pytest.approx(table2.loc["tiny-st", column])
    decomposed = pd.read_parquet(flow.path(artifact("decomposed", corpus="tiny")))
    assert decomposed["status"].eq("ok").all()
    questions = pd.read_parquet(flow.path(artifact("dataset", corpus="tiny")))
    assert sorted(decomposed["qid"]) == sorted(questions["qid"])
    operators = dict(zip(decomposed.qid, decomposed.operator, strict=True))
    assert all(operators[q] == t for q, t in zip(questions.qid, questions.type, strict=True))
    oracle = pd.read_parquet(flow.path("results/tiny/baselines/runs/oracle.parquet"))
    assert set(oracle["qid"]) <= set(questions["qid"])
    assert (
        "Decomposition failed for 0 of"
        in flow.path(artifact("table3_md", corpus="tiny")).read_text()
    )


def test_training_the_whole_model_encodes_the_corpus_with_it(evaluated):
    flow, config, models = evaluated
    changed = config(models)
    changed["baselines"]["training"]["side"] = "both"
    flow.write_config(changed)
    try:
        jobs = flow.planned_jobs()
        steps = ("train_contrastive", "encode_shard", "gather_embeddings")
        steps += ("build_faiss_index", "search", "score_model", "table3")
        assert {step: jobs.get(step) for step in steps} == dict.fromkeys(steps, 1)
    finally:
        flow.write_config(config(models))


def test_an_unknown_model_kind_is_one_clear_error(workflow):
    workflow.write_config(tiny_config(models={"mine": {"kind": "colbert"}}))
    result = workflow.run("--dry-run", check=False)
    assert result.returncode != 0
    assert "models.mine.kind: 'colbert' is not one of" in result.stderr + result.stdout
    assert "Traceback" not in result.stderr


def report_results(html: str) -> dict[str, tuple[dict, bytes]]:
    """path -> (entry, file content) of the results a Snakemake HTML report embeds."""
    embedded = re.search(r"var results = (\{.*?\});\n", html, re.S).group(1)
    results = {}
    for path, entry in json.loads(embedded).items():
        header, _, data = entry["data_uri"].partition(",")
        assert header.endswith(";base64"), header
        results[path] = (entry, base64.b64decode(data))
    return results


def test_the_report_holds_tables_figures_accounting_and_config(evaluated):
    flow, _, models = evaluated
    flow.run("--report", "report.html")
    html = flow.path("report.html").read_text()
    assert "https://" not in re.sub(r"<script.*?</script>", "", html, flags=re.S)  # offline
    results = report_results(html)
    base = "results/tiny"
    by_name = {path.removeprefix(f"{base}/"): item for path, item in results.items()}
    figures = {f"figures/{name}.svg" for name in FIGURES}
    pages = {
        "tables/table1.html", "tables/table2.html", "tables/table3.html",
        "tables/document_recall.html", "tables/provenance.html",
        "tables/significance.html", "tables/llm_accounting.html",
        "report/examples.html", "report/config.html", "report/rankings.html",
        "audit/sheet.html",
    }  # fmt: skip
    assert set(by_name) == pages | figures

    # Table 2 in the report: one row per model in registry order, the CSV's numbers.
    table2 = Tables(by_name["tables/table2.html"][1].decode()).tables[0]
    assert [row[0] for row in table2[1:]] == list(models)
    csv = pd.read_csv(flow.path(f"{base}/tables/table2.csv"))
    assert [row[2] for row in table2[1:]] == [f"{v:.2f}" for v in csv["Group MRR@10 ALL"]]
    table3 = Tables(by_name["tables/table3.html"][1].decode()).tables[0]
    assert table3[1][0] == "tiny-st" and len(table3) == 5
    table1 = Tables(by_name["tables/table1.html"][1].decode()).tables[0]
    # the types, then the run's constructions (this corpus: groups of a kind)
    assert [row[0] for row in table1[1:]] == ["ALL", "AND", "OR", "NOT", "ALL kind"]

    # LLM accounting: the total row sums every LLM job's requests.
    jobs = list(flow.path(f"{base}/llm_accounting").glob("*.json"))
    requests = sum(json.loads(p.read_text())["requests"] for p in jobs)
    accounting = Tables(by_name["tables/llm_accounting.html"][1].decode()).tables[0]
    assert len(accounting) == 1 + len(jobs) + 1
    assert accounting[-1][:2] == ["total", f"{requests:,}"]

    for name in figures:
        entry, svg = by_name[name]
        assert ET.fromstring(svg).tag.endswith("svg")
        assert "tiny" in entry["caption"]  # the caption template was rendered
    categories = {entry["job_properties"]["rule"] for entry, _ in results.values()}
    assert categories >= {"figure", "evaluation_tables", "table3", "dataset_statistics"}
    assert "tiny-st" in by_name["report/config.html"][1].decode()

    flow.run("--report", "report.zip")
    with zipfile.ZipFile(flow.path("report.zip")) as archive:
        names = archive.namelist()
    assert "report/report.html" in names
    assert sum(n.startswith("report/data/raw/") for n in names) == len(pages | figures)
