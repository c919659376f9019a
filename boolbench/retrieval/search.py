"""The evaluation jobs: search (first-stage models) and re-rank (cross-encoders).

Each writes four runs (boolbench.retrieval.runs): the BoolQuestions questions' and the original
queries', corpus-wide and document-scoped.
"""

from __future__ import annotations

import logging
import os

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from boolbench.corpus.sources import DEFAULT_TEMPLATE, passage_texts
from boolbench.retrieval.document_scope import (
    document_scope,
    relevant_of_qrels,
    relevant_of_questions,
)
from boolbench.retrieval.provenance import as_metadata, model_provenance
from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.runs import QuerySet, load_queries, load_questions, read_run, write_run

log = logging.getLogger(__name__)


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
    if spec.kind == "bm25":
        from boolbench.retrieval.bm25 import search_bm25

        runs = search_bm25(index_path, spec, query_sets, depth, threads)
    else:
        from boolbench.retrieval.dense import search_dense

        runs = search_dense(index_path, embeddings_path, spec, query_sets, depth, threads)
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
