"""Scoring runs against BoolQuestions and the original qrels; metrics.parquet and Table 2.

Questions are scored under both label sets of boolbench.labels: `group` (the paper's
protocol) and `completed` (with the pooled judgements); only the questions of
boolquestions.parquet (the kept ones) are scored, whatever else a run holds.

Artifacts:
- scores/{model}.parquet: one row per query and label set, SCORES_COLUMNS: model, query_set
  ("boolquestions" or "original"), labels ("group" or "completed"; an original query has one
  set of qrels, so its two rows are equal), qid, type (AND/OR/NOT, or ALL for original
  queries), split (train/test, or all for original queries), and the per-query metrics of
  boolbench.retrieval.metrics: METRICS (MRR@10, NegRecall@10 on the construction negatives,
  the same under both label sets, Recall@100, nDCG@10, Judged@10), then Recall@k% per percent
  of evaluation.document_recall (NaN for queries without a document scope; the scope follows
  the label set's relevant passages).
- metrics.parquet: METRICS_COLUMNS: model, query_set, labels, split (all/train/test), type
  (ALL/AND/OR/NOT), metric, value (mean over the queries where the metric is defined; NaN if
  none), n_queries (how many that is: for NegRecall@10, the questions with a negative; for
  Judged@10, those the model retrieved anything for; for Recall@k%, the queries with a
  document scope). ALL pools every question of the split; it is not the mean of the three
  type means.
- tables/table2.{csv,md,tex,html}: the paper's Table 2 (values in percent), one row per model:
  MRR@10 under the group and under the completed labels side by side, NegRecall@10, and
  Judged@10 under both label sets (TABLE2_COLUMNS); the notes say what each block means and how
  many labels of each kind there are.
- tables/document_recall.{csv,md,html}: Recall@k% (the DRC paper's document-scoped recall) per
  model for BoolQuestions ALL/AND/OR/NOT (completed labels) and the original queries, in
  percent; a one-line note instead when no query has a document scope.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa

from boolbench import labels as label_sets
from boolbench.constants import TYPES
from boolbench.io import write_table_atomic, write_text_atomic
from boolbench.labels import COMPLETED, GROUP, LABEL_SET_NOTES, LABEL_SETS, counts_sentence
from boolbench.report import html
from boolbench.report.significance import (
    CORRECTION_NAME,
    SIGNIFICANCE_LABELS,
    TEST_NAME,
    beats_row_above,
)
from boolbench.retrieval.document_scope import document_scope, relevant_of_qrels
from boolbench.retrieval.metrics import (
    METRICS,
    document_recall_name,
    is_document_recall,
    per_query,
    per_query_document_recall,
)
from boolbench.retrieval.provenance import as_metadata, read_provenance, write_provenance_table
from boolbench.retrieval.runs import read_run

PathLike = str | os.PathLike

SPLITS = ("all", "train", "test")
SCORES_COLUMNS = ["model", "query_set", "labels", "qid", "type", "split", *METRICS]
METRICS_COLUMNS = [
    "model", "query_set", "labels", "split", "type", "metric", "value", "n_queries"
]  # fmt: skip


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
    """Per-query metrics of one model on the BoolQuestions questions (under each label set) and
    the original queries, with Recall@k% from its document-scoped runs."""
    run, document_run = read_run(run_path), read_run(document_run_path)

    def with_document_recall(scores: pd.DataFrame, relevant: dict, doc_run) -> pd.DataFrame:
        # Queries without a relevant passage are not in `relevant`; the merge gives them NaN.
        scope = document_scope(corpus_path, relevant, min_document_passages)
        recall = per_query_document_recall(doc_run, relevant, scope.sizes(), percents)
        return scores.merge(recall, on="qid", how="left")

    gains: dict[str, dict[str, float]] = {}
    for qid, pid, relevance in original_qrels[["qid", "pid", "relevance"]].itertuples(index=False):
        gains.setdefault(qid, {})[pid] = float(relevance)
    original = per_query(read_run(original_run_path), gains)
    original = original.assign(type="ALL", split="all", query_set="original")
    original = with_document_recall(
        original, relevant_of_qrels(original_qrels), read_run(original_document_run_path)
    )
    parts = []
    for labels in LABEL_SETS:
        relevant = {q: set(p) for q, p in label_sets.relevant(questions, labels).items()}
        scores = question_scores(run, questions, labels)
        parts.append(with_document_recall(scores, relevant, document_run))
    parts += [original.assign(labels=labels) for labels in LABEL_SETS]
    columns = [*SCORES_COLUMNS, *(document_recall_name(p) for p in percents)]
    return pd.concat(parts, ignore_index=True).assign(model=model)[columns]


def question_scores(
    run: pd.DataFrame, questions: pd.DataFrame, labels: str = COMPLETED
) -> pd.DataFrame:
    """Per-question metrics of a run on BoolQuestions questions (with their type and split)
    under one label set; the run's other queries are ignored."""
    negatives = {q: set(n) for q, n in zip(questions.qid, questions.negatives, strict=True)}
    scores = per_query(run, label_sets.gains(questions, labels), negatives)
    scores = scores.merge(questions[["qid", "type", "split"]], on="qid")
    return scores.assign(query_set="boolquestions", labels=labels)


def metric_columns(scores: pd.DataFrame) -> list[str]:
    """The metric columns of per-query scores: METRICS, then any Recall@k% columns."""
    return [*METRICS, *(c for c in scores.columns if is_document_recall(c))]


def aggregate(scores: pd.DataFrame) -> pd.DataFrame:
    """metrics.parquet rows from per-query scores of any number of models."""
    metrics = metric_columns(scores)
    rows = []
    keys = ["model", "query_set", "labels"]
    for (model, query_set, labels), frame in scores.groupby(keys, sort=False):
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
                rows.append([model, query_set, labels, split, kind, metric, value, len(values)])
    return pd.DataFrame(rows, columns=METRICS_COLUMNS)


def _select(frame: pd.DataFrame, split: str, kind: str) -> pd.DataFrame:
    if split != "all":
        frame = frame[frame["split"] == split]
    if kind != "ALL":
        frame = frame[frame["type"] == kind]
    return frame


class Column(NamedTuple):
    """One column of a metric table: where its values come from in metrics.parquet."""

    header: str
    query_set: str
    labels: str
    type: str
    metric: str
    higher: bool | None  # higher is better; None: not ranked (no bold, no arrow)


def type_columns(prefix: str, labels: str, metric: str, higher: bool | None) -> list[Column]:
    """`prefix` ALL/AND/OR/NOT: one BoolQuestions metric per type."""
    return [
        Column(f"{prefix} {kind}", "boolquestions", labels, kind, metric, higher)
        for kind in ("ALL", *TYPES)
    ]


TABLE2_COLUMNS = [
    Column("MRR@10 original", "original", COMPLETED, "ALL", "MRR@10", True),
    *type_columns("Group MRR@10", GROUP, "MRR@10", True),
    *type_columns("Completed MRR@10", COMPLETED, "MRR@10", True),
    *type_columns("NegRecall@10", COMPLETED, "NegRecall@10", False),
    *type_columns("Group Judged@10", GROUP, "Judged@10", None),
    *type_columns("Completed Judged@10", COMPLETED, "Judged@10", None),
]


TABLE2_LEGEND = (
    "MRR@10: higher is better; NegRecall@10: lower is better; best per column in bold. "
    "Judged@10 is not ranked: it says how much of a model's top 10 the labels can score."
)


def labels_notes(questions: pd.DataFrame) -> list[str]:
    """What the label-set blocks of a table mean, and how many labels of each kind there are."""
    return [
        f"{_sentence(LABEL_SET_NOTES[GROUP])}. {_sentence(LABEL_SET_NOTES[COMPLETED])}. "
        "NegRecall@10 counts the construction negatives (the group's negatives), the same under "
        "both label sets. Judged@10: share of a model's top 10 that is judged under the block's "
        "labels.",
        counts_sentence(questions),
    ]


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def metric_table(
    metrics: pd.DataFrame, models: list[str], split: str, columns: list[Column] = TABLE2_COLUMNS
) -> pd.DataFrame:
    """A table in percent, one row per model in `models` order; NaN where undefined."""
    table = pd.DataFrame({"model": models})
    for column in columns:
        wanted = metrics[
            (metrics["query_set"] == column.query_set)
            & (metrics["labels"] == column.labels)
            & (metrics["split"] == ("all" if column.query_set == "original" else split))
            & (metrics["type"] == column.type)
            & (metrics["metric"] == column.metric)
        ].set_index("model")["value"]
        table[column.header] = [100 * wanted.get(m, np.nan) for m in models]
    return table


def table2(metrics: pd.DataFrame, models: list[str], split: str = "all") -> pd.DataFrame:
    """The paper's Table 2 in percent, one row per model in `models` order; NaN if undefined."""
    return metric_table(metrics, models, split, TABLE2_COLUMNS)


def best_marks(table: pd.DataFrame, columns: list[Column] = TABLE2_COLUMNS) -> pd.DataFrame:
    """True where a value is the best of its column (highest MRR, lowest NegRecall; ties all);
    never in a column that is not ranked."""
    marks = pd.DataFrame(False, index=table.index, columns=table.columns)
    for column in columns:
        values = table[column.header].round(2)
        if column.higher is not None and values.notna().any():
            best = values.max() if column.higher else values.min()
            marks[column.header] = values == best
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
    # Counts depend on neither the model nor the label set: the first model's, completed.
    rows = metrics[metrics["labels"] == COMPLETED]
    rows = rows[rows["model"] == rows["model"].iloc[0]] if len(rows) else rows

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


def of_split(questions: pd.DataFrame, split: str) -> pd.DataFrame:
    """The questions of `split` (all: every one)."""
    return questions if split == "all" else questions[questions["split"] == split]


def write_tables(
    metrics: pd.DataFrame,
    models: list[str],
    split: str,
    tests: pd.DataFrame,
    alpha: float,
    questions: pd.DataFrame,
    out: dict[str, str],
) -> None:
    """tables/table2.{csv,md,tex,html}: best value per column in bold, and a dagger where a
    model's MRR@10 under the completed labels (and on the original queries) beats the row
    above at Holm-corrected p < alpha (`tests`: significance); `questions`: the dataset, for
    the label counts."""
    table = table2(metrics, models, split)
    daggers = pd.DataFrame(False, index=table.index, columns=table.columns)
    for column in TABLE2_COLUMNS:
        if column.metric == "MRR@10" and column.labels == SIGNIFICANCE_LABELS:
            column_split = "all" if column.query_set == "original" else split
            daggers[column.header] = beats_row_above(
                tests, models, column.query_set, column.type, column_split, alpha
            )
    notes = [
        *labels_notes(of_split(questions, split)),
        counts_line(metrics, split),
        f"\N{DAGGER}: MRR@10 higher than the row above at p < {alpha:g} ({TEST_NAME} on "
        f"per-question MRR@10 under the {SIGNIFICANCE_LABELS} labels, {CORRECTION_NAME}).",
    ]
    write_table_files(table, TABLE2_COLUMNS, notes, out, "Table 2: retrieval", daggers)


def write_table_files(
    table: pd.DataFrame,
    columns: list[Column],
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

    headers = [column.header for column in columns]
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

    # Column groups share a header prefix ("Group MRR@10"); the last word goes in the second row.
    groups: list[list] = []
    for column in columns:
        prefix, _, last = column.header.rpartition(" ")
        if groups and groups[-1][0] == prefix:
            groups[-1][1].append(last)
        else:
            groups.append([prefix, [last], column.higher])
    top, rules, start = [], [], 2
    for prefix, lasts, higher in groups:
        arrow = {True: r" $\uparrow$", False: r" $\downarrow$", None: ""}[higher]
        top.append(rf"\multicolumn{{{len(lasts)}}}{{c}}{{{prefix}{arrow}}}")
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


def document_recall_columns(percents: list[float]) -> list[Column]:
    """The document recall table's columns: per percent, BoolQuestions ALL/AND/OR/NOT (completed
    labels) and the original queries."""
    columns = []
    for percent in percents:
        name = document_recall_name(percent)
        columns += type_columns(name, COMPLETED, name, True)
        columns.append(Column(f"{name} original", "original", COMPLETED, "ALL", name, True))
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
        (metrics["model"] == models[0])
        & (metrics["labels"] == COMPLETED)
        & (metrics["metric"] == document_recall_name(percents[0]))
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
        "Recall@k%: share of the relevant passages (BoolQuestions: under the completed labels, "
        "positives and pooled positives) in the top k% (ceil, at least 1) of the passages of the "
        "query's document, each document ranked on its own; higher is better; best per column "
        "in bold."
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


# ---------------------------------------------------------------------------------------------
# The evaluation's file-level steps (each called by one workflow script)


def score_model_step(
    model: str,
    paths: dict[str, PathLike],
    document_recall: dict,
    out: PathLike,
) -> None:
    """scores/{model}.parquet: per-query metrics of one model (`paths`: run, original,
    document, document_original, questions, qrels, corpus), with its run's provenance."""
    scores = score_model(
        model,
        paths["run"],
        paths["original"],
        questions=pd.read_parquet(paths["questions"]),
        original_qrels=pd.read_parquet(paths["qrels"]),
        document_run_path=paths["document"],
        original_document_run_path=paths["document_original"],
        corpus_path=paths["corpus"],
        percents=list(document_recall["percents"]),
        min_document_passages=document_recall["min_document_passages"],
    )
    write_frame(scores, out, read_provenance(paths["run"]))


def table2_step(
    models: list[str],
    score_paths: list[PathLike],
    significance_path: PathLike,
    questions_path: PathLike,
    split: str,
    alpha: float,
    out: dict[str, PathLike],
) -> None:
    """metrics.parquet, Table 2 (csv, md, tex, html) and the models' provenance table
    (provenance_md, provenance_html) from every model's scores, in the order of `models`."""
    scores = pd.concat([pd.read_parquet(p) for p in score_paths], ignore_index=True)
    provenance = {m: read_provenance(p) for m, p in zip(models, score_paths, strict=True)}
    metrics = aggregate(scores)
    write_frame(metrics, out["metrics"], provenance)
    tables = {key: out[key] for key in ("csv", "md", "tex", "html")}
    write_tables(
        metrics, models, split, pd.read_parquet(significance_path), alpha,
        pd.read_parquet(questions_path), tables,
    )  # fmt: skip
    write_provenance_table(provenance, out["provenance_md"], out["provenance_html"])


def document_recall_step(
    metrics_path: PathLike, models: list[str], split: str, settings: dict, out: dict
) -> None:
    """tables/document_recall.{csv,md,html} from metrics.parquet (`settings`:
    evaluation.document_recall)."""
    write_document_recall_table(
        pd.read_parquet(metrics_path), models, split, list(settings["percents"]),
        settings["min_document_passages"], out,
    )  # fmt: skip
