"""The real workflow on questions in the released BoolQuestions layout (built here with
`datasets`, as the hub's files are): no generation job, the paper's model kinds (a two-tower
model, a decoder stand-in with trust_remote_code, model_kwargs and a query prompt, bm25 and a
cross-encoder), the NQ passage template, Tables 1-3, provenance, TREC files and the export in
the released layout. Decomposition answers come from the scripted fake LLM server."""

import json

import ir_measures
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from ir_measures import RR, Judged, R, nDCG

from boolbench.constants import CLUSTERING_ENCODER
from boolbench.corpus.question_sets import import_questions
from boolbench.generation.dataset import DATASET_SCHEMA
from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.paths import artifact
from boolbench.retrieval.provenance import read_provenance
from tests.conftest import Workflow, parse_job_stats
from tests.released_layout import (
    released_corpus,
    released_questions,
    wikipedia_articles,
    write_with_datasets,
)
from tests.scripted_llm import respond, scripted_config
from tests.tiny_models import tiny_cross_encoder, tiny_decoder_embedder, tiny_two_tower

pytestmark = pytest.mark.workflow  # runs the real Snakefile

TEMPLATE = "{title} [SEP] {text}"
# Rules of the generation pipeline: none may be planned for a corpus with `questions:` (nor
# the clustering encoder's encoding, by the same rules as the models').
GENERATION_RULES = {
    "reduce", "cluster", "assign_clusters",
    "group_by_document", "sample_candidates", "atomic_questions", "gather_atomic_questions",
    "compose_questions", "gather_composed_questions", "written_questions", "judge_questions",
    "gather_answers", "assemble_dataset", "dataset_statistics", "example_questions",
}  # fmt: skip


def registry(models_dir):
    question, context = tiny_two_tower(models_dir)
    return {
        "dpr": {
            "kind": "sentence-transformers",
            "model": str(context),
            "query_model": str(question),
            "normalize": False,
            "similarity": "dot",
            "shards": 1,
        },
        "gte": {
            "kind": "sentence-transformers",
            "model": str(tiny_decoder_embedder(models_dir)),
            "trust_remote_code": True,
            "model_kwargs": {"torch_dtype": "float32"},
            "query_prompt_name": "query",
            "shards": 1,
        },
        "bm25": {"kind": "bm25"},
        "ce": {
            "kind": "cross-encoder",
            "model": str(tiny_cross_encoder(models_dir)),
            "rerank": "bm25",
            "depth": 20,
        },
    }


def pooled_labels(records: list[dict], pids: list[str]) -> tuple[list, list]:
    """Pooled positives and negatives for each record: passages outside its group labels (one
    pooled positive for three questions of four, two pooled negatives each)."""
    positives, negatives = [], []
    for i, r in enumerate(records):
        labelled = {c["passage_id"] for c in r["positive_ctxs"] + r["negative_ctxs"]}
        free = [p for p in pids[5 * i :] + pids[: 5 * i] if p not in labelled]
        positives.append(free[:1] if i % 4 else [])
        negatives.append(free[1:3])
    return positives, negatives


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The released files (corpus.jsonl, eval.jsonl) and another run's dataset (with a train
    split, recorded expressions and pooled labels) over the same corpus."""
    folder = tmp_path_factory.mktemp("released-data")
    articles = wikipedia_articles(60)
    records = released_questions(articles, 12, seed=5)
    write_with_datasets(released_corpus(articles), folder / "corpus.jsonl")
    write_with_datasets(released_corpus(articles), folder / "corpus.parquet")
    write_with_datasets(records, folder / "eval.jsonl")
    frame = pd.DataFrame(
        {
            "qid": [r["qid"] for r in records],
            "type": [r["question_type"].upper() for r in records],
            "question": [r["question"] for r in records],
            "source": "llm",
            "operator": [r["question_type"].upper() for r in records],
            "operand_qids": [["a", "b"]] * len(records),
            "operand_texts": [r["question"].rstrip("?").split(" but not ")[:2] for r in records],
            "positives": [[c["passage_id"] for c in r["positive_ctxs"]] for r in records],
            "negatives": [[c["passage_id"] for c in r["negative_ctxs"]] for r in records],
            "pooled_positives": pooled_labels(records, list(articles["pid"]))[0],
            "pooled_negatives": pooled_labels(records, list(articles["pid"]))[1],
            "group": range(len(records)),
            "cluster": 0,
            "split": ["train", "test"] * (len(records) // 2),
            "prompt_hash": None,
            "model": None,
        }
    )
    dataset = folder / "boolquestions.parquet"
    pq.write_table(
        pa.Table.from_pandas(frame, schema=DATASET_SCHEMA, preserve_index=False), dataset
    )
    return {"folder": folder, "records": records, "dataset": dataset}


def corpora(data, with_rerun: bool = False):
    folder = data["folder"]
    entries = {
        "released": {
            "source": "boolquestions",
            "path": str(folder / "corpus.jsonl"),
            "questions": str(folder / "eval.jsonl"),
            "passage_template": TEMPLATE,
        }
    }
    if with_rerun:
        entries["rerun"] = {
            "source": "boolquestions",
            "path": str(folder / "corpus.parquet"),
            "questions": str(data["dataset"]),
            "models": ["gte", "bm25"],
        }
    return entries


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory, data):
    models = registry(tmp_path_factory.mktemp("models"))
    with FakeOpenAIServer(responder=respond) as server:
        flow = Workflow(tmp_path_factory.mktemp("released-run"))

        def config(with_rerun: bool = False):
            return scripted_config(
                server,
                corpora=corpora(data, with_rerun),
                models=models,
                baselines={
                    "retriever": "gte",
                    "split": "all",
                    "train_on": ["not"],
                    "training": {"max_steps": 2, "batch_size": 4},
                },
            )

        flow.write_config(config())
        flow.run()
        yield flow, config, models


def test_a_fresh_corpus_with_questions_plans_no_generation_job(evaluated, tmp_path):
    _, config, _ = evaluated
    fresh = Workflow(tmp_path)
    fresh.write_config(config(with_rerun=True))
    # The example: one model's original-query run needs ingestion and its own jobs.
    assert fresh.planned_jobs("results/released/runs/original/bm25.parquet") == {
        "ingest": 1,
        "import_questions": 1,
        "build_bm25_index": 1,
        "search": 1,
    }
    dry_run = fresh.run("--dry-run")
    jobs = parse_job_stats(dry_run.stdout + dry_run.stderr)
    assert not GENERATION_RULES & set(jobs), GENERATION_RULES & set(jobs)
    assert CLUSTERING_ENCODER not in dry_run.stdout + dry_run.stderr
    assert jobs["import_questions"] == 2 and jobs["question_statistics"] == 2
    # The decomposition (the configured LLM) for both; the oracle only for the run's dataset
    # (recorded expressions); contrastive training only where there is a train split.
    assert jobs["decompose_questions"] == 2
    assert jobs["boolean_operation_run"] == 3
    assert jobs["train_contrastive"] == 1
    # per-corpus models: released 4 (ce re-ranks), rerun gte and bm25 (+ contrastive-not)
    assert jobs["search"] == 3 + 3 and jobs["rerank"] == 1
    assert jobs["trec_runs"] == 4 + 2


def test_metrics_equal_an_independent_computation_on_the_trec_files(evaluated, data):
    """MRR@10 and NegRecall@10 per type, from the released eval file read as plain JSON and the
    TREC runs read by ir_measures (its default providers), equal metrics.parquet."""
    flow, _, models = evaluated
    records = [
        json.loads(line) for line in (data["folder"] / "eval.jsonl").read_text().splitlines()
    ]
    metrics = pd.read_parquet(flow.path(artifact("metrics", corpus="released")))
    # The hub's files carry no pooled label: the completed labels are the group labels.
    picked = metrics[(metrics.split == "all") & (metrics.labels == "completed")]
    group = metrics[(metrics.split == "all") & (metrics.labels == "group")]
    assert picked["value"].fillna(-1).tolist() == group["value"].fillna(-1).tolist()
    picked = picked.set_index(["model", "type", "metric"])["value"]
    for model in models:
        run = list(ir_measures.read_trec_run(str(flow.path(f"results/released/runs/{model}.trec"))))
        for kind in ("ALL", "AND", "OR", "NOT"):
            wanted = [r for r in records if kind in ("ALL", r["question_type"].upper())]
            positives = [
                ir_measures.Qrel(r["qid"], c["passage_id"], 1)
                for r in wanted
                for c in r["positive_ctxs"]
            ]
            negatives = [
                ir_measures.Qrel(r["qid"], c["passage_id"], 1)
                for r in wanted
                for c in r["negative_ctxs"]
            ]
            qids = {r["qid"] for r in wanted}
            rr = {m.query_id: m.value for m in ir_measures.iter_calc([RR @ 10], positives, run)}
            mrr = sum(rr.get(q, 0.0) for q in qids) / len(qids)
            assert picked[(model, kind, "MRR@10")] == pytest.approx(mrr, abs=1e-12)
            neg = [m.value for m in ir_measures.iter_calc([R @ 10], negatives, run)]
            assert picked[(model, kind, "NegRecall@10")] == pytest.approx(np.mean(neg), abs=1e-12)


def test_table2_rows_columns_and_table1(evaluated):
    flow, _, models = evaluated
    table = pd.read_csv(flow.path(artifact("table2_csv", corpus="released")))
    assert table["model"].tolist() == list(models)
    assert list(table.columns[1:]) == [
        "MRR@10 original",
        *[
            f"{block} {t}"
            for block in ("Group MRR@10", "Completed MRR@10", "NegRecall@10", "Group Judged@10")
            + ("Completed Judged@10",)
            for t in ("ALL", "AND", "OR", "NOT")
        ],
    ]
    assert table["MRR@10 original"].isna().all()  # the released files have no original queries
    assert table["Completed MRR@10 ALL"].notna().all()
    table1 = pd.read_csv(flow.path(artifact("table1_csv", corpus="released"))).set_index("type")
    assert table1.loc["ALL", "questions"] == 12 and table1.loc["ALL", "test"] == 12


def test_template_and_two_towers_reach_the_vectors(evaluated):
    from sentence_transformers import SentenceTransformer

    flow, _, models = evaluated
    corpus = pd.read_parquet(flow.path(artifact("corpus", corpus="released")))
    rendered = [f"{t} [SEP] {x}" for t, x in zip(corpus.title, corpus.text, strict=True)]
    vectors = np.load(flow.path("results/released/models/dpr/embeddings.npy"))
    expected = SentenceTransformer(models["dpr"]["model"]).encode(rendered)
    assert np.allclose(vectors, expected, atol=1e-5)


def test_provenance_in_runs_scores_metrics_and_the_report_table(evaluated):
    flow, _, models = evaluated
    base = flow.path("results/released")
    for model in models:
        run = read_provenance(base / f"runs/{model}.parquet")
        assert run == read_provenance(base / f"scores/{model}.parquet")
        assert run["passage_template"] == TEMPLATE and run["name"] == model
        assert run["libraries"]["boolbench"]
    dpr = read_provenance(base / "runs/dpr.parquet")
    assert dpr["query_model"] == models["dpr"]["query_model"]
    gte = read_provenance(base / "runs/gte.parquet")
    assert gte["trust_remote_code"] is True and gte["query_prompt_name"] == "query"
    assert gte["model_kwargs"] == {"torch_dtype": "float32"}
    assert read_provenance(base / "runs/ce.parquet")["rerank"] == "bm25"
    assert set(read_provenance(base / "metrics.parquet")) == set(models)
    table = (base / "tables/provenance.md").read_text()
    assert all(f"| {m} |" in table for m in models) and "'{title} [SEP] {text}'" in table


def test_table3_says_which_rows_the_released_questions_cannot_give(evaluated):
    flow, _, _ = evaluated
    table = pd.read_csv(flow.path(artifact("table3_csv", corpus="released")))
    assert table["model"].tolist() == [
        "gte",
        "Decomposed query",
        "Oracle decomposition",
        "Boolean contrastive (NOT)",
    ]
    assert table.iloc[2:, 1:].isna().all().all() and table.iloc[:2, 1:].notna().all().all()
    markdown = flow.path(artifact("table3_md", corpus="released")).read_text()
    assert "Oracle decomposition: not computed: the questions carry no recorded" in markdown
    assert "Boolean contrastive (NOT): not computed: the questions have no train split" in markdown
    accounting = pd.read_csv(flow.path(artifact("llm_accounting_csv", corpus="released")))
    assert accounting["step"].tolist() == ["decompose", "total"]


def test_trec_qrels_and_the_released_export_match_the_input(evaluated, data):
    flow, _, _ = evaluated
    base = flow.path("results/released")
    # imported questions are exported only when asked for (the export copies the corpus)
    assert not (base / "released").exists()
    flow.run(artifact("released_eval", corpus="released"))
    records = data["records"]
    qrels = (base / "trec/qrels.txt").read_text().split("\n")
    assert qrels[:-1] == [
        line
        for r in records
        for line in [
            *(f"{r['qid']} 0 {c['passage_id']} 1" for c in r["positive_ctxs"]),
            *(f"{r['qid']} 0 {c['passage_id']} 0" for c in r["negative_ctxs"]),
        ]
    ]
    assert (base / "trec/qrels_group.txt").read_text() == (base / "trec/qrels.txt").read_text()
    negatives = (base / "trec/qrels_negatives.txt").read_text().splitlines()
    assert len(negatives) == sum(len(r["negative_ctxs"]) for r in records)
    back = import_questions(base / "released/eval.jsonl", base / "corpus.parquet")
    original = import_questions(data["folder"] / "eval.jsonl", base / "corpus.parquet")
    assert back.drop(columns="source").equals(original.drop(columns="source"))
    corpus_lines = (base / "released/corpus.jsonl").read_text().splitlines()
    assert [json.loads(line) for line in corpus_lines] == released_corpus(wikipedia_articles(60))


def test_a_passage_missing_from_the_corpus_stops_the_import_with_one_line(evaluated, tmp_path):
    _, config, _ = evaluated
    eval_file = tmp_path / "eval.jsonl"
    record = {
        "qid": "q1",
        "question": "What is missing?",
        "question_type": "not",
        "positive_ctxs": [{"passage_id": "Not_an_article"}],
        "negative_ctxs": [],
    }
    eval_file.write_text(json.dumps(record) + "\n")
    flow = Workflow(tmp_path / "run")
    flow.workdir.mkdir()
    settings = config()
    settings["corpora"]["released"]["questions"] = str(eval_file)
    settings["models"] = {"bm25": {"kind": "bm25"}}
    settings["baselines"] = {"retriever": "bm25", "train_on": []}
    flow.write_config(settings)
    result = flow.run(artifact("dataset", corpus="released"), check=False)
    assert result.returncode != 0
    assert (
        f"boolbench: rule import_questions failed: {eval_file}: 1 labelled passage id(s) are not "
        "in the corpus ('Not_an_article'; the first in question q1, line 1)"
    ) in result.stderr
    assert not flow.path(artifact("dataset", corpus="released")).exists()


@pytest.fixture(scope="module")
def as_written(tmp_path_factory, data):
    """The issue's config, run to the end: a corpus with `questions:` (another run's dataset,
    every question in the train split) and one BM25 model, no baselines key; Tables 2 and 3
    on the test split, which has no question."""
    folder = tmp_path_factory.mktemp("as-written")
    frame = pd.read_parquet(data["dataset"]).assign(split="train")
    all_train = folder / "all_train.parquet"
    pq.write_table(
        pa.Table.from_pandas(frame, schema=DATASET_SCHEMA, preserve_index=False), all_train
    )
    with FakeOpenAIServer(responder=respond) as server:
        config = scripted_config(
            server,
            corpora={
                "given": {
                    "source": "boolquestions",
                    "path": str(data["folder"] / "corpus.jsonl"),
                    "questions": str(all_train),
                }
            },
            models={"bm25": {"kind": "bm25"}},
            evaluation={"table_split": "test"},
        )
        for key in ("retriever", "train_on"):  # the tiny config's; this one sets neither
            del config["baselines"][key]
        flow = Workflow(folder / "run")
        flow.workdir.mkdir()
        flow.write_config(config)
        yield flow, flow.run(check=False)


def test_a_corpus_with_questions_and_its_models_runs_as_written(as_written):
    """No baselines key: BM25 is the baselines' retriever, and the contrastive row is skipped
    with one line in Table 3 and in its log."""
    flow, result = as_written
    assert result.returncode == 0, result.stderr[-3000:]
    table = pd.read_csv(flow.path(artifact("table3_csv", corpus="given")))
    assert table["model"].tolist() == [
        "bm25",
        "Decomposed query",
        "Oracle decomposition",
        "Boolean contrastive (all)",
    ]
    line = (
        "Boolean contrastive (all): not computed: contrastive training needs a "
        "sentence-transformers retriever, and 'bm25' is bm25."
    )
    assert line in flow.path(artifact("table3_md", corpus="given")).read_text()
    assert line in flow.path("logs/given/table3.log").read_text()
    assert not flow.path("results/given/models/contrastive-all").exists()


def test_an_empty_test_split_gives_tables_and_figures_that_say_so(as_written):
    flow, _ = as_written
    base = flow.path("results/given")
    assert pd.read_csv(base / "tables/table3.csv").iloc[:, 1:].isna().all().all()
    assert (
        "No question is in the test split (baselines.split), so the question columns are empty."
        in (base / "tables/table3.md").read_text()
    )
    table2 = (base / "tables/table2.md").read_text()
    assert "ALL 0 (0 with negatives)" in table2
    assert "No question is in the test split (evaluation.table_split)" in table2
    assert "No question in the test split" in (base / "figures/mrr_by_type.svg").read_text()
    assert "for 12 of 12 questions" in (base / "report/rankings.html").read_text()


def test_pooled_labels_of_a_given_dataset_reach_scores_trec_files_and_exports(as_written, data):
    """Another run's dataset with pooled labels, run as written: the completed labels score
    differently from the group labels, the workflow's TREC files score as scores/bm25.parquet
    under each (ir_measures), and the released export, asked for, carries the pooled labels
    back and a card that counts them."""
    flow, result = as_written
    assert result.returncode == 0, result.stderr[-3000:]
    base = flow.path("results/given")
    dataset = pd.read_parquet(data["dataset"])
    scores = pd.read_parquet(base / "scores/bm25.parquet")
    scores = scores[scores.query_set == "boolquestions"].set_index(["labels", "qid"])
    columns = ["MRR@10", "Recall@100", "nDCG@10", "Judged@10"]
    assert not scores.loc["group", columns].equals(scores.loc["completed", columns])
    run = list(ir_measures.read_trec_run(str(base / "runs/bm25.trec")))
    for labels, name in (("completed", "qrels.txt"), ("group", "qrels_group.txt")):
        qrels = list(ir_measures.read_trec_qrels(str(base / "trec" / name)))
        measures = [RR @ 10, R @ 100, nDCG @ 10, Judged @ 10]
        for value in ir_measures.iter_calc(measures, qrels, run):
            column = {"RR@10": "MRR@10", "R@100": "Recall@100"}.get(str(value.measure))
            column = column or str(value.measure)
            assert scores.loc[(labels, value.query_id), column] == pytest.approx(value.value)
    completed = (base / "trec/qrels.txt").read_text().splitlines()
    lists = ("positives", "negatives", "pooled_positives", "pooled_negatives")
    assert len(completed) == sum(dataset[c].map(len).sum() for c in lists)

    flow.run(artifact("released_eval", corpus="given"))
    back = import_questions(base / "released/eval.jsonl", base / "corpus.parquet")
    for column in ("positives", "negatives", "pooled_positives", "pooled_negatives"):
        assert back[column].map(list).tolist() == dataset[column].map(list).tolist()
    card = (base / "released/README.md").read_text()
    n_pooled = sum(len(p) for p in dataset.pooled_positives)
    assert f"| {n_pooled} | {sum(len(n) for n in dataset.pooled_negatives)} |" in card
    assert "The questions were imported from" in card
