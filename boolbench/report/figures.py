"""The report's figures (matplotlib, PNG and SVG), each answering one question.

Artifacts: figures/{figure}.png and .svg, for each name of FIGURES. The plotting functions take
DataFrames (the workflow's artifacts, read by `figure_step`) and return a matplotlib Figure.
The retrieval figures show metrics under the completed labels (boolbench.labels).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from boolbench.constants import TYPES
from boolbench.io import write_bytes_atomic
from boolbench.labels import COMPLETED

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PathLike = str | os.PathLike


def _pyplot():
    """matplotlib.pyplot, imported on first use: the workflow imports FIGURES at parse time."""
    import matplotlib

    matplotlib.use("Agg")  # jobs have no display
    import matplotlib.pyplot as plt

    # SVGs keep their text as text (searchable, smaller); a fixed hash salt and no date make a
    # rerun on the same data write the same bytes.
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "boolbench", "figure.dpi": 100})
    return plt


@dataclass(frozen=True)
class FigureSpec:
    title: str
    question: str  # what a reader learns from it (the report caption)
    category: str  # the report's section


FIGURES = {
    "mrr_by_type": FigureSpec(
        "MRR@10 per question type and model",
        "Is NOT the hardest question type, for every retriever?",
        "Retrieval",
    ),
    "negrecall_vs_mrr": FigureSpec(
        "NegRecall@10 against MRR@10",
        "Which retrievers find the positive passage without also retrieving the passages the "
        "question excludes? Lower right is better.",
        "Retrieval",
    ),
    "group_sizes": FigureSpec(
        "Passages per cluster (or document group)",
        "How large are the groups that candidate passages are drawn from?",
        "Dataset",
    ),
    "svd_variance": FigureSpec(
        "Explained variance of the TruncatedSVD",
        "How much of the embedding variance do the SVD components keep before clustering?",
        "Dataset",
    ),
    "pass_rates": FigureSpec(
        "Pass rates of validation and of the cyclic-consistency filter",
        "Which question types does the LLM write well (validation), and which survive the "
        "answerer (filter)?",
        "Dataset",
    ),
}


def corpus_figures(imported: bool, grouping: str) -> list[str]:
    """The figures a corpus's report shows: imported questions only the retrieval figures
    (nothing was generated), grouping by document no SVD (none was computed)."""
    names = list(FIGURES)
    if imported:
        return [n for n in names if FIGURES[n].category == "Retrieval"]
    if grouping == "document":
        names.remove("svd_variance")
    return names


def _metric(metrics: pd.DataFrame, metric: str, split: str) -> pd.DataFrame:
    """model x type table of one BoolQuestions metric in percent, under the completed labels."""
    rows = metrics[
        (metrics["query_set"] == "boolquestions")
        & (metrics["labels"] == COMPLETED)
        & (metrics["split"] == split)
        & (metrics["metric"] == metric)
    ]
    return 100 * rows.pivot_table(index="model", columns="type", values="value", aggfunc="first")


def mrr_by_type(metrics: pd.DataFrame, models: list[str], split: str) -> Figure:
    """Grouped bars: one group per type (ALL, AND, OR, NOT), one bar per model."""
    values = _metric(metrics, "MRR@10", split).reindex(index=models, columns=["ALL", *TYPES])
    fig, ax = _pyplot().subplots(figsize=(max(6, 1.2 * len(models) + 4), 4))
    width = 0.8 / max(len(models), 1)
    x = np.arange(values.shape[1])
    for i, model in enumerate(models):
        ax.bar(x + (i - (len(models) - 1) / 2) * width, values.loc[model], width, label=model)
    ax.set_xticks(x, values.columns)
    ax.set_ylabel("MRR@10 (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"MRR@10 per question type ({split} split, completed labels)")
    _say_if_empty(ax, values, split)
    _legend_below(ax, len(models))
    ax.grid(axis="y", alpha=0.3)
    return fig


def negrecall_vs_mrr(metrics: pd.DataFrame, models: list[str], split: str) -> Figure:
    """Scatter: one point per (model, type); colour is the model, marker the type."""
    mrr = _metric(metrics, "MRR@10", split)
    negrecall = _metric(metrics, "NegRecall@10", split)
    markers = {"AND": "o", "OR": "s", "NOT": "^"}
    plt = _pyplot()
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = _pyplot().subplots(figsize=(6.5, 5))
    for i, model in enumerate(models):
        for kind, marker in markers.items():
            x = mrr.get(kind, pd.Series(dtype=float)).get(model, np.nan)
            y = negrecall.get(kind, pd.Series(dtype=float)).get(model, np.nan)
            ax.scatter(x, y, marker=marker, s=60, color=colours[i % len(colours)])
    for i, model in enumerate(models):  # legend entries: models by colour, types by marker
        ax.scatter([], [], color=colours[i % len(colours)], marker="o", label=model)
    for kind, marker in markers.items():
        ax.scatter([], [], color="grey", marker=marker, label=kind)
    ax.set_xlabel("MRR@10 (%)  (higher is better)")
    ax.set_ylabel("NegRecall@10 (%)  (lower is better)")
    ax.set_xlim(-2, 102)
    ax.set_ylim(-2, 102)
    ax.set_title(f"Excluded passages retrieved ({split} split, completed labels)")
    _say_if_empty(ax, mrr.reindex(index=models), split)
    ax.legend(fontsize="small", loc="upper left")
    ax.grid(alpha=0.3)
    return fig


def group_sizes(groups: pd.DataFrame) -> Figure:
    """Histogram of passages per group (clusters.parquet or document_groups.parquet)."""
    sizes = groups.groupby("cluster").size()
    fig, ax = _pyplot().subplots(figsize=(6.5, 4))
    if len(sizes):
        bins = np.arange(sizes.min(), sizes.max() + 2) - 0.5
        ax.hist(sizes, bins=bins if len(bins) <= 60 else 40, color="#4c72b0")
    ax.set_xlabel("passages in the group")
    ax.set_ylabel("groups")
    median = float(sizes.median()) if len(sizes) else float("nan")
    ax.set_title(f"{len(sizes)} groups of {len(groups)} passages (median {median:g})")
    ax.grid(axis="y", alpha=0.3)
    return fig


def svd_variance(variance: pd.DataFrame) -> Figure:
    """Per-component and cumulative explained-variance ratio (svd_variance.parquet)."""
    fig, ax = _pyplot().subplots(figsize=(6.5, 4))
    components = variance["component"]
    ax.plot(components, variance["cumulative"], color="#c44e52", marker=".")
    ax.set_xlabel("SVD component")
    ax.set_ylabel("cumulative explained variance", color="#c44e52")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    # Each component's own share is two orders of magnitude smaller: its own axis.
    own = ax.twinx()
    own.bar(components, variance["explained_variance_ratio"], color="#888888", alpha=0.5)
    own.set_ylabel("explained variance of the component", color="#555555")
    ax.set_zorder(own.get_zorder() + 1)
    ax.patch.set_visible(False)
    total = float(variance["cumulative"].iloc[-1]) if len(variance) else float("nan")
    ax.set_title(f"{len(variance)} components keep {100 * total:.1f}% of the variance")
    return fig


def pass_rate_table(all_questions: pd.DataFrame, atomic: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per step: validation pass rate (LLM output accepted, not replaced by a template or
    dropped) and, for AND/OR/NOT, the filter pass rate of both modes among written questions."""
    rows = []
    for step, frame in atomic.items():
        rows.append({"step": step, "validation": (frame["status"] == "ok").mean()})
    for kind in TYPES:
        part = all_questions[all_questions["type"] == kind]
        written = part[part["status"] != "dropped"]
        rows.append(
            {
                "step": kind,
                "validation": (part["status"] == "ok").mean() if len(part) else np.nan,
                "filter (default)": written["passes_default"].mean() if len(written) else np.nan,
                "filter (strict)": written["passes_strict"].mean() if len(written) else np.nan,
            }
        )
    return pd.DataFrame(rows).set_index("step")


def pass_rates(all_questions: pd.DataFrame, atomic: dict[str, pd.DataFrame]) -> Figure:
    rates = 100 * pass_rate_table(all_questions, atomic)
    fig, ax = _pyplot().subplots(figsize=(7, 4))
    x = np.arange(len(rates))
    width = 0.8 / rates.shape[1]
    for i, column in enumerate(rates.columns):
        offset = (i - (rates.shape[1] - 1) / 2) * width
        ax.bar(x + offset, rates[column].fillna(0), width, label=column)
    ax.set_xticks(x, rates.index)
    ax.set_ylabel("pass rate (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Validation and cyclic-consistency filter pass rates")
    _legend_below(ax, rates.shape[1])
    ax.grid(axis="y", alpha=0.3)
    return fig


def _say_if_empty(ax, values: pd.DataFrame, split: str) -> None:
    """A split without questions draws nothing: say so on the axes rather than leave them blank."""
    if values.isna().all().all():
        ax.text(
            0.5, 0.5, f"No question in the {split} split", ha="center", va="center",
            transform=ax.transAxes,
        )  # fmt: skip


def _legend_below(ax, entries: int) -> None:
    ax.legend(
        fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=min(entries, 4)
    )


def save(fig: Figure, png: PathLike, svg: PathLike) -> None:
    """Both formats, each written atomically."""
    fig.tight_layout()
    # No date or version in the files: the same data gives the same bytes.
    for path, fmt, metadata in (
        (png, "png", {"Software": None}),
        (svg, "svg", {"Date": None, "Creator": None}),
    ):
        buffer = io.BytesIO()
        fig.savefig(buffer, format=fmt, metadata=metadata)
        write_bytes_atomic(path, buffer.getvalue())
    _pyplot().close(fig)


def figure_step(name: str, inputs: dict[str, PathLike], settings: dict, png, svg) -> None:
    """Draw figure `name` from the artifacts named in `inputs` (see the `figure` rule);
    `settings` holds the models (table order) and split of the retrieval figures."""
    if name in ("mrr_by_type", "negrecall_vs_mrr"):
        draw = mrr_by_type if name == "mrr_by_type" else negrecall_vs_mrr
        fig = draw(pd.read_parquet(inputs["metrics"]), settings["models"], settings["split"])
    elif name == "group_sizes":
        fig = group_sizes(pd.read_parquet(inputs["groups"], columns=["pid", "cluster"]))
    elif name == "svd_variance":
        fig = svd_variance(pd.read_parquet(inputs["variance"]))
    elif name == "pass_rates":
        atomic = {step: pd.read_parquet(inputs[step]) for step in ("simple", "disjunctive")}
        fig = pass_rates(pd.read_parquet(inputs["all"]), atomic)
    else:
        raise ValueError(f"unknown figure {name!r}; known: {', '.join(FIGURES)}")
    save(fig, png, svg)
