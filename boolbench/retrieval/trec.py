"""TREC interchange files: runs and qrels that trec_eval, pytrec_eval, ir_measures and ranx read.

Artifacts:
- runs/{model}.trec, runs/original/{model}.trec: `qid Q0 pid rank score tag` per line, in the
  order of the Parquet run; runs/{model}.trec holds only the dataset's (kept) questions, though
  the Parquet run may hold more (every written question of a generated corpus). IR tools
  re-sort a run by score and break ties their own way (trec_eval and pytrec_eval by pid
  descending, ir_measures' default RR provider and ranx otherwise), so a TREC file written
  with tied scores would be scored differently by each.
  Ties are therefore made impossible: within a query, a score not below the one written before
  it becomes the next float64 below that one (a change in the last bits, far below any
  printed digit of the Parquet scores), which keeps every tool's order equal to the rank column.
  Scores are written with repr, which reads back as the same float64.
- TREC qrels, `qid 0 pid relevance` (label sets of boolbench.labels):
  trec/qrels.txt: the completed labels, positives and pooled positives at 1, negatives and
  pooled negatives at 0 (judged not relevant: Judged@10 counts them, nothing else scores them);
  trec/qrels_group.txt: the group labels (the paper's protocol), positives 1, negatives 0;
  trec/qrels_negatives.txt: the construction negatives at relevance 1 (score NegRecall@10 as
  recall@10 against these); trec/qrels_original.txt: the corpus's original qrels.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable

import numpy as np
import pandas as pd

from boolbench.errors import InputError, located
from boolbench.io import write_text_atomic
from boolbench.labels import (
    COMPLETED,
    GROUP,
    LABEL_COLUMNS,
    judgements,
    negative_judgements,
    with_pooled,
)


def tie_free_scores(qids: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """`scores` (rows in rank order within each query) made strictly decreasing within each
    query by stepping tied or rising values down one float64 at a time."""
    out = np.asarray(scores, dtype=np.float64).copy()
    for i in range(1, len(out)):
        if qids[i] == qids[i - 1] and not out[i] < out[i - 1]:
            out[i] = np.nextafter(out[i - 1], -math.inf)
    return out


def _check_ids(values: Iterable[str], what: str, path) -> None:
    for value in values:
        if not value or any(c.isspace() for c in value):
            raise InputError(
                located(path, f"{what} {value!r} is empty or has whitespace: not writable as TREC")
            )


def write_trec_run(run: pd.DataFrame, path: str | os.PathLike, tag: str) -> None:
    """A run (the run format of boolbench.retrieval.runs, in rank order per query) as a TREC run
    file."""
    run = run.sort_values(["qid", "rank"], kind="stable")
    qids = run["qid"].to_numpy(dtype=object)
    pids = run["pid"].to_numpy(dtype=object)
    _check_ids(set(qids), "query id", path)
    _check_ids(set(pids), "passage id", path)
    scores = tie_free_scores(qids, run["score"].to_numpy())
    ranks = run["rank"].to_numpy()
    lines = [
        f"{q} Q0 {p} {r} {s!r} {tag}\n"
        for q, p, r, s in zip(qids, pids, ranks, scores.tolist(), strict=True)
    ]
    write_text_atomic(path, "".join(lines))


def write_trec_qrels(pairs: Iterable[tuple[str, str, int]], path: str | os.PathLike) -> None:
    """(qid, pid, relevance) judgments as a TREC qrels file."""
    lines = [f"{q} 0 {p} {int(r)}\n" for q, p, r in pairs]
    write_text_atomic(path, "".join(lines))


def qrels_step(questions_path, original_qrels_path, out: dict[str, str]) -> None:
    """trec/qrels.txt (completed labels), trec/qrels_group.txt, trec/qrels_negatives.txt and
    trec/qrels_original.txt."""
    questions = with_pooled(pd.read_parquet(questions_path))
    _check_ids(set(questions["qid"]), "query id", questions_path)
    labelled = {p for column in LABEL_COLUMNS for ps in questions[column] for p in ps}
    _check_ids(labelled, "passage id", questions_path)
    write_trec_qrels(judgements(questions, COMPLETED), out["completed"])
    write_trec_qrels(judgements(questions, GROUP), out["group"])
    write_trec_qrels(negative_judgements(questions), out["negatives"])
    original = pd.read_parquet(original_qrels_path)
    write_trec_qrels(original[["qid", "pid", "relevance"]].itertuples(index=False), out["original"])


def trec_runs_step(run_path, original_path, questions_path, out: dict[str, str], tag: str) -> None:
    """runs/{model}.trec (the questions of `questions_path` only) and
    runs/original/{model}.trec."""
    kept = set(pd.read_parquet(questions_path, columns=["qid"])["qid"])
    run = pd.read_parquet(run_path)
    write_trec_run(run[run["qid"].isin(kept)], out["run"], tag)
    write_trec_run(pd.read_parquet(original_path), out["original"], tag)
