"""Which queries are asked about one document, and that document's passages.

The DRC paper (section 5.3) ranks only the passages of the document a question is posed
about. Here a query is scoped to a document when every one of its relevant passages (a
BoolQuestions question's positives; an original query's qrels with relevance > 0) has the same
non-null `doc_id` in corpus.parquet, and that document has at least `min_passages` passages.
Every other query has no scope (its document-scoped metrics are NaN).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq


@dataclass(frozen=True)
class DocumentScope:
    """document_of: qid -> doc_id of the scoped queries; passages: doc_id -> its pids in corpus
    order (only the documents of scoped queries)."""

    document_of: dict[str, str] = field(default_factory=dict)
    passages: dict[str, list[str]] = field(default_factory=dict)

    def __contains__(self, qid: str) -> bool:
        return qid in self.document_of

    def pids_of(self, qid: str) -> list[str]:
        return self.passages[self.document_of[qid]]

    def sizes(self) -> dict[str, int]:
        """qid -> passages in its document."""
        return {qid: len(self.passages[doc]) for qid, doc in self.document_of.items()}

    def queries_by_document(self, qids: Iterable[str]) -> dict[str, list[str]]:
        """doc_id -> the scoped queries of `qids` asked about it (in `qids` order)."""
        grouped: dict[str, list[str]] = {}
        for qid in qids:
            if qid in self.document_of:
                grouped.setdefault(self.document_of[qid], []).append(qid)
        return grouped


def relevant_of_questions(questions: pd.DataFrame) -> dict[str, set[str]]:
    """qid -> positives of BoolQuestions questions."""
    return {q: set(p) for q, p in zip(questions["qid"], questions["positives"], strict=True)}


def relevant_of_qrels(qrels: pd.DataFrame) -> dict[str, set[str]]:
    """qid -> pids judged with relevance > 0."""
    relevant: dict[str, set[str]] = {}
    positive = qrels[qrels["relevance"] > 0]
    for qid, pid in zip(positive["qid"], positive["pid"], strict=True):
        relevant.setdefault(qid, set()).add(pid)
    return relevant


def document_scope(
    corpus_path: str | os.PathLike, relevant: dict[str, set[str]], min_passages: int
) -> DocumentScope:
    """The scope of the queries of `relevant` (qid -> relevant pids) over corpus.parquet."""
    corpus = pq.read_table(corpus_path, columns=["pid", "doc_id"])
    # Arrow filters rather than a pid -> doc_id dict of the whole corpus (millions of rows).
    labelled = pa.array(sorted(set().union(*relevant.values())), pa.string())
    found = corpus.filter(pc.is_in(corpus["pid"], value_set=labelled))
    doc_of_pid = dict(zip(found["pid"].to_pylist(), found["doc_id"].to_pylist(), strict=True))

    candidates = {}
    for qid, pids in relevant.items():
        # A relevant pid missing from the corpus has no known document: the query is unscoped.
        docs = {doc_of_pid.get(pid) for pid in pids}
        if len(docs) == 1 and None not in docs:
            candidates[qid] = docs.pop()

    wanted = pa.array(sorted(set(candidates.values())), pa.string())
    members = corpus.filter(pc.is_in(corpus["doc_id"], value_set=wanted))
    passages: dict[str, list[str]] = {}
    for pid, doc in zip(members["pid"].to_pylist(), members["doc_id"].to_pylist(), strict=True):
        passages.setdefault(doc, []).append(pid)
    passages = {doc: pids for doc, pids in passages.items() if len(pids) >= min_passages}
    document_of = {qid: doc for qid, doc in candidates.items() if doc in passages}
    return DocumentScope(document_of, passages)
