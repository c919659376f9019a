"""The two label sets of BoolQuestions questions, defined once for scoring and every export.

A question of boolquestions.parquet holds four disjoint lists of passage ids:
- `positives`, `negatives`: the group labels, from the construction (the negatives are the
  construction negatives: AND, passages that meet the disjunctive part only; OR, the group's
  other passages; NOT, the excluded member);
- `pooled_positives`, `pooled_negatives`: pooled passages (the union of the models' top
  `pooling.depth`) outside the group labels that the judge found relevant / not relevant.
  Empty when nothing was pooled; a file written before pooling has no such columns, which
  reads as empty lists.

Label sets (the `labels` column of scores and metrics):
- group (the paper's protocol): relevant = positives; judged = positives + negatives.
- completed: relevant = positives + pooled_positives; judged = all four lists.
NegRecall@10 always counts the construction negatives (`negatives`), under both label sets.
"""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd

from boolbench.constants import TYPES

GROUP, COMPLETED = "group", "completed"
LABEL_SETS = (GROUP, COMPLETED)
POOLED_COLUMNS = ("pooled_positives", "pooled_negatives")
LABEL_COLUMNS = ("positives", "negatives", *POOLED_COLUMNS)
# Which lists are relevant and which judged not relevant, per label set.
RELEVANT = {GROUP: ("positives",), COMPLETED: ("positives", "pooled_positives")}
NOT_RELEVANT = {GROUP: ("negatives",), COMPLETED: ("negatives", "pooled_negatives")}
LABEL_SET_NOTES = {
    GROUP: "group labels (the paper's protocol): relevant = the group's positives, judged = "
    "positives and negatives (every other passage counts as not relevant)",
    COMPLETED: "completed labels: relevant = positives and pooled positives (pooled passages "
    "the judge found relevant), judged = positives, negatives, pooled positives and pooled "
    "negatives",
}


def with_pooled(questions: pd.DataFrame) -> pd.DataFrame:
    """`questions` with both pooled columns (empty lists where a column is missing or a value
    is null: files written before pooling, imported question sets)."""
    questions = questions.copy()
    for column in POOLED_COLUMNS:
        values = questions[column] if column in questions else [None] * len(questions)
        questions[column] = [[] if v is None else list(v) for v in values]
    return questions


def _lists(questions: pd.DataFrame, columns: tuple[str, ...]) -> dict[str, list[str]]:
    """qid -> the passages of `columns`, in column order."""
    questions = with_pooled(questions)
    return {
        row[0]: [pid for value in row[1:] for pid in value]
        for row in questions[["qid", *columns]].itertuples(index=False)
    }


def relevant(questions: pd.DataFrame, labels: str) -> dict[str, list[str]]:
    """qid -> the relevant passages of each question under `labels`."""
    return _lists(questions, RELEVANT[labels])


def not_relevant(questions: pd.DataFrame, labels: str) -> dict[str, list[str]]:
    """qid -> the passages judged not relevant under `labels`."""
    return _lists(questions, NOT_RELEVANT[labels])


def gains(questions: pd.DataFrame, labels: str) -> dict[str, dict[str, float]]:
    """qid -> {pid: gain}: 1 for relevant passages, 0 for those judged not relevant (the
    qrels' meaning: a judged passage is in the dict, an unjudged one is not)."""
    good, bad = relevant(questions, labels), not_relevant(questions, labels)
    return {qid: dict.fromkeys(bad[qid], 0.0) | dict.fromkeys(good[qid], 1.0) for qid in good}


def judgements(questions: pd.DataFrame, labels: str) -> Iterator[tuple[str, str, int]]:
    """(qid, pid, relevance) of every judged passage under `labels`: relevant 1, then not
    relevant 0, in question order (qrels rows)."""
    good, bad = relevant(questions, labels), not_relevant(questions, labels)
    for qid, pids in good.items():
        yield from ((qid, pid, 1) for pid in pids)
        yield from ((qid, pid, 0) for pid in bad[qid])


def negative_judgements(questions: pd.DataFrame) -> Iterator[tuple[str, str, int]]:
    """(qid, pid, 1) of every construction negative: NegRecall@10 is recall@10 against these."""
    for qid, pids in zip(questions["qid"], questions["negatives"], strict=True):
        yield from ((qid, pid, 1) for pid in pids)


def overlap(row) -> str | None:
    """The first passage of a question that is in two of its label lists, described; None when
    the four lists are disjoint (`row`: a mapping with LABEL_COLUMNS; a missing list is
    empty)."""
    seen: dict[str, str] = {}
    for column in LABEL_COLUMNS:
        value = row.get(column)
        for pid in value if value is not None else []:
            if pid in seen and seen[pid] != column:
                return f"passage {pid!r} is in both {seen[pid]} and {column}"
            seen[pid] = column
    return None


def label_counts(questions: pd.DataFrame) -> pd.DataFrame:
    """Per type and ALL: questions and the passages of each label list (sums)."""
    questions = with_pooled(questions)
    rows = []
    for kind in ("ALL", *TYPES):
        part = questions if kind == "ALL" else questions[questions["type"] == kind]
        counts = {c: int(part[c].map(len).sum()) for c in LABEL_COLUMNS}
        rows.append({"type": kind, "questions": len(part), **counts})
    return pd.DataFrame(rows, columns=["type", "questions", *LABEL_COLUMNS])


def counts_sentence(questions: pd.DataFrame) -> str:
    """The label counts of all `questions` in one sentence (under tables and in cards)."""
    total = label_counts(questions).iloc[0]
    line = (
        f"Labels of these {total['questions']} questions: {total['positives']} group positives, "
        f"{total['negatives']} group (construction) negatives, {total['pooled_positives']} "
        f"pooled positives and {total['pooled_negatives']} pooled negatives"
    )
    if total["pooled_positives"] + total["pooled_negatives"] == 0:
        return line + " (nothing pooled: the completed labels equal the group labels)."
    return line + "."
