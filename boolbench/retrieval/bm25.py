"""Lexical retrieval with bm25s (Lucene's BM25; the DRC paper's k1=0.9, b=0.4 by default).

Artifact: models/{model}/bm25/, a bm25s index folder plus pids.parquet (row i = document i).
Passages that share no term with a query are not retrieved (they would all score 0), as in Lucene; a
query may therefore have fewer than `depth` passages in its run. A document-scoped run
(boolbench.retrieval.runs) is the exception: it ranks every passage of the document, those without a
shared term at score 0, last by the tie rule.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from boolbench.corpus.sources import DEFAULT_TEMPLATE, render_passages
from boolbench.errors import InputError
from boolbench.io import atomic_path, write_table_atomic
from boolbench.retrieval.document_scope import DocumentScope
from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.runs import TIE_MARGIN, QuerySet, hits_from_arrays, rank_hits

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


def document_run_bm25(
    retriever, pids: np.ndarray, tokens: list[list[str]], qids: list[str], scope: DocumentScope
) -> pd.DataFrame:
    """The document-scoped run: the BM25 scores of every passage of each scoped query's
    document (`pids`: the index's rows; `tokens`: the queries' tokens, in `qids` order)."""
    scoped = [(i, qid) for i, qid in enumerate(qids) if qid in scope]
    if not scoped:
        return rank_hits(pd.DataFrame(), [], 0)
    row_of = pd.Index(pids).get_indexer
    parts = []
    for i, qid in scoped:
        doc_pids = np.asarray(scope.pids_of(qid), dtype=object)
        rows = row_of(doc_pids)
        if (rows < 0).any():
            raise InputError(
                f"passages {list(doc_pids[rows < 0][:5])} of document {scope.document_of[qid]!r} "
                "are not in the bm25 index; rebuild it"
            )
        # get_scores_from_ids: get_scores fails on a query left with no token (all stopwords).
        scores = retriever.get_scores_from_ids(retriever.get_tokens_ids(tokens[i]))
        parts.append(pd.DataFrame({"qid": qid, "pid": doc_pids, "score": scores[rows]}))
    hits = pd.concat(parts, ignore_index=True)
    return rank_hits(hits, [qid for _, qid in scoped], max(scope.sizes().values()))


def search_bm25(
    index_dir: str | os.PathLike,
    spec: ModelSpec,
    query_sets: list[QuerySet],
    depth: int,
    threads: int | None = None,
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """(run, document-scoped run) per query set."""
    import bm25s

    retriever = bm25s.BM25.load(str(index_dir))
    pids = np.asarray(pq.read_table(Path(index_dir) / "pids.parquet").column("pid").to_pylist())
    pids = pids.astype(object)
    k = min(depth + TIE_MARGIN, len(pids))
    runs = []
    for qids, texts, scope in query_sets:
        qids = list(qids)
        if not qids:
            empty = rank_hits(pd.DataFrame(), qids, depth)
            runs.append((empty, empty))
            continue
        tokens = tokenize(list(texts), spec, return_ids=False)
        indices, scores = retriever.retrieve(
            tokens, k=k, show_progress=False, n_threads=threads or 1
        )
        indices = np.where(scores > 0, indices, -1)  # no shared term: not retrieved
        run = rank_hits(hits_from_arrays(qids, indices, scores, pids), qids, depth)
        runs.append((run, document_run_bm25(retriever, pids, tokens, qids, scope)))
    return runs
