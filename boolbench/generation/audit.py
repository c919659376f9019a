"""The label audit (the paper's section 4.4, extended): a seeded sample of kept questions, each
with its labelled passages and the unjudged passages that the models rank high, judged blind by
people or by an LLM, and the judgements set against the labels.

Artifacts:
- audit/sheet.csv: SHEET_COLUMNS, one row per (sampled question, passage): the question's
  group-labelled passages (positives, negatives), its pooled-labelled passages and the passages
  of every model's top `audit.depth` that no label covers, each once, in a seeded order within
  the question; no label. `answers` and `meets_part` (per pair), `natural` and
  `operator_expressed` (per question) are empty, for the annotator (COLUMN_HELP).
- audit/sheet.html: the same questions and passages for reading, with the instructions.
- audit/key.csv: KEY_COLUMNS, one row per sheet row: `label` (LABELS), `source` (group, pooled
  or empty: the label set it comes from) and `ranked_by` ("model@rank" for every model that
  ranks the passage in its top `audit.depth`, space-separated). Only the confusion step reads it.
- audit/llm_judgements.csv (`audit.judge`): the sheet filled by an LLM.
- audit/confusion.csv and .html: CONFUSION_COLUMNS per type and ALL (each figure with the
  number of items behind it, `n_<figure>`), beside the paper's numbers.
- audit/by_model.csv: BY_MODEL_COLUMNS, per model and type: how many passages of its top
  `audit.depth` lie outside the group labels (and outside every label) and how many answer.
"""

from __future__ import annotations

import logging
import os
import zlib
from dataclasses import replace

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from boolbench.constants import TYPES
from boolbench.errors import InputError, located
from boolbench.generation.filtering import TOP_LOGPROBS, AnswererSettings, Pair, ask, p_yes
from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import shorten
from boolbench.io import write_text_atomic
from boolbench.llm import ChatRequest, LLMClient
from boolbench.report import html
from boolbench.report.html import escape
from boolbench.report.pages import passages_of

log = logging.getLogger(__name__)
PathLike = str | os.PathLike

SHEET_COLUMNS = [
    "qid", "type", "question", "pid", "passage",
    "answers", "meets_part", "natural", "operator_expressed",
]  # fmt: skip
PAIR_COLUMNS = ("answers", "meets_part")  # per (question, passage)
QUESTION_COLUMNS = ("natural", "operator_expressed")  # per question
KEY_COLUMNS = ["qid", "pid", "label", "source", "ranked_by"]
# The dataset's label lists -> (label in the key, label set).
LABEL_LISTS = {
    "positives": ("positive", "group"),
    "negatives": ("negative", "group"),
    "pooled_positives": ("pooled_positive", "pooled"),
    "pooled_negatives": ("pooled_negative", "pooled"),
}
UNJUDGED = "unjudged"
LABELS = (*(label for label, _ in LABEL_LISTS.values()), UNJUDGED)
YES = {"yes", "y", "1", "true", "positive", "pos"}
NO = {"no", "n", "0", "false", "negative", "neg"}
# Section 4.4 of the paper: 32 questions judged by people (rows: ground truth, columns: label).
PAPER = {"questions": 32, "pos_pos": 0.6250, "pos_neg": 0.0938, "neg_pos": 0.0313,
         "neg_neg": 0.2500, "group_labels_right": 0.875}  # fmt: skip
# Does the question express its operator? (the sheet's instructions and the LLM judge's prompt)
OPERATOR_RUBRIC = {
    "AND": "ask for something that must meet two or more conditions at once",
    "OR": "ask for either of two or more things, any one of them being enough",
    "NOT": "ask for something while excluding something that it names",
}
# meets_part, per question type (OR has none): does a passage that should not answer meet
# part of the question? An AND negative should meet one condition, a NOT negative should be
# the excluded member of the set (the paper's construction, section 4.3).
PART_RUBRIC = {
    "AND": "meet some of the question's conditions but not all of them",
    "NOT": "describe the thing that the question excludes, that thing being of the kind the "
    "question asks for",
}
NATURAL_RUBRIC = (
    "would a person write this question? It is grammatical and sensible, one question (not "
    "two questions glued together), and it does not name its own answer"
)
COLUMN_HELP = {
    "answers": "does the passage answer the question as asked? Strict: every condition of an "
    "AND question, one alternative of an OR question, the main request of a NOT question "
    "without being about the thing it excludes; a partial answer, or a passage on the same "
    "topic that does not answer, is no",
    "meets_part": "AND questions: the passage meets some of the question's conditions but not "
    "all; NOT questions: the passage is about the thing the question excludes, and that thing "
    "is of the kind the question asks for; empty for OR questions",
    "natural": f"once per question: {NATURAL_RUBRIC}",
    "operator_expressed": "once per question: does its wording express its operator, that is, "
    "does it " + "; ".join(f"{t}: {r}" for t, r in OPERATOR_RUBRIC.items()),
}


# ---------------------------------------------------------------------------------------------
# The sheet


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


def with_label_lists(questions: pd.DataFrame) -> pd.DataFrame:
    """The questions with every list of LABEL_LISTS (a dataset without pooled labels: empty)."""
    missing = {c: [[] for _ in range(len(questions))] for c in LABEL_LISTS if c not in questions}
    return questions.assign(**missing)


def audit_sheet(
    sample: pd.DataFrame, top: dict[str, pd.DataFrame], passages: dict[str, str], seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(sheet, key): per sampled question its labelled passages and the other passages of each
    model's top (`top`: model -> qid, pid, rank), each once, in a seeded order per question."""
    ranks: dict[tuple[str, str], list[str]] = {}
    for model, run in top.items():
        for qid, pid, rank in run[["qid", "pid", "rank"]].itertuples(index=False):
            ranks.setdefault((qid, pid), []).append(f"{model}@{rank}")
    sheet_rows, key_rows = [], []
    for q in with_label_lists(sample).itertuples():
        labelled: dict[str, tuple[str, str]] = {}
        for column, (label, source) in LABEL_LISTS.items():
            for pid in getattr(q, column):
                labelled.setdefault(pid, (label, source))  # a passage is in one list only
        ranked = [pid for (qid, pid) in ranks if qid == q.qid and pid not in labelled]
        pids = sorted({*labelled, *ranked})
        # One generator per question (seeded by its qid): its order does not depend on the
        # other questions of the sample.
        rng = np.random.default_rng([seed, 4, zlib.crc32(q.qid.encode())])
        for pid in (pids[i] for i in rng.permutation(len(pids))):
            label, source = labelled.get(pid, (UNJUDGED, ""))
            sheet_rows.append(
                {"qid": q.qid, "type": q.type, "question": q.question, "pid": pid,
                 "passage": passages.get(pid, "")} | dict.fromkeys(SHEET_COLUMNS[5:], "")
            )  # fmt: skip
            key_rows.append(
                {"qid": q.qid, "pid": pid, "label": label, "source": source,
                 "ranked_by": " ".join(ranks.get((q.qid, pid), []))}
            )  # fmt: skip
    return (
        pd.DataFrame(sheet_rows, columns=SHEET_COLUMNS),
        pd.DataFrame(key_rows, columns=KEY_COLUMNS),
    )


def top_passages(run_path: PathLike, qids: list[str], depth: int) -> pd.DataFrame:
    """qid, pid, rank of a run's top `depth` for `qids`."""
    columns = ["qid", "pid", "rank"]
    if not qids:  # pyarrow cannot filter on an empty list
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    filters = [("qid", "in", qids), ("rank", "<=", depth)]
    return pq.read_table(run_path, columns=columns, filters=filters).to_pandas()


def write_sheet(
    sheet: pd.DataFrame,
    key: pd.DataFrame,
    csv_out: PathLike,
    key_out: PathLike,
    html_out: PathLike,
    setting: str,
) -> None:
    """sheet.csv, key.csv and sheet.html; `setting` says how the sheet was drawn (or why it
    is empty)."""
    write_text_atomic(csv_out, sheet.to_csv(index=False))
    write_text_atomic(key_out, key.to_csv(index=False))
    sections = []
    for qid, rows in sheet.groupby("qid", sort=False):
        first = rows.iloc[0]
        part = PART_RUBRIC.get(first.type)
        asks = [f"natural: {NATURAL_RUBRIC}.", f"operator_expressed: does it "
                f"{OPERATOR_RUBRIC[first.type]}?"]  # fmt: skip
        if part:
            asks.append(f"meets_part (each passage): does the passage {part}?")
        items = "".join(
            f"<li><p class=passage>{escape(r.passage)}</p><small>{escape(r.pid)}</small></li>"
            for r in rows.itertuples()
        )
        sections.append(
            f"<h4>{escape(qid)} &middot; {escape(first.type)}</h4>"
            f"<p><b>{escape(first.question)}</b></p>"
            f"<p><small>{'<br>'.join(escape(a) for a in asks)}</small></p><ol>{items}</ol>"
        )
    notes = [
        setting,
        "Fill sheet.csv (yes or no; keep qid and pid as they are): "
        + "; ".join(f"{column}: {text}" for column, text in COLUMN_HELP.items())
        + ". Write natural and operator_expressed on one row of the question (or the same "
        "value on each of its rows). Judge every passage against the question as asked, on "
        "its own text; the passages of a question are in no particular order. Name the filled "
        "sheet in audit.judgements to set the judgements against the labels.",
    ]
    html.write_page(html_out, "Label audit sheet", html.notes(notes) + "\n".join(sections))


# ---------------------------------------------------------------------------------------------
# The judgements


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


def _read_csv(path: PathLike) -> pd.DataFrame:
    try:
        # utf-8-sig: a sheet saved by a spreadsheet program may start with a byte-order mark
        return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError(f"{path}: audit.judgements names a file that does not exist") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        raise InputError(f"{path}: not a CSV file ({err})") from None


def read_judgements(path: PathLike, key: pd.DataFrame) -> pd.DataFrame:
    """A filled sheet as one row per key row: qid, pid, answers and meets_part (True, False
    or None: not judged), natural and operator_expressed of its question (the same).

    Rows are matched to the key by (qid, pid); other columns (passage, label, notes) are
    ignored. `judgement` is read as `answers` (sheets before the audit had its new columns)."""
    frame = _read_csv(path)
    if "answers" not in frame.columns and "judgement" in frame.columns:
        frame = frame.rename(columns={"judgement": "answers"})
    for column in ("qid", "pid", "answers"):
        if column not in frame.columns:
            raise InputError(f"{path}: no column {column!r} (expected the columns of sheet.csv)")
    for column in (*PAIR_COLUMNS, *QUESTION_COLUMNS):
        if column not in frame.columns:
            frame[column] = ""
    known = set(zip(key["qid"], key["pid"], strict=True))
    foreign = [i for i, p in enumerate(zip(frame["qid"], frame["pid"], strict=True))
               if p not in known]  # fmt: skip
    if foreign:
        first = frame.iloc[foreign[0]]
        raise InputError(
            located(
                path,
                f"({first.qid}, {first.pid}) is not on this run's audit sheet ({len(foreign)} "
                f"of {len(frame)} rows are not): judge this run's audit/sheet.csv, a sheet of "
                "another run (or another audit.questions, audit.depth, seed or models) does "
                "not match its labels",
                row=foreign[0] + 2,  # row 1 is the header
            )
        )
    repeated = frame.duplicated(["qid", "pid"])
    if repeated.any():
        first = frame[repeated].iloc[0]
        raise InputError(
            located(
                path,
                f"({first.qid}, {first.pid}) is judged twice; keep one row",
                row=int(repeated.idxmax()) + 2,
            )
        )
    rows, asked = [], {}
    for i, r in enumerate(frame.itertuples(), start=2):
        row = {"qid": r.qid, "pid": r.pid}
        for column in (*PAIR_COLUMNS, *QUESTION_COLUMNS):
            row[column] = _verdict(getattr(r, column), path, i, column)
        for column in QUESTION_COLUMNS:  # once per question: its rows must agree
            if row[column] is None:
                continue
            seen = asked.setdefault((r.qid, column), (row[column], i))
            if seen[0] != row[column]:
                raise InputError(
                    located(
                        path,
                        f"{column} of {r.qid} is {_yes_no(row[column])} here and "
                        f"{_yes_no(seen[0])} on row {seen[1]}; it is judged once per "
                        "question",
                        row=i,
                    )
                )
        rows.append(row)
    judged = pd.DataFrame(rows, columns=["qid", "pid", *PAIR_COLUMNS, *QUESTION_COLUMNS])
    out = key[["qid", "pid"]].merge(judged[["qid", "pid", *PAIR_COLUMNS]], how="left")
    for column in QUESTION_COLUMNS:
        values = {qid: value for (qid, c), (value, _) in asked.items() if c == column}
        out[column] = out["qid"].map(values)
    return out.astype(object).where(out.notna(), None)


# ---------------------------------------------------------------------------------------------
# The figures

# Each figure: its column, what it says (the page's row), and the paper's value if it has one.
FIGURES = [
    ("group_labels_right", "group labels right (the paper's protocol)", 0.875),
    ("positive_labels_right", "positives that answer", None),
    ("negative_labels_right", "negatives that do not answer", None),
    ("pooled_labels_right", "pooled labels right", None),
    ("pooled_positives_right", "pooled positives that answer", None),
    ("pooled_negatives_right", "pooled negatives that do not answer", None),
    ("natural", "natural questions (a person would write them)", None),
    ("operator_expressed", "questions that express their operator", None),
    ("and_negatives_one_condition", "AND negatives that meet one condition, not all", None),
    ("not_negatives_excluded_member", "NOT negatives that are the excluded member", None),
    ("unjudged_answering", "unjudged top-ranked passages that answer", None),
    ("outside_group_answering", "passages outside the group labels that answer", None),
    ("questions_worth_keeping", "questions worth keeping (natural, operator expressed, every "
     "group label right)", None),
]  # fmt: skip
MATRIX = ("pos_pos", "pos_neg", "neg_pos", "neg_neg")
CONFUSION_COLUMNS = [
    "type", "questions", *MATRIX,
    *(c for name, _, _ in FIGURES for c in (name, f"n_{name}")),
]  # fmt: skip
BY_MODEL_COLUMNS = [
    "model", "type", "n_top", "outside_group_answering", "n_outside_group_answering",
    "unjudged_answering", "n_unjudged_answering",
]  # fmt: skip


def _share(values: pd.Series) -> tuple[float, int]:
    """The share of True among the judged values (None: not judged), and their number."""
    known = values.dropna().astype(bool)
    return (float(known.mean()) if len(known) else float("nan")), len(known)


def judged_pairs(sheet: pd.DataFrame, key: pd.DataFrame, judged: pd.DataFrame) -> pd.DataFrame:
    """The key with each row's type and its judgements (read_judgements)."""
    types = sheet.drop_duplicates("qid").set_index("qid")["type"]
    return key.assign(type=key["qid"].map(types)).merge(judged, on=["qid", "pid"], how="left")


def confusion(pairs: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """CONFUSION_COLUMNS per type and ALL, from judged_pairs (`questions`: qid, type of every
    sampled question). Rows of the matrix are the judgement (ground truth), columns the label."""
    pairs = pairs.assign(_group=pairs["label"].isin(["positive", "negative"]))
    rows = []
    for kind in ("ALL", *TYPES):
        part = pairs if kind == "ALL" else pairs[pairs["type"] == kind]
        asked = questions if kind == "ALL" else questions[questions["type"] == kind]
        label, answers = part["label"], part["answers"]
        group = part[part["_group"] & answers.notna()]
        said, positive = group["answers"].astype(bool), group["label"] == "positive"
        figures: dict = {"type": kind, "questions": len(asked)}
        for name, (truth, pos) in zip(MATRIX, [(1, 1), (1, 0), (0, 1), (0, 0)], strict=True):
            hits = ((said == bool(truth)) & (positive == bool(pos))).sum()
            figures[name] = hits / len(group) if len(group) else float("nan")
        right = said == positive
        pooled = part[label.isin(["pooled_positive", "pooled_negative"])]
        per_question = part.groupby("qid").agg(
            natural=("natural", "first"), operator=("operator_expressed", "first")
        )
        group_right = right.groupby(group["qid"]).all()
        complete = per_question.dropna().join(group_right.rename("right"), how="inner")
        worth = complete["natural"].astype(bool) & complete["operator"].astype(bool)
        values = {
            "group_labels_right": right,
            "positive_labels_right": answers[label == "positive"],
            "negative_labels_right": ~answers[label == "negative"].dropna().astype(bool),
            "pooled_labels_right": pooled["answers"].dropna().astype(bool)
            == (pooled["label"] == "pooled_positive"),
            "pooled_positives_right": answers[label == "pooled_positive"],
            "pooled_negatives_right": ~answers[label == "pooled_negative"].dropna().astype(bool),
            "natural": per_question["natural"],
            "operator_expressed": per_question["operator"],
            "and_negatives_one_condition": part.loc[
                (part["type"] == "AND") & (label == "negative"), "meets_part"
            ],
            "not_negatives_excluded_member": part.loc[
                (part["type"] == "NOT") & (label == "negative"), "meets_part"
            ],
            "unjudged_answering": answers[label == UNJUDGED],
            "outside_group_answering": answers[~part["_group"]],
            "questions_worth_keeping": worth & complete["right"].astype(bool),
        }
        for name, series in values.items():
            figures[name], figures[f"n_{name}"] = _share(series)
        rows.append(figures)
    return pd.DataFrame(rows, columns=CONFUSION_COLUMNS)


def by_model(pairs: pd.DataFrame) -> pd.DataFrame:
    """BY_MODEL_COLUMNS: per model (from `ranked_by`) and type, its top passages on the sheet,
    and the shares of those outside the group labels, and outside every label, that answer."""
    ranked = pairs.assign(model=pairs["ranked_by"].fillna("").str.split())
    ranked = ranked.explode("model").dropna(subset=["model"])
    ranked["model"] = ranked["model"].str.rsplit("@", n=1).str[0]
    rows = []
    for model in dict.fromkeys(ranked["model"]):
        mine = ranked[ranked["model"] == model]
        for kind in ("ALL", *TYPES):
            part = mine if kind == "ALL" else mine[mine["type"] == kind]
            outside = _share(part.loc[~part["label"].isin(["positive", "negative"]), "answers"])
            unjudged = _share(part.loc[part["label"] == UNJUDGED, "answers"])
            rows.append((model, kind, len(part), *outside, *unjudged))
    return pd.DataFrame(rows, columns=BY_MODEL_COLUMNS)


def _pct(value) -> str:
    return "-" if pd.isna(value) else f"{100 * value:.1f}%"


def _figure(value, n) -> str:
    return "-" if not n else f"{_pct(value)} of {int(n)}"


def write_confusion(
    table: pd.DataFrame,
    models: pd.DataFrame,
    source: str,
    depth: int,
    csv_out: PathLike,
    models_out: PathLike,
    html_out: PathLike,
) -> None:
    """confusion.csv and by_model.csv (shares as fractions) and the report page, with the
    paper's numbers beside ours."""
    write_text_atomic(csv_out, table.to_csv(index=False, float_format="%.4f"))
    write_text_atomic(models_out, models.to_csv(index=False, float_format="%.4f"))
    everything = table[table["type"] == "ALL"].iloc[0]
    matrix = html.table(
        ["", "label positive", "label negative", "", "paper: label positive", "label negative"],
        [
            ["judged positive", _pct(everything.pos_pos), _pct(everything.pos_neg), "",
             _pct(PAPER["pos_pos"]), _pct(PAPER["pos_neg"])],
            ["judged negative", _pct(everything.neg_pos), _pct(everything.neg_neg), "",
             _pct(PAPER["neg_pos"]), _pct(PAPER["neg_neg"])],
        ],
        f"Confusion matrix of the group labels (share of {everything.n_group_labels_right} "
        f"judged pairs; the paper: {PAPER['questions']} questions)",
        row_headers=True,
    )  # fmt: skip
    by_type = table.set_index("type")
    kinds = ["ALL", *TYPES]
    rows = [["questions", *(str(by_type.loc[k, "questions"]) for k in kinds),
             str(PAPER["questions"])]]  # fmt: skip
    for name, title, paper in FIGURES:
        title = title.replace("top-ranked", f"top-{depth}")
        cells = [_figure(by_type.loc[k, name], by_type.loc[k, f"n_{name}"]) for k in kinds]
        rows.append([escape(title), *cells, _pct(paper)])
    figures = html.table(["", *kinds, "paper"], rows, "Per question type", row_headers=True)
    model_rows = [
        [escape(r.model), r.type, str(r.n_top),
         _figure(r.outside_group_answering, r.n_outside_group_answering),
         _figure(r.unjudged_answering, r.n_unjudged_answering)]
        for r in models.itertuples()
    ]  # fmt: skip
    per_model = html.table(
        ["model", "type", f"top {depth} on the sheet", "outside the group labels: answer",
         "unjudged: answer"],
        model_rows,
        f"Each model's top {depth}: passages without a label that answer the question",
        row_headers=True,
    )  # fmt: skip
    notes = [
        f"Judgements: {source}. '87.5% of 32': the share, and the number of judged items "
        "behind it (pairs, or questions for natural, operator expressed and worth keeping). "
        "The paper's section 4.4: 32 questions judged by people, 87.5% of labels right "
        "(rows of the matrix: the judgement taken as ground truth; columns: the label).",
        "Group labels: the construction's positives and negatives (the paper's protocol); "
        f"pooled labels: the pool judge's; unjudged: passages of a model's top {depth} that no "
        "label covers. An AND negative should meet one of the question's conditions (the "
        "paper's AND question is the disjunctive question plus a constraint that only the "
        "positive meets), a NOT negative should be the excluded member of the set.",
    ]
    if not int(everything.questions):
        notes.insert(0, "The audit sheet holds no question: nothing was judged.")
    html.write_page(html_out, "Label audit", matrix + figures + per_model + html.notes(notes))


# ---------------------------------------------------------------------------------------------
# The LLM judge


def judge_sheet(
    sheet: pd.DataFrame,
    llm: LLMClient,
    prompts: dict[str, Prompt],
    settings: AnswererSettings,
) -> pd.DataFrame:
    """The sheet filled by an LLM: `answers` by the yes/no judge (prompts["answers"]),
    `meets_part` (AND, NOT), `natural` and `operator_expressed` by yes/no prompts
    (prompts["part"], ["natural"], ["operator"]) read from the first token's probabilities."""
    judge = replace(settings, method="judge")
    pairs = [Pair((i,), row.question, row.pid) for i, row in enumerate(sheet.itertuples())]
    passages = dict(zip(sheet["pid"], sheet["passage"], strict=False))
    verdicts = ask(pairs, passages, llm, prompts["answers"], judge)

    def yes_no(request_id: str, messages: list[dict]) -> ChatRequest:
        return ChatRequest(request_id, messages, seed=settings.seed, max_tokens=1,
                           temperature=0.0, top_logprobs=TOP_LOGPROBS)  # fmt: skip

    requests = []
    # passage by passage, as the judge's calls: the server reuses a passage's cached tokens
    for i in sorted(range(len(sheet)), key=lambda i: (sheet["pid"].iat[i], i)):
        row = sheet.iloc[i]
        if row["type"] in PART_RUBRIC:
            passage = shorten(row["passage"], settings.max_passage_words)
            messages = prompts["part"].messages(
                question=row["question"], paragraph=passage, rubric=PART_RUBRIC[row["type"]]
            )
            requests.append(yes_no(f"part:{i}", messages))
    for row in sheet.drop_duplicates("qid").itertuples():
        natural = prompts["natural"].messages(question=row.question)
        rubric = OPERATOR_RUBRIC[row.type]
        operator = prompts["operator"].messages(question=row.question, rubric=rubric)
        requests += [yes_no(f"natural:{row.qid}", natural), yes_no(f"operator:{row.qid}", operator)]
    results = llm.run(requests) if requests else []
    llm.check_failures(results)
    said = {r.id: _yes_no(_at_least(p_yes(r), settings.threshold)) for r in results if r.ok}
    filled = sheet.copy()
    filled["answers"] = [_yes_no(v["answered"]) for v in verdicts]
    filled["meets_part"] = [said.get(f"part:{i}", "") for i in range(len(sheet))]
    filled["natural"] = [said.get(f"natural:{q}", "") for q in filled["qid"]]
    filled["operator_expressed"] = [said.get(f"operator:{q}", "") for q in filled["qid"]]
    return filled


def _at_least(probability: float | None, threshold: float) -> bool | None:
    return None if probability is None else probability >= threshold


def _yes_no(value: bool | None) -> str:
    return "" if value is None else "yes" if value else "no"


# ---------------------------------------------------------------------------------------------
# Steps (files in, files out)


def sheet_step(
    questions: PathLike,
    corpus: PathLike,
    runs: dict[str, PathLike],
    n: int,
    depth: int,
    seed: int,
    csv_out: PathLike,
    key_out: PathLike,
    html_out: PathLike,
) -> None:
    sample = with_label_lists(sample_questions(pd.read_parquet(questions), n, seed))
    qids = sample["qid"].tolist()
    top = {model: top_passages(path, qids, depth) for model, path in runs.items()}
    pids = {p for column in LABEL_LISTS for ps in sample[column] for p in ps}
    pids |= {p for run in top.values() for p in run["pid"]}
    texts = passages_of(corpus, sorted(pids))["text"].to_dict()
    sheet, key = audit_sheet(sample, top, texts, seed)
    if len(sample):
        setting = (
            f"{len(sample)} questions drawn with seed {seed}, as evenly over AND, OR and NOT "
            f"as the dataset allows, each with its labelled passages and the top {depth} of "
            f"{', '.join(runs)}: {len(sheet)} (question, passage) pairs."
        )
    else:
        setting = f"No question to audit: {questions} holds no question."
    log.info("%s", setting)
    write_sheet(sheet, key, csv_out, key_out, html_out, setting)


def judge_step(sheet, out, llm, prompts: dict[str, dict], settings: AnswererSettings) -> None:
    rows = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    filled = judge_sheet(rows, llm, {k: Prompt(**v) for k, v in prompts.items()}, settings)
    write_text_atomic(out, filled.to_csv(index=False))


def confusion_step(
    sheet, key, judgements, source: str, depth: int, csv_out, models_out, html_out
) -> None:
    own = pd.read_csv(sheet, dtype=str, keep_default_na=False)
    labels = pd.read_csv(key, dtype=str, keep_default_na=False)
    pairs = judged_pairs(own, labels, read_judgements(judgements, labels))
    questions = own.drop_duplicates("qid")[["qid", "type"]]
    write_confusion(
        confusion(pairs, questions), by_model(pairs), source, depth, csv_out, models_out,
        html_out,
    )  # fmt: skip
