"""Boolean operations on the retrieval results of simple questions (paper section 6.3).

Each simple question retrieves its top 2k passages (its candidate list). The lists merge by
the expression's operator: AND keeps the passages in every list (intersection), OR those in
any list (union), NOT those of the first list that are in none of the others (difference).
A merged passage's score is recomputed from its score for every simple question: the sum for
AND, the maximum for OR, the first question's score minus the others' for NOT. Scores are
exact for every passage of the pool (not only where a passage made a list), so the recomputed
score is defined for every merged passage.
"""

from __future__ import annotations

import pandas as pd

from boolbench.retrieval.runs import rank_hits
from boolbench.retrieval.search import SearchIndex


def merge(operator: str, lists: list[set[str]], scores: list[dict[str, float]]) -> dict[str, float]:
    """pid -> recomputed score of the merged list. `lists[i]` is question i's top 2k, and
    `scores[i]` its score for every pid of the union of the lists."""
    if operator == "AND":
        merged = set.intersection(*lists)
        return {p: sum(s[p] for s in scores) for p in merged}
    if operator == "OR":
        merged = set.union(*lists)
        return {p: max(s[p] for s in scores) for p in merged}
    if operator == "NOT":
        merged = lists[0] - set.union(*lists[1:])
        return {p: scores[0][p] - sum(s[p] for s in scores[1:]) for p in merged}
    raise ValueError(f"unknown Boolean operator {operator!r}")


def score_lists(index: SearchIndex, questions: list[str], k: int):
    """(lists, scores) of simple questions: each one's top-k pids, and its exact score for every
    pid of the union of the lists (the pool a merge draws from)."""
    queries = index.encode_queries(questions)
    rows, _ = index.top(queries, k)
    lists = [set(index.pids[row[row >= 0]]) for row in rows]
    pool = sorted(set.union(*lists))
    pool_rows = pd.Index(index.pids).get_indexer(pool)
    exact = index.scores(queries, pool_rows)
    return lists, [dict(zip(pool, row.tolist(), strict=True)) for row in exact]


def boolean_run(
    expressions: pd.DataFrame,
    index: SearchIndex,
    k: int,
    depth: int,
    fallback: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The run of merged lists for expressions (qid, operator, questions); each simple question
    retrieves its top 2k. Questions without an expression (a failed decomposition) take their
    rows from `fallback` (the retriever's own run), if given."""
    hits = []
    for row in expressions.itertuples(index=False):
        if not isinstance(row.operator, str) or len(row.questions) == 0:  # failed
            continue
        lists, scores = score_lists(index, list(row.questions), 2 * k)
        merged = merge(row.operator, lists, scores)
        hits.append(
            pd.DataFrame({"qid": row.qid, "pid": list(merged), "score": list(merged.values())})
        )
    frame = pd.concat(hits, ignore_index=True) if hits else pd.DataFrame()
    run = rank_hits(frame, list(expressions["qid"]), depth)
    if fallback is not None:
        failed = set(expressions.loc[expressions["operator"].isna(), "qid"])
        taken = fallback[fallback["qid"].isin(failed)]
        run = pd.concat([run, taken[run.columns]], ignore_index=True)
    return run
