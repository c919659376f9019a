"""Searching, and the evaluation jobs: search (first-stage models) and re-rank (cross-encoders).

Every first-stage model is searched through one interface, SearchIndex (DenseIndex in
boolbench.retrieval.dense, BM25Index in boolbench.retrieval.bm25; `open_index` picks one): the
search jobs and the Boolean-operation baselines (boolbench.baselines.boolean_ops) use nothing
else.

Each job writes four runs (boolbench.retrieval.runs): the BoolQuestions questions' and the original
queries', corpus-wide and document-scoped.
"""

from __future__ import annotations

import logging
import os
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from boolbench.corpus.sources import DEFAULT_TEMPLATE, passage_texts
from boolbench.errors import InputError
from boolbench.retrieval.document_scope import (
    DocumentScope,
    document_scope,
    relevant_of_qrels,
    relevant_of_questions,
)
from boolbench.retrieval.provenance import as_metadata, model_provenance
from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.runs import (
    TIE_MARGIN,
    QuerySet,
    hits_from_arrays,
    load_queries,
    load_questions,
    rank_hits,
    read_run,
    write_run,
)

log = logging.getLogger(__name__)


class SearchIndex(Protocol):
    """A first-stage model ready to search: `spec` is its registry entry and `pids` its rows;
    `encode_queries` turns texts into its queries (vectors, or token lists); `top` gives the
    [n, k] rows (-1: none) and scores of each query's best passages; `scores` the exact
    [n, len(rows)] scores of given rows (document-scoped runs, Boolean merges)."""

    spec: ModelSpec
    pids: np.ndarray

    def encode_queries(self, texts: list[str]): ...

    def top(self, queries, k: int) -> tuple[np.ndarray, np.ndarray]: ...

    def scores(self, queries, rows: np.ndarray) -> np.ndarray: ...


def open_index(
    spec: ModelSpec, index_path, embeddings_path=None, threads: int | None = None
) -> SearchIndex:
    """The SearchIndex of a first-stage model (bm25, or a dense kind with its embeddings)."""
    if spec.kind == "bm25":
        from boolbench.retrieval.bm25 import BM25Index

        return BM25Index(spec, index_path, threads)
    from boolbench.retrieval.dense import DenseIndex

    return DenseIndex(spec, index_path, embeddings_path, threads)


def search_sets(
    index: SearchIndex, query_sets: list[QuerySet], depth: int
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """(run, document-scoped run) of every query set."""
    runs = []
    for qids, texts, scope in query_sets:
        qids = list(qids)
        queries = index.encode_queries(list(texts))
        rows, scores = index.top(queries, depth + TIE_MARGIN)
        run = rank_hits(hits_from_arrays(qids, rows, scores, index.pids), qids, depth)
        runs.append((run, document_run(index, queries, qids, scope)))
    return runs


def document_run(index: SearchIndex, queries, qids: list[str], scope: DocumentScope):
    """The document-scoped run: every passage of each scoped query's document, scored exactly
    (`queries`: the encoded queries, in `qids` order)."""
    by_document = scope.queries_by_document(qids)
    if not by_document:
        return rank_hits(pd.DataFrame(), [], 0)
    row_of = pd.Index(index.pids).get_indexer
    position = {qid: i for i, qid in enumerate(qids)}
    parts = []
    for doc, doc_qids in by_document.items():
        doc_pids = np.asarray(scope.passages[doc], dtype=object)
        rows = row_of(doc_pids)
        if (rows < 0).any():
            raise InputError(
                f"models.{index.spec.name}: passages {list(doc_pids[rows < 0][:5])} of document "
                f"{doc!r} are not in its index; rebuild the model's index"
            )
        scores = index.scores([queries[position[q]] for q in doc_qids], rows)
        parts.append(
            pd.DataFrame(
                {
                    "qid": np.repeat(np.asarray(doc_qids, dtype=object), len(doc_pids)),
                    "pid": np.tile(doc_pids, len(doc_qids)),
                    "score": np.asarray(scores, dtype=np.float64).ravel(),
                }
            )
        )
    scoped = [q for q in qids if q in scope]
    return rank_hits(pd.concat(parts, ignore_index=True), scoped, max(scope.sizes().values()))


def _labelled_pids_in_corpus(questions_path, corpus_path) -> set[str]:
    """The questions' labelled pids that the corpus has (without a set of every corpus pid)."""
    table = pq.read_table(questions_path, columns=["positives", "negatives"])
    labelled = pa.concat_arrays(
        [pc.list_flatten(table.column(c)).combine_chunks() for c in table.column_names]
    ).unique()
    corpus_pids = pq.read_table(corpus_path, columns=["pid"]).column("pid")
    found = corpus_pids.filter(pc.is_in(corpus_pids, value_set=labelled))
    return set(found.to_pylist())


def _query_sets(
    questions_path,
    queries_path,
    corpus_path,
    qrels_path=None,
    min_document_passages: int | None = None,
) -> list[QuerySet]:
    """The questions and the original queries; with `qrels_path`, their document scopes."""
    present = _labelled_pids_in_corpus(questions_path, corpus_path)
    questions = load_questions(questions_path, present)
    queries = load_queries(queries_path)
    sets = [
        QuerySet(questions["qid"].tolist(), questions["question"].tolist()),
        QuerySet(queries["qid"].tolist(), queries["text"].tolist()),
    ]
    if qrels_path is None:
        return sets
    relevant = [relevant_of_questions(questions), relevant_of_qrels(pd.read_parquet(qrels_path))]
    return [
        query_set._replace(scope=document_scope(corpus_path, rel, min_document_passages))
        for query_set, rel in zip(sets, relevant, strict=True)
    ]


def search(
    spec: ModelSpec,
    index_path: str | os.PathLike,
    embeddings_path: str | os.PathLike | None,
    questions_path: str | os.PathLike,
    queries_path: str | os.PathLike,
    qrels_path: str | os.PathLike,
    corpus_path: str | os.PathLike,
    depth: int,
    min_document_passages: int,
    out: tuple[str, str],
    document_out: tuple[str, str],
    threads: int | None = None,
    passage_template: str = DEFAULT_TEMPLATE,
) -> None:
    """Search the questions and the original queries with a dense or bm25 model, corpus-wide
    (`out`) and within their document (`document_out`). Every run records the model's
    provenance with `passage_template` (what its index was built from)."""
    metadata = as_metadata(model_provenance(spec, passage_template))
    query_sets = _query_sets(
        questions_path, queries_path, corpus_path, qrels_path, min_document_passages
    )
    runs = search_sets(open_index(spec, index_path, embeddings_path, threads), query_sets, depth)
    for (run, document), path, document_path, query_set in zip(
        runs, out, document_out, query_sets, strict=True
    ):
        log.info("%s: %d queries, %d rows -> %s", spec.name, len(query_set.qids), len(run), path)
        write_run(run, path, metadata)
        log.info(
            "%s: %d queries in one document, %d rows -> %s",
            spec.name,
            len(query_set.scope.document_of),
            len(document),
            document_path,
        )
        write_run(document, document_path, metadata)


def rerank_runs(
    spec: ModelSpec,
    base_runs: tuple[str, str],
    base_document_runs: tuple[str, str],
    questions_path: str | os.PathLike,
    queries_path: str | os.PathLike,
    corpus_path: str | os.PathLike,
    depth: int,
    out: tuple[str, str],
    document_out: tuple[str, str],
    threads: int | None = None,
    passage_template: str = DEFAULT_TEMPLATE,
) -> None:
    """Re-rank the base model's runs with a cross-encoder (passages rendered by
    `passage_template`): the corpus-wide ones to `depth`, the document-scoped ones to `depth`
    with the rest of each document after. Every run records the model's provenance."""
    from boolbench.retrieval.rerank import load_cross_encoder, rerank, rerank_document_run

    metadata = as_metadata(model_provenance(spec, passage_template))
    query_sets = _query_sets(questions_path, queries_path, corpus_path)
    passages = passage_texts(corpus_path, passage_template)
    model = load_cross_encoder(spec, threads)
    for base, path, document_base, document_path, (qids, texts, _) in zip(
        base_runs, out, base_document_runs, document_out, query_sets, strict=True
    ):
        queries = dict(zip(qids, texts, strict=True))
        run = rerank(read_run(base), queries, passages, model, depth, spec.batch_size)
        log.info("%s: re-ranked %d queries to depth %d -> %s", spec.name, len(qids), depth, path)
        write_run(run, path, metadata)
        document = rerank_document_run(
            read_run(document_base), queries, passages, model, depth, spec.batch_size
        )
        log.info("%s: re-ranked %d document rows -> %s", spec.name, len(document), document_path)
        write_run(document, document_path, metadata)
