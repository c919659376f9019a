"""Lexical retrieval with bm25s (Lucene's BM25; the DRC paper's k1=0.9, b=0.4 by default).

Artifact: models/{model}/bm25/, a bm25s index folder plus pids.parquet (row i = document i).
Passages that share no term with a query are not retrieved (they would all score 0), as in
Lucene; a query may therefore have fewer than `depth` passages in its run. A document-scoped
run (boolbench.retrieval.runs) is the exception: it ranks every passage of the document, those
without a shared term at score 0, last by the tie rule.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from boolbench.corpus.sources import DEFAULT_TEMPLATE, render_passages
from boolbench.errors import InputError
from boolbench.io import atomic_path, write_table_atomic
from boolbench.retrieval.registry import ModelSpec

log = logging.getLogger(__name__)


def _stemmer(spec: ModelSpec):
    if spec.stemmer is None:
        return None
    try:
        import Stemmer
    except ImportError:
        raise InputError(
            f"models.{spec.name}.stemmer: {spec.stemmer!r} needs PyStemmer (pip install PyStemmer)"
        ) from None
    if spec.stemmer not in Stemmer.algorithms():
        raise InputError(
            f"models.{spec.name}.stemmer: unknown algorithm {spec.stemmer!r} "
            f"(PyStemmer knows {', '.join(Stemmer.algorithms())})"
        )
    return Stemmer.Stemmer(spec.stemmer)


def tokenize(texts: list[str], spec: ModelSpec, return_ids: bool):
    """bm25s tokens with the model's stopwords and stemmer (the same for passages and queries)."""
    import bm25s

    return bm25s.tokenize(
        texts,
        stopwords=spec.stopwords or [],
        stemmer=_stemmer(spec),
        return_ids=return_ids,
        show_progress=False,
    )


def build_bm25(
    corpus_path: str | os.PathLike,
    spec: ModelSpec,
    out_dir: str | os.PathLike,
    passage_template: str = DEFAULT_TEMPLATE,
):
    """Index corpus.parquet's passages (rendered by `passage_template`) into a bm25s folder
    (written whole or not at all)."""
    import bm25s

    columns = ["pid", "text"] if passage_template == DEFAULT_TEMPLATE else ["pid", "text", "title"]
    corpus = pq.read_table(corpus_path, columns=columns)
    retriever = bm25s.BM25(k1=spec.k1, b=spec.b, method="lucene")
    passages = render_passages(corpus, passage_template)
    retriever.index(tokenize(passages, spec, True), show_progress=False)
    with atomic_path(out_dir) as temp:
        retriever.save(str(temp))
        write_table_atomic(corpus.select(["pid"]), temp / "pids.parquet")
    log.info("bm25 index of %d passages for %s", corpus.num_rows, spec.name)


class BM25Index:
    """A bm25s index folder ready to search (boolbench.retrieval.search.SearchIndex); queries
    are token lists, and a passage without a shared term is not retrieved (index -1)."""

    def __init__(self, spec: ModelSpec, index_dir, threads: int | None = None):
        import bm25s

        self.spec = spec
        self.threads = threads
        self.retriever = bm25s.BM25.load(str(index_dir))
        pids = pq.read_table(Path(index_dir) / "pids.parquet").column("pid").to_pylist()
        self.pids = np.asarray(pids, dtype=object)

    def encode_queries(self, texts: list[str]) -> list[list[str]]:
        return tokenize(texts, self.spec, return_ids=False) if texts else []

    def top(self, queries: list[list[str]], k: int) -> tuple[np.ndarray, np.ndarray]:
        k = min(k, len(self.pids))
        if not queries:
            return np.zeros((0, k), np.int64), np.zeros((0, k), np.float32)
        indices, scores = self.retriever.retrieve(
            queries, k=k, show_progress=False, n_threads=self.threads or 1
        )
        return np.where(scores > 0, indices, -1), scores  # no shared term: not retrieved

    def scores(self, queries: list[list[str]], rows: np.ndarray) -> np.ndarray:
        # get_scores_from_ids: get_scores fails on a query left with no token (all stopwords).
        ids = self.retriever.get_tokens_ids
        full = [self.retriever.get_scores_from_ids(ids(tokens)) for tokens in queries]
        return np.asarray([row[rows] for row in full]).reshape(len(queries), len(rows))
