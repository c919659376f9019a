"""TREC runs and qrels that every IR tool scores as our rank column says."""

import ir_measures
import numpy as np
import pandas as pd
import pytest
from ir_measures import RR, R

from boolbench.errors import InputError
from boolbench.retrieval.metrics import per_query
from boolbench.retrieval.runs import rank_hits
from boolbench.retrieval.trec import tie_free_scores, write_trec_qrels, write_trec_run


def tied_run(seed: int = 0, queries: int = 30, depth: int = 20) -> tuple[pd.DataFrame, dict]:
    """A run where most scores tie (three distinct values per query), ordered by the tie rule,
    and one or two relevant passages per query."""
    rng = np.random.default_rng(seed)
    hits, relevant = [], {}
    for q in range(queries):
        pids = [f"d{i:03d}" for i in rng.choice(200, size=depth, replace=False)]
        scores = rng.choice([1.0, 0.5, 0.25], size=depth)
        hits += [(f"q{q}", p, s) for p, s in zip(pids, scores, strict=True)]
        relevant[f"q{q}"] = {p: 1.0 for p in rng.choice(pids, size=rng.integers(1, 3))}
    frame = pd.DataFrame(hits, columns=["qid", "pid", "score"])
    return rank_hits(frame, [f"q{q}" for q in range(queries)], depth), relevant


def test_tie_free_scores_decrease_strictly_and_stay_close():
    qids = np.array(["a"] * 5 + ["b"] * 3, dtype=object)
    scores = np.array([2.0, 2.0, 2.0, 1.0, 1.0, 0.3, 0.3, 0.1])
    out = tie_free_scores(qids, scores)
    for q in ("a", "b"):
        part = out[qids == q]
        assert (np.diff(part) < 0).all()
    assert np.allclose(out, scores, rtol=1e-14, atol=0)
    assert out[0] == 2.0 and out[3] == 1.0 and out[5] == 0.3  # only ties move


def test_every_tool_reads_the_trec_run_as_our_rank_column(tmp_path):
    """trec_eval's rule (pytrec_eval), ir_measures' default RR@10 provider and ranx re-sort a
    run by score with their own tie rules; on the written file all of them agree with MRR@10
    computed from our rank column, although the run's Parquet scores tie everywhere."""
    run, relevant = tied_run()
    ours = per_query(run, relevant).set_index("qid")["MRR@10"]

    path, qrels_path = tmp_path / "run.trec", tmp_path / "qrels.txt"
    write_trec_run(run, path, tag="model-a")
    write_trec_qrels([(q, p, 1) for q, ps in relevant.items() for p in ps], qrels_path)
    lines = path.read_text().splitlines()
    assert lines[0].split()[1] == "Q0" and lines[0].split()[5] == "model-a"
    assert [int(line.split()[3]) for line in lines[:20]] == list(range(1, 21))

    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    trec_run = list(ir_measures.read_trec_run(str(path)))
    default = {m.query_id: m.value for m in ir_measures.iter_calc([RR @ 10], qrels, trec_run)}
    # trec_eval itself: RR over the top 10 (pytrec_eval's recip_rank has no cutoff).
    top10 = pd.DataFrame(trec_run).sort_values(["query_id", "score"], ascending=[True, False])
    top10 = top10.groupby("query_id").head(10)
    trec_eval = {m.query_id: m.value for m in ir_measures.pytrec_eval.iter_calc([RR], qrels, top10)}
    import ranx

    ranx_scores = ranx.evaluate(
        ranx.Qrels.from_file(str(qrels_path), kind="trec"),
        ranx.Run.from_file(str(path), kind="trec"),
        "mrr@10",
        return_mean=False,
    )
    ranx_by_query = dict(zip(sorted(relevant), ranx_scores, strict=True))
    for qid, value in ours.items():
        assert default[qid] == pytest.approx(value, abs=1e-12)
        assert trec_eval[qid] == pytest.approx(value, abs=1e-12)
        assert ranx_by_query[qid] == pytest.approx(value, abs=1e-12)

    # Why: with the tied Parquet scores, ir_measures' default provider ranks otherwise.
    tied = run.rename(columns={"qid": "query_id", "pid": "doc_id"})
    tied_default = ir_measures.calc_aggregate([RR @ 10], qrels, tied)[RR @ 10]
    assert tied_default != pytest.approx(ours.mean(), abs=1e-6)


def test_trec_qrels_and_recall_agree(tmp_path):
    run, relevant = tied_run(seed=1)
    path, qrels_path = tmp_path / "run.trec", tmp_path / "qrels.txt"
    write_trec_run(run, path, tag="m")
    write_trec_qrels([(q, p, 1) for q, ps in relevant.items() for p in ps], qrels_path)
    ours = per_query(run, relevant).set_index("qid")["Recall@100"]
    qrels = list(ir_measures.read_trec_qrels(str(qrels_path)))
    for m in ir_measures.iter_calc([R @ 100], qrels, list(ir_measures.read_trec_run(str(path)))):
        assert m.value == pytest.approx(ours[m.query_id], abs=1e-12)


def test_ids_with_whitespace_are_refused(tmp_path):
    run = pd.DataFrame({"qid": ["q 1"], "pid": ["p"], "rank": [1], "score": [1.0]})
    with pytest.raises(InputError, match="query id 'q 1' is empty or has whitespace"):
        write_trec_run(run, tmp_path / "run.trec", tag="m")
