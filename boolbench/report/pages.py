"""Pages of the HTML report that are not metric tables: LLM accounting, example questions and
the config of the run (`snakemake --report report.html` gathers them with tables and figures).

Artifacts:
- tables/llm_accounting.csv and .html: ACCOUNTING_COLUMNS, one row per LLM job and a total.
- report/examples.html: kept and rejected questions per type with shortened passages.
- report/config.yaml and .html: the validated config (defaults filled) for one corpus.
- report/rankings.html: per question, each model's top 10 with the group labels and the pooled
  judgements marked apart.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import yaml

from boolbench.constants import TYPES
from boolbench.errors import BoolbenchError
from boolbench.io import write_text_atomic
from boolbench.labels import with_pooled
from boolbench.report import html
from boolbench.report.html import escape

PathLike = str | os.PathLike
ACCOUNTING_COLUMNS = [
    "step",
    "requests",
    "cache_hits",
    "api_calls",
    "retries",
    "failures",
    "prompt_tokens",
    "completion_tokens",
    "cached_prompt_tokens",
    "cached_completion_tokens",
    "estimated_cost",
    "wall_s",
]


# ---------------------------------------------------------------------------------------------
# LLM accounting


def llm_accounting(paths: dict[str, PathLike]) -> pd.DataFrame:
    """One row per LLM job (from its llm_accounting/*.json) and a `total` row."""
    rows = []
    for step, path in paths.items():
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
            rows.append({"step": step, **{c: record[c] for c in ACCOUNTING_COLUMNS[1:]}})
        except (OSError, ValueError, KeyError) as err:
            raise BoolbenchError(f"{path}: not an LLM accounting file ({err})") from None
    table = pd.DataFrame(rows, columns=ACCOUNTING_COLUMNS)
    total = table.drop(columns="step").sum().to_dict()
    return pd.concat([table, pd.DataFrame([{"step": "total", **total}])], ignore_index=True)


def llm_accounting_step(paths: dict[str, PathLike], csv_out: PathLike, html_out: PathLike) -> None:
    """tables/llm_accounting.{csv,html} from every LLM stage's accounting (step -> json)."""
    write_llm_accounting(llm_accounting(paths), csv_out, html_out)


def write_llm_accounting(table: pd.DataFrame, csv_out: PathLike, html_out: PathLike) -> None:
    write_text_atomic(csv_out, table.to_csv(index=False, float_format="%.4f"))

    def cell(column: str, value) -> str:
        if column == "step":
            return escape(str(value))
        if column == "estimated_cost":
            return f"{value:.4f}"
        if column == "wall_s":
            return f"{value:.1f}"
        return f"{int(value):,}"

    rows = [[cell(c, v) for c, v in zip(ACCOUNTING_COLUMNS, row, strict=True)]
            for row in table.itertuples(index=False)]  # fmt: skip
    notes = [
        "Each row is the last run of one LLM stage (summed over its llm.shards jobs). "
        "cache_hits were answered from the response cache and cost nothing now; "
        "prompt/completion tokens and estimated_cost count new calls only (cost from the "
        "llm price settings; 0 for the embedded model). wall_s adds up the jobs' times.",
    ]
    body = html.table(ACCOUNTING_COLUMNS, rows, text_columns=(0,), row_headers=True)
    html.write_page(html_out, "LLM accounting", body + html.notes(notes))


# ---------------------------------------------------------------------------------------------
# Example questions


def pick_examples(all_questions: pd.DataFrame, per_type: int, seed: int) -> pd.DataFrame:
    """Up to `per_type` kept and `per_type` rejected questions of each type, drawn with `seed`."""
    picked = []
    for kind in TYPES:
        part = all_questions[all_questions["type"] == kind]
        for kept in (True, False):
            group = part[part["kept"] == kept]
            picked.append(group.sample(min(per_type, len(group)), random_state=seed))
    frame = pd.concat(picked, ignore_index=True) if picked else all_questions.head(0)
    return frame.sort_values(["type", "kept", "qid"], ascending=[True, False, True], key=_order)


def _order(column: pd.Series) -> pd.Series:
    return column.map(TYPES.index) if column.name == "type" else column


def shorten(text: str, words: int) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" \N{HORIZONTAL ELLIPSIS}" if len(parts) > words else "")


def passages_of(corpus_path: PathLike, pids: list[str]) -> pd.DataFrame:
    """Title and text of the passages `pids`, indexed by pid (none: an empty frame, which
    pyarrow's filter on an empty list cannot give)."""
    columns = ["pid", "title", "text"]
    if not pids:
        return pd.DataFrame(columns=columns).set_index("pid")
    filters = [("pid", "in", pids)]
    return pq.read_table(corpus_path, columns=columns, filters=filters).to_pandas().set_index("pid")


def write_examples(
    all_questions_path: PathLike,
    corpus_path: PathLike,
    answers_path: PathLike,
    per_type: int,
    passage_words: int,
    seed: int,
    html_out: PathLike,
) -> None:
    """report/examples.html: each picked question with its operands, its positive and negative
    passages (shortened) and what the cyclic-consistency answerer said for each passage."""
    examples = pick_examples(pd.read_parquet(all_questions_path), per_type, seed)
    pids = sorted({p for col in ("positives", "negatives") for ps in examples[col] for p in ps})
    corpus = passages_of(corpus_path, pids)
    answers = pd.read_parquet(answers_path)
    said = {
        (qid, pid): (answer, answered, scope)
        for qid, pid, answer, answered, scope in answers[
            ["qid", "pid", "answer", "answered", "scope"]
        ].values
    }

    def passages(qid: str, pids) -> str:
        items = []
        for pid in pids:
            title = corpus["title"].get(pid) or pid
            text = shorten(str(corpus["text"].get(pid, "(not in the corpus)")), passage_words)
            items.append(
                f"<li><b>{escape(str(title))}</b>: <span class=passage>{escape(text)}</span>"
                f"{_answer_note(*said.get((qid, pid), (None, None, None)), passage_words)}</li>"
            )
        return f"<ul>{''.join(items)}</ul>" if items else "-"

    headers = ["question", "positive passages", "negative passages", "filter"]
    sections = []
    for kind in TYPES:
        rows = [
            [_question_cell(q), passages(q.qid, q.positives), passages(q.qid, q.negatives),
             _verdict(q)]
            for q in examples[examples["type"] == kind].itertuples()
        ]  # fmt: skip
        sections.append(html.table(headers, rows, f"{kind} questions", text_columns=(0, 1, 2, 3)))
    notes = [
        f"Up to {per_type} kept and {per_type} rejected questions per type, drawn at random "
        f"(seed {seed}); passages cut to {passage_words} words. A question is kept when the "
        "answerer answers it from every positive passage (and, in strict mode, refuses every "
        "negative one); it reads the question itself, or its operands (the simple "
        "questions of its Boolean expression: filter.scope)."
    ]
    html.write_page(html_out, "Example questions", html.notes(notes) + "\n".join(sections))


def _question_cell(q) -> str:
    """The question (or why there is none), its qid and origin, and its operand questions."""
    question = (
        f"<b>{escape(q.question)}</b>" if isinstance(q.question, str) else
        "<i>(no question: dropped)</i>"
    )  # fmt: skip
    origin = f"{q.source}, {q.status}" + (f" ({q.reason})" if pd.notna(q.reason) else "")
    operands = "".join(f"<li>{escape(str(t))}</li>" for t in q.operand_texts)
    return f"{question}<br><small>{escape(q.qid)} &middot; {escape(origin)}</small>" + (
        f"<br>from:<ul>{operands}</ul>" if operands else ""
    )


def _answer_note(answer, answered, scope, words: int) -> str:
    """What the answerer said for one passage ('' when it was not asked)."""
    if scope is None:  # not asked
        return ""
    if answered is None or pd.isna(answered):
        return "<br><i>answerer: the call failed</i>"
    if scope == "expression":
        verdict = "answers" if answered else "does not answer"
        return f"<br><i>answerer, reading the operands: {verdict}</i>"
    label = "answerer said:" if answered else "answerer refused:"
    return f"<br><i>{label}</i> {escape(shorten(str(answer), words))}"


def _verdict(q) -> str:
    if q.kept:
        return '<span class="kept">kept</span>'
    return f'<span class="rejected">rejected: {escape(str(q.reject_reason))}</span>'


# ---------------------------------------------------------------------------------------------
# Config


def corpus_config(config: dict, corpus: str) -> dict:
    """The run's config as one corpus sees it: every section, and only this corpus's entry."""
    return {**config, "corpora": {corpus: config["corpora"][corpus]}}


def write_config(config: dict, yaml_out: PathLike, html_out: PathLike) -> None:
    text = yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    write_text_atomic(yaml_out, text)
    notes = [
        "The validated config with every default filled in: rerunning with it as --configfile "
        "reproduces these results. Secrets are never part of it (only the names of the "
        "environment variables that hold them)."
    ]
    html.write_page(html_out, "Config", html.notes(notes) + f"<pre>{escape(text)}</pre>")


# ---------------------------------------------------------------------------------------------
# Per-question rankings


def ranking_rows(questions: pd.DataFrame, runs: dict[str, pd.DataFrame], top: int) -> pd.DataFrame:
    """Per question: how many models rank a (construction) negative above every relevant
    passage under the completed labels (positives and pooled positives), within the top `top`."""
    questions = with_pooled(questions)
    rows = []
    for q in questions.itertuples():
        positives = {*q.positives, *q.pooled_positives}
        negatives = set(q.negatives)
        row = {"qid": q.qid, "inversions": 0}
        for run in runs.values():
            ranked = run.get(q.qid)
            ranks = (
                dict(zip(ranked["pid"], ranked["rank"], strict=True)) if ranked is not None else {}
            )
            best_pos = min((ranks[p] for p in positives if p in ranks), default=np.inf)
            best_neg = min((ranks[p] for p in negatives if p in ranks), default=np.inf)
            row["inversions"] += int(best_neg < best_pos and best_neg <= top)
        rows.append(row)
    return pd.DataFrame(rows, columns=["qid", "inversions"])


# The mark and CSS classes of each label list on the rankings page: group labels plain, pooled
# judgements in italics with a "p".
RANKING_MARKS = {
    "positives": ("+", "kept"),
    "negatives": ("-", "rejected"),
    "pooled_positives": ("p+", "kept pooled"),
    "pooled_negatives": ("p-", "rejected pooled"),
}


def write_rankings(
    questions_path: PathLike,
    corpus_path: PathLike,
    run_paths: dict[str, PathLike],
    top: int,
    max_questions: int,
    html_out: PathLike,
) -> None:
    """report/rankings.html: each question with every model's top `top`, group positives and
    negatives marked apart from the pooled judgements; NOT questions whose excluded passage
    outranks every relevant passage come first. Runs are read for the dataset's questions
    only."""
    questions = with_pooled(pd.read_parquet(questions_path))
    qids = set(questions["qid"])
    runs = {}
    for model, path in run_paths.items():
        run = pd.read_parquet(path)
        run = run[(run["rank"] <= top) & run["qid"].isin(qids)]
        runs[model] = {qid: part.sort_values("rank") for qid, part in run.groupby("qid")}
    order = ranking_rows(questions, runs, top)
    questions = questions.merge(order, on="qid")
    questions["_not_first"] = (questions["type"] != "NOT") | (questions["inversions"] == 0)
    questions = questions.sort_values(
        ["_not_first", "inversions", "type", "qid"], ascending=[True, False, True, True],
        key=lambda c: c.map(TYPES.index) if c.name == "type" else c,
    )  # fmt: skip
    shown = questions.head(max_questions)
    pids = sorted({p for parts in runs.values() for part in parts.values() for p in part["pid"]})
    corpus = passages_of(corpus_path, pids)

    def cell(pid: str, label_of: dict[str, str]) -> str:
        title = corpus["title"].get(pid) if pid in corpus.index else None
        text = str(corpus["text"].get(pid, ""))
        name = escape(str(title) if isinstance(title, str) and title else shorten(text, 6))
        if pid in label_of:
            mark, css = RANKING_MARKS[label_of[pid]]
            name = f'<span class="{css}"><b>{mark} {name}</b></span>'
        return f'<span title="{escape(shorten(text, 60))}">{name}</span>'

    sections = []
    for q in shown.itertuples():
        label_of = {pid: column for column in RANKING_MARKS for pid in getattr(q, column)}
        body = []
        for rank in range(1, top + 1):
            cells = [str(rank)]
            for model in runs:
                part = runs[model].get(q.qid)
                hit = part[part["rank"] == rank] if part is not None else part
                cells.append(
                    cell(hit["pid"].iloc[0], label_of) if hit is not None and len(hit) else ""
                )
            body.append(cells)
        flag = (
            f' &middot; <span class="rejected">a negative above every relevant passage for '
            f"{q.inversions} of {len(runs)} models</span>"
            if q.inversions
            else ""
        )
        sections.append(
            f"<h4>{escape(q.qid)} &middot; {escape(q.type)}{flag}</h4><p><b>"
            f"{escape(q.question)}</b></p>"
            + html.table(["rank", *runs], body, text_columns=tuple(range(1, len(runs) + 1)))
        )
    is_not = questions["type"] == "NOT"
    not_inverted = int((is_not & (questions["inversions"] > 0)).sum())
    notes = [
        f"Each model's top {top} for {len(shown)} of {len(questions)} questions (hover for the "
        "passage). Group labels: '+' a positive, '-' a negative (the construction's: for NOT "
        "the excluded passage). Pooled judgements, in italics: 'p+' a pooled passage the judge "
        "found relevant, 'p-' one it found not relevant. Unmarked passages are unjudged. NOT "
        "questions whose excluded (negative) passage ranks above every relevant passage "
        "(positives and pooled positives) come first: "
        f"{not_inverted} of {int(is_not.sum())} NOT questions for at least one model.",
    ]
    html.write_page(html_out, "Rankings per question", html.notes(notes) + "\n".join(sections))
