"""Per-query retrieval metrics over a run, in the run's rank order.

- MRR@10: reciprocal rank of the first positive in the top 10 (0 if none).
- NegRecall@10 (the paper's section 6.1): share of a question's negative passages in its top 10;
  defined only for questions with at least one negative.
- Recall@100: share of the positives in the top 100.
- nDCG@10: sum of gain / log2(rank + 1) over the top 10, divided by the ideal; gains are the
  qrels' relevance (1 for BoolQuestions' relevant passages), as trec_eval computes it.
- Judged@10: share of the top 10 (of the retrieved passages when fewer) that is judged, i.e.
  in the query's gains at any relevance, 0 included (ir_measures' Judged@10); NaN when nothing
  was retrieved. How much of what a model ranks first its labels can score.
Relevant passages are those with gain > 0; a passage in the gains at gain 0 is judged not
relevant (boolbench.labels). A query absent from the run scores 0 on MRR, recall and nDCG
(nothing was retrieved).

Document-scoped recall (the DRC paper's section 5.3), from a run that ranks only the passages
of the query's document (boolbench.retrieval.document_scope):
- Recall@k%: share of the relevant passages in the top ceil(k/100 * n) of the n passages of the
  document, at least 1; NaN for a query without a document scope.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd

METRICS = ("MRR@10", "NegRecall@10", "Recall@100", "nDCG@10", "Judged@10")
PER_QUERY_COLUMNS = ["qid", *METRICS]
DOCUMENT_RECALL_PREFIX = "Recall@"  # with a "%" suffix: Recall@100 stays a corpus-wide metric


def reciprocal_rank(ranked: list[str], relevant: set[str], k: int) -> float:
    for rank, pid in enumerate(ranked[:k], start=1):
        if pid in relevant:
            return 1.0 / rank
    return 0.0


def recall(ranked: list[str], relevant: set[str], k: int) -> float:
    """Share of `relevant` in the top k; NaN when there is nothing relevant."""
    if not relevant:
        return math.nan
    return len(relevant.intersection(ranked[:k])) / len(relevant)


def ndcg(ranked: list[str], gains: dict[str, float], k: int) -> float:
    ideal = sorted((g for g in gains.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    if idcg == 0:
        return math.nan
    dcg = sum(gains.get(pid, 0.0) / math.log2(i + 2) for i, pid in enumerate(ranked[:k]))
    return dcg / idcg


def judged_share(ranked: list[str], judged: set[str] | dict, k: int) -> float:
    """Share of the top k that is in `judged`; NaN when nothing was retrieved."""
    top = ranked[:k]
    return sum(pid in judged for pid in top) / len(top) if top else math.nan


def ranked_lists(run: pd.DataFrame) -> dict[str, list[str]]:
    """qid -> pids in rank order."""
    ordered = run.sort_values(["qid", "rank"], kind="stable")
    return {qid: list(group["pid"]) for qid, group in ordered.groupby("qid", sort=False)}


def per_query(
    run: pd.DataFrame,
    positives: dict[str, dict[str, float]],
    negatives: dict[str, set[str]] | None = None,
) -> pd.DataFrame:
    """One row per query of `positives` (qid -> {pid: gain}, gain 0 for passages judged not
    relevant) with every metric of METRICS; `negatives` (qid -> pids) for NegRecall@10."""
    ranked = ranked_lists(run)
    negatives = negatives or {}
    rows = []
    for qid, gains in positives.items():
        pids = ranked.get(qid, [])
        relevant = {pid for pid, gain in gains.items() if gain > 0}
        rows.append(
            {
                "qid": qid,
                "MRR@10": reciprocal_rank(pids, relevant, 10),
                "NegRecall@10": recall(pids, negatives.get(qid, set()), 10),
                "Recall@100": recall(pids, relevant, 100),
                "nDCG@10": ndcg(pids, gains, 10),
                "Judged@10": judged_share(pids, gains, 10),
            }
        )
    frame = pd.DataFrame(rows, columns=PER_QUERY_COLUMNS)
    frame[list(METRICS)] = frame[list(METRICS)].astype(np.float64)
    return frame


def document_recall_name(percent: float) -> str:
    """The metric column of one percent: Recall@5%."""
    return f"{DOCUMENT_RECALL_PREFIX}{percent:g}%"


def is_document_recall(name: str) -> bool:
    return name.startswith(DOCUMENT_RECALL_PREFIX) and name.endswith("%")


def document_cutoff(percent: float, n_passages: int) -> int:
    """Passages in the top `percent` of a document of `n_passages`: ceil, at least 1."""
    # Exact decimal arithmetic: in floats 7 / 100 * 100 is 7.000000000000001, whose ceil is 8.
    return max(1, math.ceil(Fraction(str(percent)) * n_passages / 100))


def per_query_document_recall(
    document_run: pd.DataFrame,
    relevant: dict[str, set[str]],
    sizes: dict[str, int],
    percents: list[float],
) -> pd.DataFrame:
    """One row per query of `relevant` with Recall@k% for each percent; NaN where the query has
    no document size in `sizes` (no document scope)."""
    ranked = ranked_lists(document_run)
    names = [document_recall_name(p) for p in percents]
    rows = []
    for qid, pids in relevant.items():
        n = sizes.get(qid)
        values = [
            math.nan if n is None else recall(ranked.get(qid, []), pids, document_cutoff(p, n))
            for p in percents
        ]
        rows.append([qid, *values])
    frame = pd.DataFrame(rows, columns=["qid", *names])
    frame[names] = frame[names].astype(np.float64)
    return frame
