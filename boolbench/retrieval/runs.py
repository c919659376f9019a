"""Runs (ranked passages per query) and the query sets they are made for.

Artifacts:
- runs/{model}.parquet: the BoolQuestions questions' run; runs/original/{model}.parquet: the
  corpus's original queries' run. Columns RUN_SCHEMA: qid (string), pid (string), rank (int32,
  1-based), score (float64), at most `depth` rows per query.
- runs/document/{model}.parquet and runs/document/original/{model}.parquet: document-scoped runs
  (boolbench.retrieval.document_scope), same columns: for each scoped query, every passage of its
  document ranked (passages sharing no term with a BM25 query score 0 and come last); empty when no
  query is scoped.

Ties: rows are ordered by score descending, then pid descending: trec_eval's (and pytrec_eval's)
rule. Other tools break ties otherwise (ir_measures' default RR provider, ranx), so the TREC files
of boolbench.retrieval.trec make ties impossible. Retrievers fetch TIE_MARGIN passages beyond the
depth before this ordering is applied, so a tie at the cut is resolved over at least that many
candidates.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.errors import InputError, located
from boolbench.io import write_table_atomic
from boolbench.retrieval.document_scope import DocumentScope

RUN_SCHEMA = pa.schema(
    [("qid", pa.string()), ("pid", pa.string()), ("rank", pa.int32()), ("score", pa.float64())]
)
TIE_MARGIN = 16


class QuerySet(NamedTuple):
    """Queries to search; `scope`: those also ranked within their document."""

    qids: list[str]
    texts: list[str]
    scope: DocumentScope = DocumentScope()


def rank_hits(hits: pd.DataFrame, qid_order: list[str], depth: int) -> pd.DataFrame:
    """Order (qid, pid, score) hits by the tie rule, keep `depth` per query, number the ranks.

    Queries come out in `qid_order`; a query without hits has no rows.
    """
    if hits.empty:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in _DTYPES.items()})
    order = {qid: i for i, qid in enumerate(qid_order)}
    hits = hits.assign(_q=hits["qid"].map(order), score=hits["score"].astype(np.float64))
    hits = hits.sort_values(["_q", "score", "pid"], ascending=[True, False, False], kind="stable")
    hits = hits.groupby("_q", sort=False).head(depth)
    ranks = hits.groupby("_q", sort=False).cumcount() + 1
    out = hits[["qid", "pid", "score"]].assign(rank=ranks.astype(np.int32))
    return out[list(_DTYPES)].reset_index(drop=True)


_DTYPES = {"qid": "object", "pid": "object", "rank": "int32", "score": "float64"}


def hits_from_arrays(
    qids: list[str], indices: np.ndarray, scores: np.ndarray, pids: np.ndarray
) -> pd.DataFrame:
    """Long (qid, pid, score) hits from [n_queries, k] index and score arrays (-1: no hit)."""
    indices = np.asarray(indices)
    valid = indices >= 0
    rows = np.repeat(np.arange(len(qids)), indices.shape[1]).reshape(indices.shape)
    return pd.DataFrame(
        {
            "qid": np.asarray(qids, dtype=object)[rows[valid]],
            "pid": pids[indices[valid]],
            "score": np.asarray(scores, dtype=np.float64)[valid],
        }
    )


def write_run(
    run: pd.DataFrame, path: str | os.PathLike, metadata: dict[bytes, bytes] | None = None
) -> None:
    """Write a run; `metadata` (boolbench.retrieval.provenance) goes into the Parquet footer."""
    schema = RUN_SCHEMA.with_metadata(metadata) if metadata else RUN_SCHEMA
    write_table_atomic(pa.Table.from_pandas(run, schema=schema, preserve_index=False), path)


def read_run(path: str | os.PathLike) -> pd.DataFrame:
    return pq.read_table(path).to_pandas()


def load_questions(path: str | os.PathLike, corpus_pids: set[str]) -> pd.DataFrame:
    """BoolQuestions questions (qid, question, type, split, positives, negatives), checked.

    An empty set, or a labelled passage missing from the corpus, is one error naming the file
    and the qid.
    """
    questions = pq.read_table(
        path, columns=["qid", "question", "type", "split", "positives", "negatives"]
    ).to_pandas()
    if questions.empty:
        raise InputError(
            located(path, "holds no questions; nothing to evaluate (see generation_report.json)")
        )
    for row in questions.itertuples():
        labelled = [*row.positives, *row.negatives]
        missing = [pid for pid in labelled if pid not in corpus_pids]
        if missing:
            raise InputError(
                located(path, f"question {row.qid}: passages {missing[:5]} are not in the corpus")
            )
        if len(row.positives) == 0:
            raise InputError(located(path, f"question {row.qid}: has no positive passage"))
    return questions


def load_queries(path: str | os.PathLike) -> pd.DataFrame:
    """Original queries (qid, text); may be empty."""
    return pq.read_table(path, columns=["qid", "text"]).to_pandas()
