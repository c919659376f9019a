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

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.runs import rank_hits


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


class DenseScorer:
    """Top-k lists and exact scores of a dense model's index and passage vectors."""

    def __init__(self, spec: ModelSpec, index_path, embeddings_path, threads: int | None = None):
        from boolbench.retrieval.dense import load_index
        from boolbench.retrieval.embeddings import load_embeddings
        from boolbench.retrieval.encoders import load_dense_encoder

        self.spec = spec
        pids, self.vectors = load_embeddings(embeddings_path)
        self.pids = np.asarray(pids, dtype=object)
        self.row_of = {pid: i for i, pid in enumerate(pids)}
        self.index = load_index(index_path, spec, threads)
        self.encoder = load_dense_encoder(spec, threads)

    def score(self, questions: list[str], k: int) -> tuple[list[set[str]], list[dict]]:
        from boolbench.retrieval.dense import search_vectors_of

        queries = search_vectors_of(self.encoder.encode_queries(questions), self.spec)
        _, indices = self.index.search(queries, k)
        lists = [set(self.pids[row[row >= 0]]) for row in indices]
        pool = sorted(set.union(*lists))
        passages = search_vectors_of(self.vectors[[self.row_of[p] for p in pool]], self.spec)
        exact = queries @ passages.T
        return lists, [dict(zip(pool, row.tolist(), strict=True)) for row in exact]


class BM25Scorer:
    """Top-k lists and exact BM25 scores from a bm25s index folder."""

    def __init__(self, spec: ModelSpec, index_dir, threads: int | None = None):
        import bm25s

        self.spec = spec
        self.retriever = bm25s.BM25.load(str(index_dir))
        self.pids = np.asarray(
            pq.read_table(Path(index_dir) / "pids.parquet").column("pid").to_pylist(), dtype=object
        )
        self.row_of = {pid: i for i, pid in enumerate(self.pids)}

    def score(self, questions: list[str], k: int) -> tuple[list[set[str]], list[dict]]:
        from boolbench.retrieval.bm25 import tokenize

        tokens = tokenize(questions, self.spec, return_ids=False)
        full = [self.retriever.get_scores(t) for t in tokens]  # every passage's score
        lists = []
        for row in full:
            top = np.argsort(-row, kind="stable")[:k]
            lists.append(set(self.pids[top[row[top] > 0]]))
        pool = sorted(set.union(*lists))
        return lists, [{p: float(row[self.row_of[p]]) for p in pool} for row in full]


def make_scorer(spec: ModelSpec, index_path, embeddings_path=None, threads: int | None = None):
    if spec.kind == "bm25":
        return BM25Scorer(spec, index_path, threads)
    return DenseScorer(spec, index_path, embeddings_path, threads)


def boolean_run(
    expressions: pd.DataFrame, scorer, k: int, depth: int, fallback: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The run of merged lists for expressions (qid, operator, questions); each simple question
    retrieves its top 2k. Questions without an expression (a failed decomposition) take their
    rows from `fallback` (the retriever's own run), if given."""
    hits = []
    for row in expressions.itertuples(index=False):
        if not isinstance(row.operator, str) or len(row.questions) == 0:  # failed
            continue
        lists, scores = scorer.score(list(row.questions), 2 * k)
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
