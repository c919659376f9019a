"""Scoring runs against BoolQuestions and the original qrels; metrics.parquet and Table 2.

Artifacts:
- scores/{model}.parquet: one row per query, SCORES_COLUMNS: model, query_set ("boolquestions"
  or "original"), qid, type (AND/OR/NOT, or ALL for original queries), split (train/test, or
  all for original queries), and the per-query metrics of boolbench.retrieval.metrics: METRICS, then
  Recall@k% per percent of evaluation.document_recall (NaN for queries without a document scope).
- metrics.parquet: METRICS_COLUMNS: model, query_set, split (all/train/test), type
  (ALL/AND/OR/NOT), metric, value (mean over the queries where the metric is defined; NaN if
  none), n_queries (how many that is: for NegRecall@10, the questions with a negative; for
  Recall@k%, the queries with a document scope).
  ALL pools every question of the split; it is not the mean of the three type means.
- tables/table2.{csv,md,tex,html}: the paper's Table 2 (values in percent), one row per model.
- tables/document_recall.{csv,md,html}: Recall@k% (the DRC paper's document-scoped recall) per
  model for BoolQuestions ALL/AND/OR/NOT and the original queries, in percent; a one-line note
  instead when no query has a document scope.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow as pa

from boolbench.constants import TYPES
from boolbench.io import write_table_atomic, write_text_atomic
from boolbench.report import html
from boolbench.report.significance import CORRECTION_NAME, TEST_NAME, beats_row_above
from boolbench.retrieval.document_scope import (
    document_scope,
    relevant_of_qrels,
    relevant_of_questions,
)
from boolbench.retrieval.metrics import (
    METRICS,
    document_recall_name,
    is_document_recall,
    per_query,
    per_query_document_recall,
)
from boolbench.retrieval.provenance import as_metadata
from boolbench.retrieval.runs import read_run

SPLITS = ("all", "train", "test")
SCORES_COLUMNS = ["model", "query_set", "qid", "type", "split", *METRICS]
METRICS_COLUMNS = ["model", "query_set", "split", "type", "metric", "value", "n_queries"]


def score_model(
    model: str,
    run_path: str | os.PathLike,
    original_run_path: str | os.PathLike,
    questions: pd.DataFrame,
    original_qrels: pd.DataFrame,
    document_run_path: str | os.PathLike,
    original_document_run_path: str | os.PathLike,
    corpus_path: str | os.PathLike,
    percents: list[float],
    min_document_passages: int,
) -> pd.DataFrame:
    """Per-query metrics of one model on the BoolQuestions questions and the original queries,
    with Recall@k% from its document-scoped runs."""
    bool_scores = question_scores(read_run(run_path), questions)

    gains: dict[str, dict[str, float]] = {}
    for qid, pid, relevance in original_qrels[["qid", "pid", "relevance"]].itertuples(index=False):
        gains.setdefault(qid, {})[pid] = float(relevance)
    original = per_query(read_run(original_run_path), gains)
    original = original.assign(type="ALL", split="all", query_set="original")

    parts = []
    for frame, relevant, path in (
        (bool_scores, relevant_of_questions(questions), document_run_path),
        (original, relevant_of_qrels(original_qrels), original_document_run_path),
    ):
        # Queries without a relevant passage are not in `relevant`; the merge gives them NaN.
        scope = document_scope(corpus_path, relevant, min_document_passages)
        recall = per_query_document_recall(read_run(path), relevant, scope.sizes(), percents)
        parts.append(frame.merge(recall, on="qid", how="left"))
    columns = [*SCORES_COLUMNS, *(document_recall_name(p) for p in percents)]
    return pd.concat(parts, ignore_index=True).assign(model=model)[columns]


def question_scores(run: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """Per-question metrics of a run on BoolQuestions questions (with their type and split)."""
    positives = {
        q: dict.fromkeys(p, 1.0) for q, p in zip(questions.qid, questions.positives, strict=True)
    }
    negatives = {q: set(n) for q, n in zip(questions.qid, questions.negatives, strict=True)}
    scores = per_query(run, positives, negatives)
    scores = scores.merge(questions[["qid", "type", "split"]], on="qid")
    return scores.assign(query_set="boolquestions")


def metric_columns(scores: pd.DataFrame) -> list[str]:
    """The metric columns of per-query scores: METRICS, then any Recall@k% columns."""
    return [*METRICS, *(c for c in scores.columns if is_document_recall(c))]


def aggregate(scores: pd.DataFrame) -> pd.DataFrame:
    """metrics.parquet rows from per-query scores of any number of models."""
    metrics = metric_columns(scores)
    rows = []
    for (model, query_set), frame in scores.groupby(["model", "query_set"], sort=False):
        if query_set == "original":
            groups = [("all", "ALL", frame)]
        else:
            groups = [
                (split, kind, part)
                for split in SPLITS
                for kind in ("ALL", *TYPES)
                for part in [_select(frame, split, kind)]
            ]
        for split, kind, part in groups:
            for metric in metrics:
                values = part[metric].dropna()
                value = float(values.mean()) if len(values) else np.nan
                rows.append([model, query_set, split, kind, metric, value, len(values)])
    return pd.DataFrame(rows, columns=METRICS_COLUMNS)


def _select(frame: pd.DataFrame, split: str, kind: str) -> pd.DataFrame:
    if split != "all":
        frame = frame[frame["split"] == split]
    if kind != "ALL":
        frame = frame[frame["type"] == kind]
    return frame


# Table 2 columns: (header, query_set, type, metric, higher is better)
TABLE2_COLUMNS = [
    ("MRR@10 original", "original", "ALL", "MRR@10", True),
    *[(f"BDR MRR@10 {t}", "boolquestions", t, "MRR@10", True) for t in ("ALL", *TYPES)],
    *[(f"BDR NegRecall@10 {t}", "boolquestions", t, "NegRecall@10", False)
      for t in ("ALL", *TYPES)],
]  # fmt: skip


TABLE2_LEGEND = "MRR@10: higher is better; NegRecall@10: lower is better; best per column in bold."


def metric_table(
    metrics: pd.DataFrame, models: list[str], split: str, columns: list[tuple] = TABLE2_COLUMNS
) -> pd.DataFrame:
    """A table in percent, one row per model in `models` order; NaN where undefined."""
    table = pd.DataFrame({"model": models})
    for header, query_set, kind, metric, _ in columns:
        wanted = metrics[
            (metrics["query_set"] == query_set)
            & (metrics["split"] == ("all" if query_set == "original" else split))
            & (metrics["type"] == kind)
            & (metrics["metric"] == metric)
        ].set_index("model")["value"]
        table[header] = [100 * wanted.get(m, np.nan) for m in models]
    return table


def table2(metrics: pd.DataFrame, models: list[str], split: str = "all") -> pd.DataFrame:
    """The paper's Table 2 in percent, one row per model in `models` order; NaN if undefined."""
    return metric_table(metrics, models, split, TABLE2_COLUMNS)


def best_marks(table: pd.DataFrame, columns: list[tuple] = TABLE2_COLUMNS) -> pd.DataFrame:
    """True where a value is the best of its column (highest MRR, lowest NegRecall; ties all)."""
    marks = pd.DataFrame(False, index=table.index, columns=table.columns)
    for header, *_, higher in columns:
        values = table[header].round(2)
        if values.notna().any():
            best = values.max() if higher else values.min()
            marks[header] = values == best
    return marks


def counts_line(
    metrics: pd.DataFrame,
    split: str,
    original: bool = True,
    label: str | None = None,
    key: str = "evaluation.table_split",
) -> str:
    """How many queries each column averages over, and why the question columns are empty
    when no question is in the split (`key`: the setting that chose it)."""
    # Counts do not depend on the model: the first one's hold (none when nothing was scored).
    rows = metrics[metrics["model"] == metrics["model"].iloc[0]] if len(metrics) else metrics

    def n(query_set: str, split: str, kind: str, metric: str) -> int:
        match = rows[
            (rows["query_set"] == query_set)
            & (rows["split"] == split)
            & (rows["type"] == kind)
            & (rows["metric"] == metric)
        ]
        return int(match["n_queries"].sum())

    parts = [f"original queries {n('original', 'all', 'ALL', 'MRR@10')}"] if original else []
    for kind in ("ALL", *TYPES):
        parts.append(
            f"{kind} {n('boolquestions', split, kind, 'MRR@10')} "
            f"({n('boolquestions', split, kind, 'NegRecall@10')} with negatives)"
        )
    name = label or split
    line = f"Questions ({name} split): " + ", ".join(parts) + "."
    if n("boolquestions", split, "ALL", "MRR@10") == 0:
        where = "was scored" if name == "all" else f"is in the {name} split ({key})"
        line += f" No question {where}, so the question columns are empty."
    return line


def write_tables(
    metrics: pd.DataFrame,
    models: list[str],
    split: str,
    tests: pd.DataFrame,
    alpha: float,
    out: dict[str, str],
) -> None:
    """tables/table2.{csv,md,tex,html}: best value per column in bold, and a dagger where a
    model's MRR@10 beats the row above at Holm-corrected p < alpha (`tests`: significance)."""
    table = table2(metrics, models, split)
    daggers = pd.DataFrame(False, index=table.index, columns=table.columns)
    for header, query_set, kind, metric, _ in TABLE2_COLUMNS:
        if metric == "MRR@10":
            column_split = "all" if query_set == "original" else split
            daggers[header] = beats_row_above(tests, models, query_set, kind, column_split, alpha)
    notes = [
        counts_line(metrics, split),
        f"\N{DAGGER}: MRR@10 higher than the row above at p < {alpha:g} ({TEST_NAME} on "
        f"per-question MRR@10, {CORRECTION_NAME}).",
    ]
    write_table_files(table, TABLE2_COLUMNS, notes, out, "Table 2: retrieval", daggers)


def write_table_files(
    table: pd.DataFrame,
    columns: list[tuple],
    notes: list[str],
    out: dict[str, str],
    title: str,
    daggers: pd.DataFrame | None = None,
    legend: str = TABLE2_LEGEND,
) -> None:
    """A metric table as .csv (numbers), .md, .tex (when `out` names one) and .html (best value
    per column in bold, a dagger where `daggers` is True)."""
    marks = best_marks(table, columns)
    if daggers is None:
        daggers = pd.DataFrame(False, index=table.index, columns=table.columns)
    write_text_atomic(out["csv"], table.round(4).to_csv(index=False))

    def cell(row: int, header: str, bold: tuple[str, str], dagger: str) -> str:
        value = table.at[row, header]
        if pd.isna(value):
            return "-"
        text = f"{value:.2f}" + (dagger if daggers.at[row, header] else "")
        return f"{bold[0]}{text}{bold[1]}" if marks.at[row, header] else text

    headers = [h for h, *_ in columns]
    lines = html.markdown_table(
        ["Model", *headers],
        [
            [table.at[row, "model"], *(cell(row, h, ("**", "**"), "\N{DAGGER}") for h in headers)]
            for row in table.index
        ],
    )
    write_text_atomic(out["md"], "\n".join([*lines, "", legend, *notes, ""]))

    rows = [
        [html.escape(str(table.at[row, "model"]))]
        + [cell(row, h, ("<b>", "</b>"), "&dagger;") for h in headers]
        for row in table.index
    ]
    body = html.table(["Model", *headers], rows, text_columns=(0,), row_headers=True)
    html.write_page(out["html"], title, body + html.notes([legend, *notes]))
    if "tex" not in out:
        return

    # Column groups share a header prefix ("BDR MRR@10"); the last word goes in the second row.
    groups: list[list] = []
    for header, *_, higher in columns:
        prefix, _, last = header.rpartition(" ")
        if groups and groups[-1][0] == prefix:
            groups[-1][1].append(last)
        else:
            groups.append([prefix, [last], higher])
    top, rules, start = [], [], 2
    for prefix, lasts, higher in groups:
        arrow = r"$\uparrow$" if higher else r"$\downarrow$"
        top.append(rf"\multicolumn{{{len(lasts)}}}{{c}}{{{prefix} {arrow}}}")
        rules.append(rf"\cmidrule(lr){{{start}-{start + len(lasts) - 1}}}")
        start += len(lasts)
    tex = [
        r"\begin{tabular}{l" + "c" * len(headers) + "}",
        r"\toprule",
        "Model & " + " & ".join(top) + r" \\",
        " ".join(rules),
        " & " + " & ".join(last for _, lasts, _ in groups for last in lasts) + r" \\",
        r"\midrule",
    ]
    for row in table.index:
        cells = [cell(row, h, (r"\textbf{", "}"), r"$^\dagger$") for h in headers]
        name = str(table.at[row, "model"]).replace("_", r"\_")
        tex.append(f"{name} & " + " & ".join(cells) + r" \\")
    tex += [r"\bottomrule", r"\end{tabular}", *(f"% {note}" for note in notes), ""]
    write_text_atomic(out["tex"], "\n".join(tex))


def document_recall_columns(percents: list[float]) -> list[tuple]:
    """The document recall table's columns: per percent, BoolQuestions ALL/AND/OR/NOT and the
    original queries (the format of TABLE2_COLUMNS)."""
    columns = []
    for percent in percents:
        name = document_recall_name(percent)
        columns += [(f"{name} {t}", "boolquestions", t, name, True) for t in ("ALL", *TYPES)]
        columns.append((f"{name} original", "original", "ALL", name, True))
    return columns


def write_document_recall_table(
    metrics: pd.DataFrame,
    models: list[str],
    split: str,
    percents: list[float],
    min_document_passages: int,
    out: dict[str, str],
) -> None:
    """tables/document_recall.{csv,md,html}: Recall@k% in percent, best per column in bold, and
    how many queries each column averages over; one line instead when no query is scoped."""
    rows = metrics[
        (metrics["model"] == models[0]) & (metrics["metric"] == document_recall_name(percents[0]))
    ]

    def n(query_set: str, kind: str, column_split: str) -> int:
        match = rows[
            (rows["query_set"] == query_set)
            & (rows["split"] == column_split)
            & (rows["type"] == kind)
        ]
        return int(match["n_queries"].sum())

    # Whether a query is scoped does not depend on the model: the first model's counts hold.
    counts = {kind: n("boolquestions", kind, split) for kind in ("ALL", *TYPES)}
    counts["original"] = n("original", "ALL", "all")
    scoped = f"all their relevant passages in one document of at least {min_document_passages}"
    title = "Document-scoped recall"
    if counts["ALL"] + counts["original"] == 0:
        line = (
            f"No query ({split} split of the questions, or original query) has {scoped} "
            "passages (doc_id in corpus.parquet), so document-scoped recall is not defined here."
        )
        write_text_atomic(out["csv"], pd.DataFrame({"note": [line]}).to_csv(index=False))
        write_text_atomic(out["md"], line + "\n")
        html.write_page(out["html"], title, html.notes([line]))
        return
    columns = document_recall_columns(percents)
    table = metric_table(metrics, models, split, columns)
    legend = (
        "Recall@k%: share of the relevant passages in the top k% (ceil, at least 1) of the "
        "passages of the query's document, each document ranked on its own; higher is better; "
        "best per column in bold."
    )
    notes = [
        f"Queries with {scoped} passages ({split} split): "
        + ", ".join(f"{kind} {counts[kind]}" for kind in ("ALL", *TYPES))
        + f", original queries {counts['original']}."
    ]
    write_table_files(table, columns, notes, out, title, legend=legend)


def write_frame(frame: pd.DataFrame, path: str | os.PathLike, provenance=None) -> None:
    """Write scores or metrics; `provenance` (boolbench.retrieval.provenance) goes into the
    footer."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    if provenance is not None:
        table = table.replace_schema_metadata({**table.schema.metadata, **as_metadata(provenance)})
    write_table_atomic(table, path)
