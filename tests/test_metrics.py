"""Metrics against hand-computed values and against ir_measures (pytrec_eval) on the same runs."""

import math

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import RR, Judged, R, nDCG

from boolbench.retrieval.evaluation import aggregate
from boolbench.retrieval.metrics import (
    document_cutoff,
    document_recall_name,
    is_document_recall,
    per_query,
    per_query_document_recall,
)
from boolbench.retrieval.runs import rank_hits


def run_of(ranked: dict[str, list[str]]) -> pd.DataFrame:
    rows = [
        (qid, pid, rank, float(-rank))
        for qid, pids in ranked.items()
        for rank, pid in enumerate(pids, 1)
    ]
    return pd.DataFrame(rows, columns=["qid", "pid", "rank", "score"])


def test_hand_computed_values():
    run = run_of({"q1": ["a", "b", "c", "d"], "q2": ["x", "y"], "q3": ["n1", "p"]})
    positives = {"q1": {"c": 1.0, "z": 1.0}, "q2": {"y": 1.0}, "q3": {"p": 1.0}, "q4": {"p": 1.0}}
    negatives = {"q1": {"a", "zz"}, "q3": {"n1"}}
    scores = per_query(run, positives, negatives).set_index("qid")
    assert scores.loc["q1", "MRR@10"] == pytest.approx(1 / 3)
    assert scores.loc["q1", "NegRecall@10"] == pytest.approx(0.5)  # a found, zz not
    assert scores.loc["q1", "Recall@100"] == pytest.approx(0.5)
    ideal = 1 + 1 / math.log2(3)
    assert scores.loc["q1", "nDCG@10"] == pytest.approx((1 / math.log2(4)) / ideal)
    assert scores.loc["q2", "MRR@10"] == pytest.approx(0.5)
    assert math.isnan(scores.loc["q2", "NegRecall@10"])  # no negatives: undefined
    assert scores.loc["q3", "NegRecall@10"] == 1.0
    assert scores.loc["q4", "MRR@10"] == 0.0  # not in the run: nothing retrieved
    # Judged@10: c of a, b, c, d is judged (z and zz are not retrieved; negatives are not
    # judged unless they are in the gains); q2 retrieved 2, y judged; q4 retrieved nothing.
    assert scores.loc["q1", "Judged@10"] == pytest.approx(1 / 4)
    assert scores.loc["q2", "Judged@10"] == pytest.approx(1 / 2)
    assert math.isnan(scores.loc["q4", "Judged@10"])


def test_a_passage_judged_not_relevant_counts_as_judged_only():
    """Gain 0 (a negative or pooled negative in the qrels): judged, never relevant."""
    run = run_of({"q": ["n", "p", "x", "m"]})
    gains = {"q": {"n": 0.0, "p": 1.0, "m": 0.0}}
    scores = per_query(run, gains, {"q": {"n"}}).set_index("qid")
    assert scores.loc["q", "MRR@10"] == 0.5 and scores.loc["q", "Recall@100"] == 1.0
    assert scores.loc["q", "nDCG@10"] == pytest.approx(1 / math.log2(3))
    assert scores.loc["q", "Judged@10"] == 0.75 and scores.loc["q", "NegRecall@10"] == 1.0


def test_mrr_counts_only_the_top_ten():
    pids = [f"n{i}" for i in range(10)] + ["p"]
    scores = per_query(run_of({"q": pids}), {"q": {"p": 1.0}})
    assert scores.loc[0, "MRR@10"] == 0.0
    assert scores.loc[0, "Recall@100"] == 1.0


def test_tie_rule_is_score_then_pid_descending():
    hits = pd.DataFrame(
        {
            "qid": ["q", "q", "q", "q", "r"],
            "pid": ["b", "c", "a", "d", "a"],
            "score": [1.0, 2.0, 1.0, 1.0, 0.5],
        }
    )
    run = rank_hits(hits, ["r", "q"], depth=3)
    assert run["qid"].tolist() == ["r", "q", "q", "q"]  # queries in the given order
    assert run["pid"].tolist() == ["a", "c", "d", "b"]  # ties by pid descending, depth 3
    assert run["rank"].tolist() == [1, 1, 2, 3]


def random_case(seed: int, n_queries: int = 60, n_docs: int = 150):
    """Runs with many tied scores, and positives/negatives drawn from the same documents."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i:03d}" for i in range(n_docs)]
    rows, positives, negatives = [], {}, {}
    for q in range(n_queries):
        qid = f"q{q}"
        retrieved = rng.choice(docs, size=rng.integers(5, 120), replace=False)
        scores = rng.integers(0, 8, size=len(retrieved)) / 4  # coarse scores: many ties
        rows += [(qid, d, s) for d, s in zip(retrieved, scores, strict=True)]
        labelled = rng.choice(docs, size=9, replace=False)
        positives[qid] = {d: float(rng.integers(1, 3)) for d in labelled[: rng.integers(1, 4)]}
        negatives[qid] = set(labelled[4 : 4 + rng.integers(0, 3)])
        # judged not relevant (gain 0): the negatives and a few other passages
        positives[qid] |= dict.fromkeys([*negatives[qid], *labelled[6 : 6 + q % 3]], 0.0)
    hits = pd.DataFrame(rows, columns=["qid", "pid", "score"])
    return hits, positives, negatives


def qrels_frame(gains: dict) -> pd.DataFrame:
    return pd.DataFrame(
        [(q, d, int(g)) for q, docs in gains.items() for d, g in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )


def ir(run: pd.DataFrame) -> pd.DataFrame:
    return run.rename(columns={"qid": "query_id", "pid": "doc_id"})[["query_id", "doc_id", "score"]]


def ir_measures_values(run: pd.DataFrame, gains: dict, measure) -> dict[str, float]:
    """Per-query values from ir_measures' pytrec_eval provider (trec_eval's own code)."""
    provider = ir_measures.pytrec_eval
    return {m.query_id: m.value for m in provider.iter_calc([measure], qrels_frame(gains), ir(run))}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_metrics_equal_ir_measures_on_runs_with_ties(seed):
    hits, positives, negatives = random_case(seed)
    run = rank_hits(hits, sorted(set(hits["qid"])), depth=100)
    ours = per_query(run, positives, negatives).set_index("qid")
    negative_gains = {q: dict.fromkeys(n, 1) for q, n in negatives.items() if n}
    # trec_eval has no cutoff for RR: RR@10 is its RR over the run's top 10.
    top10 = run[run["rank"] <= 10]
    checks = [
        ("MRR@10", RR, positives, top10),
        ("Recall@100", R @ 100, positives, run),
        ("nDCG@10", nDCG @ 10, positives, run),
        ("NegRecall@10", R @ 10, negative_gains, run),
    ]
    for column, measure, gains, their_run in checks:
        theirs = ir_measures_values(their_run, gains, measure)
        assert set(theirs) == set(ours[column].dropna().index), column
        for qid, value in theirs.items():
            assert abs(ours.loc[qid, column] - value) < 1e-9, (column, qid)
    # Judged@10: ir_measures' own provider (pytrec_eval has none), which orders ties by doc id
    # ascending, so it reads scores that follow our rank column.
    # More passages judged not relevant (a fifth of the documents) make the values vary.
    rng = np.random.default_rng(seed)
    docs = sorted(set(hits["pid"]))
    dense = {q: dict.fromkeys(rng.choice(docs, 30), 0.0) | g for q, g in positives.items()}
    judged_ours = per_query(run, dense).set_index("qid")["Judged@10"]
    ranked = run.assign(score=-run["rank"].astype(float))
    judged = {
        m.query_id: m.value
        for m in ir_measures.judged.iter_calc([Judged @ 10], qrels_frame(dense), ir(ranked))
    }
    assert set(judged) == set(judged_ours.dropna().index)
    for qid, value in judged.items():
        assert abs(judged_ours[qid] - value) < 1e-12, qid
    assert judged_ours.nunique() >= 4  # not all equal: the comparison means something
    # The ties matter: ordering them the other way changes some values.
    flipped = hits.assign(pid_key=hits["pid"]).sort_values(
        ["qid", "score", "pid_key"], ascending=[True, False, True]
    )
    flipped["rank"] = flipped.groupby("qid").cumcount() + 1
    other = per_query(flipped[flipped["rank"] <= 100], positives, negatives).set_index("qid")
    assert not np.allclose(other["MRR@10"], ours["MRR@10"])


def test_aggregate_pools_all_questions_and_counts_negatives():
    scores = pd.DataFrame(
        {
            "model": "m",
            "query_set": "boolquestions",
            "labels": "completed",
            "qid": ["a1", "a2", "a3", "o1", "n1"],
            "type": ["AND", "AND", "AND", "OR", "NOT"],
            "split": ["test", "test", "train", "test", "test"],
            "MRR@10": [1.0, 1.0, 1.0, 0.0, 0.0],
            "NegRecall@10": [np.nan, 0.5, np.nan, np.nan, 1.0],
            "Recall@100": [1.0] * 5,
            "nDCG@10": [1.0] * 5,
            "Judged@10": [0.1, 0.2, 0.3, np.nan, 0.4],
        }
    )
    group = scores.assign(labels="group", **{"MRR@10": 0.0})
    both = aggregate(pd.concat([scores, group], ignore_index=True))
    assert (
        both.set_index(["labels", "split", "type", "metric"]).loc[
            ("group", "all", "ALL", "MRR@10"), "value"
        ]
        == 0.0
    )  # each label set is averaged on its own
    metrics = both[both["labels"] == "completed"].set_index(["split", "type", "metric"])
    assert metrics.loc[("all", "ALL", "Judged@10"), "value"] == pytest.approx(0.25)
    assert metrics.loc[("all", "ALL", "Judged@10"), "n_queries"] == 4
    # Pooled: 3/5, not the mean of the type means (1 + 0 + 0) / 3.
    assert metrics.loc[("all", "ALL", "MRR@10"), "value"] == pytest.approx(0.6)
    assert metrics.loc[("all", "ALL", "NegRecall@10"), "value"] == pytest.approx(0.75)
    assert metrics.loc[("all", "ALL", "NegRecall@10"), "n_queries"] == 2
    assert metrics.loc[("test", "AND", "MRR@10"), "n_queries"] == 2
    assert math.isnan(metrics.loc[("all", "OR", "NegRecall@10"), "value"])
    assert metrics.loc[("all", "OR", "NegRecall@10"), "n_queries"] == 0


def test_document_cutoff_is_the_ceiling_and_at_least_one():
    assert document_cutoff(1, 20) == 1  # 0.2 passages: at least one
    assert document_cutoff(5, 20) == 1
    assert document_cutoff(10, 21) == 3  # 2.1 -> 3
    assert document_cutoff(20, 10) == 2
    assert document_cutoff(7, 100) == 7  # in floats 7 / 100 * 100 > 7, whose ceil is 8
    assert document_cutoff(100, 13) == 13
    assert document_cutoff(0.5, 400) == 2


def test_document_recall_counts_the_top_percent_of_the_document():
    # q1: document of 20 passages, positives ranked 1, 2 and 5.
    ranked = [f"p{i}" for i in range(20)]
    run = run_of({"q1": ranked, "q2": ["a", "b"], "q3": ["x"]})
    relevant = {"q1": {"p0", "p1", "p4"}, "q2": {"b"}, "q3": {"x"}, "q4": {"y"}, "q5": {"z"}}
    sizes = {"q1": 20, "q2": 2, "q3": 2, "q5": 3}  # q4: no scope
    scores = per_query_document_recall(run, relevant, sizes, [1, 10, 25]).set_index("qid")
    assert list(scores.columns) == ["Recall@1%", "Recall@10%", "Recall@25%"]
    assert scores.loc["q1"].tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])  # top 1, 2, 5
    assert scores.loc["q2"].tolist() == [0.0, 0.0, 0.0]  # top 1 of 2: b is beyond the cut
    assert scores.loc["q3"].tolist() == [1.0, 1.0, 1.0]
    assert scores.loc["q4"].isna().all()  # spans documents or too small: undefined
    assert scores.loc["q5"].tolist() == [0.0, 0.0, 0.0]  # scoped but not in the run
    assert document_recall_name(0.5) == "Recall@0.5%" and is_document_recall("Recall@5%")
    assert not is_document_recall("Recall@100")


def test_aggregate_includes_document_recall_columns_over_the_scoped_queries():
    scores = pd.DataFrame(
        {
            "model": "m",
            "query_set": ["boolquestions"] * 3 + ["original"] * 2,
            "labels": "completed",
            "qid": ["a1", "a2", "n1", "o1", "o2"],
            "type": ["AND", "AND", "NOT", "ALL", "ALL"],
            "split": ["test", "train", "test", "all", "all"],
            **{m: [1.0] * 5 for m in ("MRR@10", "NegRecall@10", "Recall@100", "nDCG@10")},
            "Judged@10": [1.0] * 5,
            "Recall@5%": [0.5, np.nan, 1.0, np.nan, 0.25],
        }
    )
    metrics = aggregate(scores).set_index(["query_set", "split", "type", "metric"])
    assert metrics.loc[("boolquestions", "all", "ALL", "Recall@5%"), "value"] == 0.75
    assert metrics.loc[("boolquestions", "all", "ALL", "Recall@5%"), "n_queries"] == 2
    assert metrics.loc[("boolquestions", "train", "AND", "Recall@5%"), "n_queries"] == 0
    assert metrics.loc[("original", "all", "ALL", "Recall@5%"), "value"] == 0.25
    assert metrics.loc[("original", "all", "ALL", "Recall@5%"), "n_queries"] == 1
