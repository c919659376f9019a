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

import os
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from boolbench.constants import TYPES
from boolbench.errors import InputError, located
from boolbench.generation.filtering import TOP_LOGPROBS, AnswererSettings, Pair, ask, p_yes
from boolbench.generation.prompts import Prompt
from boolbench.io import write_text_atomic
from boolbench.llm import ChatRequest, LLMClient
from boolbench.report import html
from boolbench.report.html import escape

SHEET_COLUMNS = [
    "qid", "type", "question", "pid", "label", "passage", "judgement", "operator_expressed",
]  # fmt: skip
YES = {"yes", "y", "1", "true", "positive", "pos"}
NO = {"no", "n", "0", "false", "negative", "neg"}
# Section 4.4 of the paper: 32 questions judged by people (rows: ground truth, columns: label).
PAPER = {"questions": 32, "pos_pos": 0.6250, "pos_neg": 0.0938, "neg_pos": 0.0313,
         "neg_neg": 0.2500, "label_accuracy": 0.875}  # fmt: skip
# Does the question express its operator? (the sheet's instructions and the LLM judge's prompt)
OPERATOR_RUBRIC = {
    "AND": "ask for something that must meet two or more conditions at once",
    "OR": "ask for either of two or more things, any one of them being enough",
    "NOT": "ask for something while excluding something that it names",
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
        "operator_expressed), that is, does it "
        + "; ".join(f"{t}: {r}" for t, r in OPERATOR_RUBRIC.items())
        + ". Labels stay hidden until you open them; judge before you look. Name the filled "
        "sheet in audit.judgements to get the confusion matrix.",
    ]
    html.write_page(html_out, "Label audit sheet", html.notes(notes) + "\n".join(sections))


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
        questions = right.groupby(part["qid"]).all().to_frame("right")
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
    matrix = html.table(
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
    per_type = html.table(
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
    html.write_page(html_out, "Label audit", matrix + per_type + html.notes(notes))


def judge_sheet(
    sheet: pd.DataFrame,
    llm: LLMClient,
    pair_prompt: Prompt,
    operator_prompt: Prompt,
    settings: AnswererSettings,
) -> pd.DataFrame:
    """The sheet filled by an LLM: each pair judged yes/no (the filter's judge), and each
    question asked whether it expresses its operator (OPERATOR_RUBRIC)."""
    judge = replace(settings, method="judge")
    pairs = [Pair((i,), row.question, row.pid) for i, row in enumerate(sheet.itertuples())]
    passages = dict(zip(sheet["pid"], sheet["passage"], strict=False))
    verdicts = ask(pairs, passages, llm, pair_prompt, judge)
    questions = sheet.drop_duplicates("qid")
    requests = [
        ChatRequest(
            row.qid,
            operator_prompt.messages(question=row.question, rubric=OPERATOR_RUBRIC[row.type]),
            seed=settings.seed,
            max_tokens=1,
            temperature=0.0,
            top_logprobs=TOP_LOGPROBS,
        )
        for row in questions.itertuples()
    ]
    results = llm.run(requests) if requests else []
    llm.check_failures(results)
    expressed = {r.id: p_yes(r) for r in results}
    filled = sheet.copy()
    filled["judgement"] = [_yes_no(v["answered"]) for v in verdicts]
    filled["operator_expressed"] = [
        _yes_no(None if expressed.get(q) is None else expressed[q] >= settings.threshold)
        for q in filled["qid"]
    ]
    return filled


def _yes_no(value: bool | None) -> str:
    return "" if value is None else "yes" if value else "no"


# ---------------------------------------------------------------------------------------------
# Steps (files in, files out)


def sheet_step(questions, corpus, n: int, seed: int, csv_out, html_out) -> None:
    kept = pd.read_parquet(questions)
    sample = sample_questions(kept, n, seed)
    pids = sorted({p for col in ("positives", "negatives") for ps in sample[col] for p in ps})
    texts = pq.read_table(corpus, columns=["pid", "text"], filters=[("pid", "in", pids)])
    passages = dict(zip(texts["pid"].to_pylist(), texts["text"].to_pylist(), strict=True))
    write_sheet(audit_sheet(kept, passages, n, seed), csv_out, html_out, seed)


def judge_step(sheet, out, llm, pair_prompt: dict, operator_prompt: dict, settings) -> None:
    rows = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    filled = judge_sheet(rows, llm, Prompt(**pair_prompt), Prompt(**operator_prompt), settings)
    write_text_atomic(out, filled.to_csv(index=False))


def confusion_step(sheet, judgements, source: str, csv_out, html_out) -> None:
    own = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    write_confusion(confusion(read_judgements(judgements, own)), source, csv_out, html_out)
