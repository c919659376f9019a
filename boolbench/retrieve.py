"""The evaluation jobs: search (first-stage models) and re-rank (cross-encoders).

Each writes two runs (boolbench.runs): the BoolQuestions questions and the original queries.
"""

from __future__ import annotations

import logging
import os

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from boolbench.corpus import passage_texts
from boolbench.retrievers import ModelSpec
from boolbench.runs import load_queries, load_questions, read_run, write_run

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


def _query_sets(questions_path, queries_path, corpus_path):
    present = _labelled_pids_in_corpus(questions_path, corpus_path)
    questions = load_questions(questions_path, present)
    queries = load_queries(queries_path)
    return [
        (questions["qid"].tolist(), questions["question"].tolist()),
        (queries["qid"].tolist(), queries["text"].tolist()),
    ]


def search(
    spec: ModelSpec,
    index_path: str | os.PathLike,
    embeddings_path: str | os.PathLike | None,
    questions_path: str | os.PathLike,
    queries_path: str | os.PathLike,
    corpus_path: str | os.PathLike,
    depth: int,
    out: tuple[str, str],
    threads: int | None = None,
) -> None:
    """Search the questions and the original queries with a dense or bm25 model."""
    query_sets = _query_sets(questions_path, queries_path, corpus_path)
    if spec.kind == "bm25":
        from boolbench.bm25 import search_bm25

        runs = search_bm25(index_path, spec, query_sets, depth, threads)
    else:
        from boolbench.dense import search_dense

        runs = search_dense(index_path, embeddings_path, spec, query_sets, depth, threads)
    for run, path, (qids, _) in zip(runs, out, query_sets, strict=True):
        log.info("%s: %d queries, %d rows -> %s", spec.name, len(qids), len(run), path)
        write_run(run, path)


def rerank_runs(
    spec: ModelSpec,
    base_runs: tuple[str, str],
    questions_path: str | os.PathLike,
    queries_path: str | os.PathLike,
    corpus_path: str | os.PathLike,
    depth: int,
    out: tuple[str, str],
    threads: int | None = None,
) -> None:
    """Re-rank both runs of the base model with a cross-encoder."""
    from boolbench.rerank import load_cross_encoder, rerank

    query_sets = _query_sets(questions_path, queries_path, corpus_path)
    passages = passage_texts(corpus_path)
    model = load_cross_encoder(spec, threads)
    for base, path, (qids, texts) in zip(base_runs, out, query_sets, strict=True):
        run = rerank(
            read_run(base),
            dict(zip(qids, texts, strict=True)),
            passages,
            model,
            depth,
            spec.batch_size,
        )
        log.info("%s: re-ranked %d queries to depth %d -> %s", spec.name, len(qids), depth, path)
        write_run(run, path)
