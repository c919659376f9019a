"""A dataset with pooled labels, written here with the dataset schema, through everything that
reads labels: per-query scores under the group and the completed labels, Table 2 and its notes,
the TREC and BEIR qrels (scored by ir_measures and ranx exactly as our metrics), TREC runs of
the kept questions only, the released-layout and BEIR exports read back, and the dataset cards.
"""

import json

import ir_measures
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import ranx
import yaml
from ir_measures import RR, Judged, R, nDCG

from boolbench import labels
from boolbench.baselines.steps import table3_step
from boolbench.config import validate_config
from boolbench.corpus.question_sets import export_released, import_questions
from boolbench.dataset_card import card_settings, card_text
from boolbench.errors import InputError
from boolbench.generation.dataset import DATASET_COLUMNS, DATASET_SCHEMA, beir_export_step
from boolbench.retrieval.evaluation import aggregate, score_model, table2, write_tables
from boolbench.retrieval.runs import rank_hits
from boolbench.retrieval.trec import qrels_step, trec_runs_step
from tests.conftest import tiny_config

MODELS = ("m1", "m2")
PIDS = [f"p{i:02d}" for i in range(60)]


def questions_frame(seed: int = 3) -> pd.DataFrame:
    """Eight questions with four disjoint label lists each; pooled lists empty for some."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, kind in enumerate(["AND", "OR", "NOT", "NOT", "AND", "OR", "NOT", "AND"]):
        picked = [str(p) for p in rng.choice(PIDS, size=12, replace=False)]
        n_pos, n_neg = 1 + i % 2, 1 + i % 3
        n_ppos, n_pneg = (0, 0) if i == 4 else (i % 4, 1 + i % 3)  # at most 3 each
        rows.append(
            {
                "qid": f"{kind.lower()}-{i:05d}",
                "type": kind,
                "question": f"Question {i}?",
                "source": "llm",
                "operator": kind,
                "operand_qids": [],
                "operand_texts": [],
                "positives": picked[:n_pos],
                "negatives": picked[2 : 2 + n_neg],
                "pooled_positives": picked[5 : 5 + n_ppos],
                "pooled_negatives": picked[8 : 8 + n_pneg],
                "group": i,
                "cluster": i,
                "split": "train" if i % 3 == 0 else "test",
                "prompt_hash": "abc",
                "model": "m",
            }
        )
    return pd.DataFrame(rows, columns=DATASET_COLUMNS)


def write_dataset(frame: pd.DataFrame, path) -> None:
    pq.write_table(pa.Table.from_pandas(frame, schema=DATASET_SCHEMA, preserve_index=False), path)


def model_run(qids: list[str], seed: int) -> pd.DataFrame:
    """A run of 30 passages per query with many tied scores, ordered by our tie rule."""
    rng = np.random.default_rng(seed)
    hits = [
        (qid, str(pid), float(rng.integers(0, 6)) / 2)
        for qid in qids
        for pid in rng.choice(PIDS, size=30, replace=False)
    ]
    return rank_hits(pd.DataFrame(hits, columns=["qid", "pid", "score"]), qids, depth=30)


@pytest.fixture
def pooled(tmp_path):
    """boolquestions.parquet with pooled labels, a corpus, runs of two models that also hold
    questions the filter rejected, the original queries' runs and qrels, and every artifact the
    scoring and export steps write from them."""
    questions = questions_frame()
    write_dataset(questions, tmp_path / "boolquestions.parquet")
    pd.DataFrame(
        {
            "pid": PIDS,
            "title": [f"Title {p}" for p in PIDS],
            "text": [f"Text of {p}." for p in PIDS],
            "doc_id": pd.Series([None] * len(PIDS), dtype="string"),
            "position": [0] * len(PIDS),
        }
    ).to_parquet(tmp_path / "corpus.parquet")
    original_qrels = pd.DataFrame(
        {"qid": ["o1", "o1", "o2"], "pid": ["p01", "p02", "p03"], "relevance": [1, 0, 2]}
    )
    original_qrels.to_parquet(tmp_path / "original_qrels.parquet")
    empty = model_run([], 0)
    rejected = ["and-09999", "not-09998"]  # in the runs, not in the dataset
    scores = []
    for i, model in enumerate(MODELS):
        run_path = tmp_path / f"{model}.parquet"
        model_run([*questions["qid"], *rejected], seed=10 + i).to_parquet(run_path)
        model_run(["o1", "o2"], seed=20 + i).to_parquet(tmp_path / f"{model}.original.parquet")
        empty.to_parquet(tmp_path / "document.parquet")
        scores.append(
            score_model(
                model,
                run_path,
                tmp_path / f"{model}.original.parquet",
                questions=pd.read_parquet(tmp_path / "boolquestions.parquet"),
                original_qrels=original_qrels,
                document_run_path=tmp_path / "document.parquet",
                original_document_run_path=tmp_path / "document.parquet",
                corpus_path=tmp_path / "corpus.parquet",
                percents=[10],
                min_document_passages=2,
            )
        )
        trec_runs_step(
            run_path,
            tmp_path / f"{model}.original.parquet",
            tmp_path / "boolquestions.parquet",
            {"run": tmp_path / f"{model}.trec", "original": tmp_path / f"{model}.o.trec"},
            tag=model,
        )
    qrels_step(
        tmp_path / "boolquestions.parquet",
        tmp_path / "original_qrels.parquet",
        {
            key: tmp_path / f"qrels_{key}.txt"
            for key in ("completed", "group", "negatives", "original")
        },
    )
    return tmp_path, questions, pd.concat(scores, ignore_index=True)


def ir_measures_scores(path, qrels_name: str, measure, run_name: str) -> dict[str, float]:
    qrels = list(ir_measures.read_trec_qrels(str(path / qrels_name)))
    run = list(ir_measures.read_trec_run(str(path / run_name)))
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


def ours(scores: pd.DataFrame, model: str, labels_set: str, metric: str) -> pd.Series:
    part = scores[
        (scores["model"] == model)
        & (scores["labels"] == labels_set)
        & (scores["query_set"] == "boolquestions")
    ]
    return part.set_index("qid")[metric]


def test_scores_hold_each_kept_question_once_per_label_set(pooled):
    _, questions, scores = pooled
    bool_scores = scores[scores["query_set"] == "boolquestions"]
    assert set(bool_scores["qid"]) == set(questions["qid"])  # not the rejected questions
    assert bool_scores.groupby(["model", "labels"]).size().eq(len(questions)).all()
    original = scores[scores["query_set"] == "original"].set_index(["model", "labels", "qid"])
    assert original.loc[("m1", "group")].equals(original.loc[("m1", "completed")])


@pytest.mark.parametrize("model", MODELS)
def test_trec_files_score_as_our_metrics_with_ir_measures(pooled, model):
    """ir_measures (pytrec_eval for RR, R, nDCG; its own Judged) on our TREC run and qrels:
    completed labels = trec/qrels.txt, group labels = qrels_group.txt, NegRecall@10 =
    recall@10 on qrels_negatives.txt."""
    path, questions, scores = pooled
    checks = [
        ("completed", "qrels_completed.txt", "MRR@10", RR @ 10),
        ("completed", "qrels_completed.txt", "Recall@100", R @ 100),
        ("completed", "qrels_completed.txt", "nDCG@10", nDCG @ 10),
        ("completed", "qrels_completed.txt", "Judged@10", Judged @ 10),
        ("group", "qrels_group.txt", "MRR@10", RR @ 10),
        ("group", "qrels_group.txt", "nDCG@10", nDCG @ 10),
        ("group", "qrels_group.txt", "Judged@10", Judged @ 10),
        ("completed", "qrels_negatives.txt", "NegRecall@10", R @ 10),
        ("group", "qrels_negatives.txt", "NegRecall@10", R @ 10),
    ]
    for labels_set, qrels_name, metric, measure in checks:
        theirs = ir_measures_scores(path, qrels_name, measure, f"{model}.trec")
        mine = ours(scores, model, labels_set, metric)
        assert set(theirs) == set(mine.dropna().index), (labels_set, metric)
        for qid, value in theirs.items():
            assert mine[qid] == pytest.approx(value, abs=1e-12), (labels_set, metric, qid)
    # The label sets differ where a pooled passage is ranked: the check above is not vacuous.
    completed, group = (ours(scores, model, s, "Judged@10") for s in ("completed", "group"))
    assert (completed > group).any() and (completed >= group).all()


@pytest.mark.parametrize("model", MODELS)
def test_ranx_scores_the_trec_files_and_the_beir_qrels_as_our_completed_metrics(pooled, model):
    path, questions, scores = pooled
    out = beir_files(path)
    beir_export_step(path / "boolquestions.parquet", path / "corpus.parquet", out, card(path))
    beir_rows = [
        line.split("\t")
        for split in ("test", "train")
        for line in out[split].read_text().splitlines()[1:]
    ]
    trec_rows = [line.split() for line in (path / "qrels_completed.txt").read_text().splitlines()]
    assert sorted((q, p, int(s)) for q, p, s in beir_rows) == sorted(
        (q, p, int(s)) for q, _, p, s in trec_rows
    )
    beir_qrels = ranx.Qrels(
        {qid: {p: int(s) for q, p, s in beir_rows if q == qid} for qid in {r[0] for r in beir_rows}}
    )
    run = ranx.Run.from_file(str(path / f"{model}.trec"), kind="trec")  # kept questions only
    for qrels in (ranx.Qrels.from_file(str(path / "qrels_completed.txt"), kind="trec"), beir_qrels):
        values = ranx.evaluate(qrels, run, ["mrr@10", "recall@100", "ndcg@10"], return_mean=False)
        qids = list(qrels.keys())
        for name, metric in (("mrr@10", "MRR@10"), ("recall@100", "Recall@100"),
                             ("ndcg@10", "nDCG@10")):  # fmt: skip
            mine = ours(scores, model, "completed", metric)
            assert dict(zip(qids, values[name], strict=True)) == pytest.approx(
                {q: mine[q] for q in qids}, abs=1e-12
            )


def test_trec_runs_hold_only_the_kept_questions(pooled):
    path, questions, _ = pooled
    written = {line.split()[0] for line in (path / "m1.trec").read_text().splitlines()}
    assert written == set(questions["qid"])
    assert {line.split()[0] for line in (path / "m1.o.trec").read_text().splitlines()} == {
        "o1",
        "o2",
    }


def test_qrels_files_carry_judged_non_relevant_passages(pooled):
    path, questions, _ = pooled
    row = questions.iloc[1]
    completed = (path / "qrels_completed.txt").read_text().splitlines()
    mine = [line for line in completed if line.startswith(f"{row.qid} ")]
    assert mine == [
        *(f"{row.qid} 0 {p} 1" for p in [*row.positives, *row.pooled_positives]),
        *(f"{row.qid} 0 {p} 0" for p in [*row.negatives, *row.pooled_negatives]),
    ]
    group = (path / "qrels_group.txt").read_text().splitlines()
    assert [line for line in group if line.startswith(f"{row.qid} ")] == [
        *(f"{row.qid} 0 {p} 1" for p in row.positives),
        *(f"{row.qid} 0 {p} 0" for p in row.negatives),
    ]
    negatives = (path / "qrels_negatives.txt").read_text().splitlines()
    assert len(negatives) == sum(len(n) for n in questions["negatives"])
    assert all(line.endswith(" 1") for line in negatives)


def test_table2_shows_both_label_sets_side_by_side_with_notes(pooled, tmp_path):
    path, questions, scores = pooled
    metrics = aggregate(scores)
    table = table2(metrics, list(MODELS)).set_index("model")
    picked = metrics.set_index(["model", "query_set", "labels", "split", "type", "metric"])
    for model in MODELS:
        for labels_set, prefix in (("group", "Group"), ("completed", "Completed")):
            for metric in ("MRR@10", "Judged@10"):
                value = picked.loc[(model, "boolquestions", labels_set, "all", "NOT", metric)]
                assert table.loc[model, f"{prefix} {metric} NOT"] == pytest.approx(
                    100 * value["value"]
                )
        assert table.loc[model, "NegRecall@10 ALL"] == pytest.approx(
            100
            * picked.loc[(model, "boolquestions", "completed", "all", "ALL", "NegRecall@10")][
                "value"
            ]
        )
    # By hand: the mean over the questions of our per-question values.
    not_completed = ours(scores, "m1", "completed", "MRR@10")[questions["type"].eq("NOT").values]
    assert table.loc["m1", "Completed MRR@10 NOT"] == pytest.approx(100 * not_completed.mean())
    tests = pd.DataFrame(
        columns=["query_set", "labels", "type", "split", "model_a", "model_b", "mean_a"]
        + ["mean_b", "p_holm"]
    )
    out = {ext: tmp_path / f"table2.{ext}" for ext in ("csv", "md", "tex", "html")}
    write_tables(metrics, list(MODELS), "all", tests, 0.05, questions, out)
    markdown = out["md"].read_text()
    counts = labels.label_counts(questions).iloc[0]
    assert (
        f"Labels of these 8 questions: {counts['positives']} group positives, "
        f"{counts['negatives']} group (construction) negatives, {counts['pooled_positives']} "
        f"pooled positives and {counts['pooled_negatives']} pooled negatives."
    ) in markdown
    assert "Group labels (the paper's protocol): relevant = the group's positives" in markdown
    assert "under the completed labels" in markdown
    header = markdown.splitlines()[0]
    assert header.index("Group MRR@10 ALL") < header.index("Completed MRR@10 ALL")
    assert "Completed Judged@10 NOT" in header
    tex = out["tex"].read_text()
    assert r"{Group Judged@10}" in tex and r"{NegRecall@10 $\downarrow$}" in tex
    assert list(pd.read_csv(out["csv"]).columns[1:]) == [
        "MRR@10 original",
        *(f"{block} {t}" for block in ("Group MRR@10", "Completed MRR@10", "NegRecall@10",
                                       "Group Judged@10", "Completed Judged@10")
          for t in ("ALL", "AND", "OR", "NOT")),
    ]  # fmt: skip


def beir_files(path) -> dict:
    beir = path / "beir"
    return {
        "corpus": beir / "corpus.jsonl",
        "queries": beir / "queries.jsonl",
        "card": beir / "README.md",
        **{
            f"{split}{suffix}": beir / "qrels" / f"{split}{suffix}.tsv"
            for split in ("test", "train")
            for suffix in ("", "_group", "_negatives")
        },
    }


def card(path, pooling: dict | None = None) -> dict:
    config = validate_config(
        tiny_config(corpora={"tiny": {"source": "vital_articles"}}, pooling={"depth": 0})
    )
    settings = card_settings(config, "tiny", imported=False, models=list(MODELS))
    if pooling:
        settings |= {"pooling": pooling, "judge": {"backend": "local", "local_model": "qwen"}}
        settings["pooled_models"] = list(MODELS)
    return settings


def label_lists(frame: pd.DataFrame) -> dict:
    return {
        row.qid: tuple(tuple(getattr(row, c)) for c in labels.LABEL_COLUMNS)
        for row in frame.itertuples()
    }


def test_released_and_beir_exports_read_back_with_their_pooled_labels(pooled):
    path, questions, _ = pooled
    out = beir_files(path)
    beir_export_step(path / "boolquestions.parquet", path / "corpus.parquet", out, card(path))
    from_beir = import_questions(path / "beir", path / "corpus.parquet")
    released = {key: path / "released" / f"{key}.jsonl" for key in ("eval", "corpus")}
    released["card"] = path / "released" / "README.md"
    export_released(path / "boolquestions.parquet", path / "corpus.parquet", released, card(path))
    record = json.loads(released["eval"].read_text().splitlines()[1])
    assert record["pooled_positive_ctxs"] == [
        {"passage_id": p} for p in questions.iloc[1]["pooled_positives"]
    ]
    from_released = import_questions(released["eval"], path / "corpus.parquet")
    from_parquet = import_questions(path / "boolquestions.parquet", path / "corpus.parquet")
    expected = label_lists(questions)
    assert label_lists(from_beir) == expected
    assert label_lists(from_released) == expected
    assert label_lists(from_parquet) == expected
    assert from_released["split"].tolist() == questions["split"].tolist()


def test_an_old_beir_export_without_group_files_reads_as_group_labels(pooled):
    """Before pooling, qrels/{split}.tsv held the positives only and there were no _group
    files: such a folder still reads, with no pooled label."""
    path, questions, _ = pooled
    out = beir_files(path)
    beir_export_step(path / "boolquestions.parquet", path / "corpus.parquet", out, card(path))
    for split in ("test", "train"):
        out[f"{split}_group"].replace(out[split])  # the group qrels, under the old name
    back = import_questions(path / "beir", path / "corpus.parquet").set_index("qid")
    for row in questions.itertuples():
        assert back.loc[row.qid, "positives"] == list(row.positives)
        assert back.loc[row.qid, "negatives"] == list(row.negatives)
        # the old export's rows at 0 did not exist; here they are the negatives themselves
        assert back.loc[row.qid, "pooled_positives"] == []
        assert back.loc[row.qid, "pooled_negatives"] == []


def test_a_passage_with_two_labels_is_refused_on_import(pooled):
    path, questions, _ = pooled
    bad = questions.copy()
    bad.at[2, "pooled_negatives"] = [*bad.at[2, "pooled_negatives"], bad.at[2, "positives"][0]]
    write_dataset(bad, path / "bad.parquet")
    with pytest.raises(InputError, match=r"row 3: question not-00002: passage 'p\d+' is in both"):
        import_questions(path / "bad.parquet", path / "corpus.parquet")


def test_a_file_without_pooled_columns_reads_as_empty_pooled_lists(pooled):
    path, questions, _ = pooled
    old = questions.drop(columns=list(labels.POOLED_COLUMNS))
    old.to_parquet(path / "old.parquet")
    back = import_questions(path / "old.parquet", path / "corpus.parquet")
    assert back["pooled_positives"].map(len).eq(0).all()
    assert back["pooled_negatives"].map(len).eq(0).all()
    gains = labels.gains(old, "completed")
    assert gains == labels.gains(old, "group")


def test_the_dataset_cards_say_template_construction_counts_and_config(pooled):
    path, questions, _ = pooled
    out = beir_files(path)
    settings = card(path, pooling={"depth": 10})
    beir_export_step(path / "boolquestions.parquet", path / "corpus.parquet", out, settings)
    text = out["card"].read_text()
    head, body = text.removeprefix("---\n").split("\n---\n", 1)
    meta = yaml.safe_load(head)
    assert meta["license"] == "cc-by-sa-4.0" and meta["task_categories"] == ["text-retrieval"]
    assert {c["config_name"] for c in meta["configs"]} == {
        "default", "group", "negatives", "corpus", "queries"
    }  # fmt: skip
    assert {"split": "test", "path": "qrels/test.tsv"} in meta["configs"][0]["data_files"]
    assert "every retriever reading a passage as `{text}` (`corpora.tiny.passage_template`" in body
    counts = labels.label_counts(questions).set_index("type")
    row = counts.loc["NOT"]
    train = int(((questions["type"] == "NOT") & (questions["split"] == "train")).sum())
    assert (
        f"| NOT | {row['questions']} | {train} | {row['questions'] - train} | "
        f"{row['positives']} | {row['negatives']} | {row['pooled_positives']} | "
        f"{row['pooled_negatives']} |"
    ) in body
    assert "the union of the top 10 of each of the models `m1`, `m2`" in body
    assert "judged by the embedded qwen (llama.cpp)" in body
    config = yaml.safe_load(body.split("```yaml\n", 1)[1].split("```", 1)[0])
    assert config["corpora"]["tiny"]["passage_template"] == "{text}"
    assert config["corpora"]["tiny"]["candidates"] == {
        "n_groups": 4,
        "sizes": [2, 3],
        "draw": "random",
        "skip_loosest": 0,
    }
    assert config["filter"]["mode"] and config["evaluation"] == {"depth": 100}
    assert "shards" not in config["llm"] and "cache_dir" not in config["llm"]
    # The released card names the hub's configs: <corpus> (split eval) and <corpus>-corpus.
    released = card_text(questions, "released", card(path), passages=60)
    meta = yaml.safe_load(released.removeprefix("---\n").split("\n---\n", 1)[0])
    assert [c["config_name"] for c in meta["configs"]] == ["tiny", "tiny-corpus"]
    assert "no pooling was configured" in released
    assert "`pooled_positive_ctxs`" in released


def test_gains_and_judgements_follow_the_label_set():
    frame = pd.DataFrame(
        {
            "qid": ["q"],
            "positives": [["a"]],
            "negatives": [["b"]],
            "pooled_positives": [["c"]],
            "pooled_negatives": [["d"]],
        }
    )
    assert labels.gains(frame, "group") == {"q": {"a": 1.0, "b": 0.0}}
    assert labels.gains(frame, "completed") == {"q": {"a": 1.0, "c": 1.0, "b": 0.0, "d": 0.0}}
    assert list(labels.judgements(frame, "completed")) == [
        ("q", "a", 1), ("q", "c", 1), ("q", "b", 0), ("q", "d", 0)
    ]  # fmt: skip
    assert list(labels.negative_judgements(frame)) == [("q", "b", 1)]
    assert labels.overlap({"positives": ["a"], "pooled_negatives": ["a"]}) == (
        "passage 'a' is in both positives and pooled_negatives"
    )


def test_table3_scores_every_row_under_the_completed_labels(pooled):
    """The base row is the retriever's completed-label scores, a baseline run is scored
    against the completed labels too (here m2's run stands in for the decomposition), with
    Judged@10, and the notes say so."""
    path, questions, scores = pooled
    scores[scores["model"] == "m1"].to_parquet(path / "scores_m1.parquet")
    pd.DataFrame({"qid": questions["qid"], "status": "ok"}).to_parquet(path / "decomposed.parquet")
    out = {ext: path / f"table3.{ext}" for ext in ("csv", "md", "tex", "html")}
    table3_step(
        "m1", path / "scores_m1.parquet", {"Decomposed query": path / "m2.parquet"}, {},
        path / "boolquestions.parquet", path / "decomposed.parquet", "all", out,
    )  # fmt: skip
    table = pd.read_csv(out["csv"]).set_index("model")
    assert list(table.columns) == [
        f"{block} {t}"
        for block in ("Completed MRR@10", "NegRecall@10", "Completed Judged@10")
        for t in ("ALL", "AND", "OR", "NOT")
    ]
    expected = table2(aggregate(scores), list(MODELS)).set_index("model").round(4)
    for row, model in (("m1", "m1"), ("Decomposed query", "m2")):
        for column in table.columns:
            assert table.loc[row, column] == pytest.approx(expected.loc[model, column], abs=1e-4)
    markdown = out["md"].read_text()
    assert "Scored under the completed labels" in markdown and "pooled positives" in markdown
