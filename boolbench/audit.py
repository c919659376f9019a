"""The label audit of the paper's section 4.4: a seeded sample of kept questions, one row per
(question, labelled passage), judged blind by people or by an LLM, and the confusion matrix of
the judgements against the labels.

Artifacts:
- audit/sheet.csv: SHEET_COLUMNS; `judgement` (does the passage answer the question? yes/no)
  and `operator_expressed` (does the question say its AND/OR/NOT? yes/no, once per question)
  are left empty for the annotator.
- audit/sheet.html: the same rows for reading, labels hidden until asked.
- audit/confusion.csv and .html: per type and ALL, the shares of (judgement, label) pairs in the
  paper's orientation (rows: the annotator's judgement as ground truth, columns: the label),
  label accuracy, and the share of questions that express their operator.
"""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import pandas as pd

from boolbench import htmlpage
from boolbench.errors import InputError, located
from boolbench.htmlpage import escape
from boolbench.parquet_io import write_text_atomic

TYPES = ("AND", "OR", "NOT")
SHEET_COLUMNS = [
    "qid", "type", "question", "pid", "label", "passage", "judgement", "operator_expressed",
]  # fmt: skip
YES = {"yes", "y", "1", "true", "positive", "pos"}
NO = {"no", "n", "0", "false", "negative", "neg"}
# Section 4.4 of the paper: 32 questions judged by people (rows: ground truth, columns: label).
PAPER = {"questions": 32, "pos_pos": 0.6250, "pos_neg": 0.0938, "neg_pos": 0.0313,
         "neg_neg": 0.2500, "label_accuracy": 0.875}  # fmt: skip
OPERATOR_RUBRIC = {
    "AND": "it asks for something that must meet two or more conditions at once",
    "OR": "it asks for either of two (or more) things, any one of them being enough",
    "NOT": "it asks for something while excluding something named in the question",
}
PathLike = str | os.PathLike


def sample_questions(kept: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """`n` questions drawn with `seed`, as equal a share of each type as the types allow."""
    rng = np.random.default_rng([seed, 4])  # 4: the audit's stream of the seed
    by_type = {t: kept[kept["type"] == t].sort_values("qid") for t in TYPES}
    quota = dict.fromkeys(TYPES, 0)
    left = n
    while left > 0:  # one more per type in turn, skipping types that have run out
        open_types = [t for t in TYPES if quota[t] < len(by_type[t])]
        if not open_types:
            break
        for kind in open_types[:left]:
            quota[kind] += 1
            left -= 1
    picked = [
        frame.iloc[np.sort(rng.choice(len(frame), quota[kind], replace=False))]
        for kind, frame in by_type.items()
        if quota[kind]
    ]
    return pd.concat(picked, ignore_index=True) if picked else kept.head(0)


def audit_sheet(kept: pd.DataFrame, passages: dict[str, str], n: int, seed: int) -> pd.DataFrame:
    """One row per (sampled question, labelled passage): positives first, then negatives."""
    rows = []
    for q in sample_questions(kept, n, seed).itertuples():
        for label, pids in (("positive", q.positives), ("negative", q.negatives)):
            for pid in pids:
                rows.append(
                    {"qid": q.qid, "type": q.type, "question": q.question, "pid": pid,
                     "label": label, "passage": passages.get(pid, ""), "judgement": "",
                     "operator_expressed": ""}
                )  # fmt: skip
    return pd.DataFrame(rows, columns=SHEET_COLUMNS)


def write_sheet(sheet: pd.DataFrame, csv_out: PathLike, html_out: PathLike, seed: int) -> None:
    write_text_atomic(csv_out, sheet.to_csv(index=False))
    sections = []
    for qid, rows in sheet.groupby("qid", sort=False):
        first = rows.iloc[0]
        items = "".join(
            f"<li><p class=passage>{escape(r.passage)}</p><small>{escape(r.pid)} &middot; "
            f"<details><summary>label</summary>{escape(r.label)}</details></small></li>"
            for r in rows.itertuples()
        )
        sections.append(
            f"<h4>{escape(qid)} &middot; {escape(first.type)}</h4>"
            f"<p><b>{escape(first.question)}</b></p><ol>{items}</ol>"
        )
    questions = sheet["qid"].nunique()
    notes = [
        f"{questions} questions drawn with seed {seed}, as evenly over AND, OR and NOT as the "
        f"dataset allows; {len(sheet)} (question, passage) pairs. For each pair, judge whether "
        "the passage answers the question (write yes or no in the judgement column of "
        "sheet.csv), and once per question whether it expresses its operator (column "
        "operator_expressed): " + "; ".join(f"{t}: {r}" for t, r in OPERATOR_RUBRIC.items())
        + ". Labels stay hidden until you open them; judge before you look. Name the filled "
        "sheet in audit.judgements to get the confusion matrix.",
    ]
    htmlpage.write_page(
        html_out, "Label audit sheet", htmlpage.notes(notes) + "\n".join(sections)
    )


def _verdict(value, path: PathLike, row: int, column: str) -> bool | None:
    text = "" if value is None or (isinstance(value, float) and np.isnan(value)) else str(value)
    text = text.strip().lower()
    if not text:
        return None
    if text in YES:
        return True
    if text in NO:
        return False
    raise InputError(
        located(path, f"{column} is {value!r}; write yes or no (or leave it empty)", row=row)
    )


def read_judgements(path: PathLike, sheet: pd.DataFrame | None = None) -> pd.DataFrame:
    """A filled sheet: qid, type, pid, label, judged (bool or None), operator (bool or None).

    Labels and types missing from the file are taken from `sheet` (the run's own sheet)."""
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except FileNotFoundError:
        raise InputError(f"{path}: audit.judgements names a file that does not exist") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: not a CSV file ({err})") from None
    for column in ("qid", "pid", "judgement"):
        if column not in frame.columns:
            raise InputError(f"{path}: no column {column!r} (expected the columns of sheet.csv)")
    if "label" not in frame.columns or "type" not in frame.columns:
        if sheet is None:
            raise InputError(f"{path}: no label/type columns and no sheet to take them from")
        known = sheet.set_index(["qid", "pid"])[["type", "label"]]
        frame = frame.drop(columns=["type", "label"], errors="ignore").join(
            known, on=["qid", "pid"]
        )
        missing = frame["label"].isna()
        if missing.any():
            first = frame[missing].iloc[0]
            raise InputError(
                located(
                    path,
                    f"({first.qid}, {first.pid}) is not in this run's audit sheet, so its "
                    "label is unknown; judge the sheet of this run or keep its label column",
                    row=int(missing.idxmax()) + 2,
                )
            )
    if "operator_expressed" not in frame.columns:
        frame["operator_expressed"] = ""
    rows = []
    for i, r in enumerate(frame.itertuples(), start=2):  # row 1 is the header
        if r.label not in ("positive", "negative"):
            raise InputError(located(path, f"label is {r.label!r}, not positive/negative", row=i))
        rows.append(
            {"qid": r.qid, "type": r.type, "pid": r.pid, "label": r.label,
             "judged": _verdict(r.judgement, path, i, "judgement"),
             "operator": _verdict(r.operator_expressed, path, i, "operator_expressed")}
        )  # fmt: skip
    return pd.DataFrame(rows, columns=["qid", "type", "pid", "label", "judged", "operator"])


CONFUSION_COLUMNS = [
    "type", "questions", "pairs", "pos_pos", "pos_neg", "neg_pos", "neg_neg", "label_accuracy",
    "positive_labels_right", "negative_labels_right", "operator_expressed",
    "questions_worth_keeping",
]  # fmt: skip


def confusion(judged: pd.DataFrame) -> pd.DataFrame:
    """Per type and ALL: shares of judged pairs by (judgement, label) in the paper's orientation
    (pos_neg: the annotator says the passage answers, the label says negative), label accuracy,
    and question-level shares (operator expressed; operator expressed and every label right)."""
    pairs = judged[judged["judged"].notna()].copy()
    pairs["truth"] = pairs["judged"].astype(bool)
    pairs["positive"] = pairs["label"] == "positive"
    rows = []
    for kind in ("ALL", *TYPES):
        part = pairs if kind == "ALL" else pairs[pairs["type"] == kind]
        n = len(part)

        def share(truth: bool, positive: bool, part=part, n=n) -> float:
            hits = ((part["truth"] == truth) & (part["positive"] == positive)).sum()
            return hits / n if n else float("nan")

        right = part["truth"] == part["positive"]
        questions = part.groupby("qid").agg(
            right=("truth", lambda s, part=part: bool(right.loc[s.index].all()))
        )
        operator = judged[judged["qid"].isin(questions.index)].groupby("qid")["operator"].first()
        questions["operator"] = operator.reindex(questions.index)
        with_operator = questions[questions["operator"].notna()]
        pos = part[part["positive"]]
        neg = part[~part["positive"]]
        rows.append(
            {
                "type": kind,
                "questions": len(questions),
                "pairs": n,
                "pos_pos": share(True, True),
                "pos_neg": share(True, False),
                "neg_pos": share(False, True),
                "neg_neg": share(False, False),
                "label_accuracy": right.mean() if n else float("nan"),
                "positive_labels_right": pos["truth"].mean() if len(pos) else float("nan"),
                "negative_labels_right": (~neg["truth"]).mean() if len(neg) else float("nan"),
                "operator_expressed": (
                    with_operator["operator"].astype(bool).mean()
                    if len(with_operator) else float("nan")
                ),
                "questions_worth_keeping": (
                    (with_operator["operator"].astype(bool) & with_operator["right"]).mean()
                    if len(with_operator) else float("nan")
                ),
            }
        )  # fmt: skip
    return pd.DataFrame(rows, columns=CONFUSION_COLUMNS)


def write_confusion(table: pd.DataFrame, source: str, csv_out: PathLike, html_out: PathLike):
    """audit/confusion.csv (shares as fractions) and the report page with the paper's matrix."""
    write_text_atomic(csv_out, table.to_csv(index=False, float_format="%.4f"))

    def pct(value) -> str:
        return "-" if pd.isna(value) else f"{100 * value:.1f}%"

    everything = table[table["type"] == "ALL"].iloc[0]
    matrix = htmlpage.table(
        ["", "label positive", "label negative", "", "paper: label positive", "label negative"],
        [
            ["judged positive", pct(everything.pos_pos), pct(everything.pos_neg), "",
             pct(PAPER["pos_pos"]), pct(PAPER["pos_neg"])],
            ["judged negative", pct(everything.neg_pos), pct(everything.neg_neg), "",
             pct(PAPER["neg_pos"]), pct(PAPER["neg_neg"])],
        ],
        "Confusion matrix (share of judged pairs)",
        row_headers=True,
    )  # fmt: skip
    rows = [
        [escape(r.type), str(r.questions), str(r.pairs), pct(r.label_accuracy),
         pct(r.positive_labels_right), pct(r.negative_labels_right), pct(r.operator_expressed),
         pct(r.questions_worth_keeping)]
        for r in table.itertuples()
    ]  # fmt: skip
    per_type = htmlpage.table(
        ["type", "questions", "pairs", "labels right", "positive labels right",
         "negative labels right", "operator expressed", "worth keeping"],
        rows,
        "Per question type",
        row_headers=True,
    )  # fmt: skip
    notes = [
        f"Judgements: {source}. Rows are the judgement (taken as ground truth), columns the "
        "dataset's label, as in the paper's section 4.4 (32 questions judged by people: "
        f"{100 * PAPER['label_accuracy']:.1f}% of labels right). 'worth keeping': the "
        "question expresses its operator and every one of its labels is right.",
    ]
    htmlpage.write_page(html_out, "Label audit", matrix + per_type + htmlpage.notes(notes))


def sheet_csv_text(sheet: pd.DataFrame) -> str:
    buffer = io.StringIO()
    sheet.to_csv(buffer, index=False, quoting=csv.QUOTE_MINIMAL)
    return buffer.getvalue()
