"""The BoolQuestions dataset: filtered questions, train/test split, Table 1, BEIR export.

Artifacts:
- boolquestions_all.parquet: every composed question (AND/OR/NOT) with DATASET_COLUMNS plus
  status, reason, attempts, passes_default, passes_strict, filter_reason, kept, reject_reason.
- boolquestions.parquet: the kept questions, DATASET_COLUMNS. `positives`/`negatives` are the
  group labels, `pooled_positives`/`pooled_negatives` the pooled judgements (boolbench.labels).
- tables/table1.{csv,md,html}: the paper's Table 1 per type, with generation and filter counts.
- generation_report.json: drops and fallbacks per step and reason.
- beir/: corpus.jsonl, queries.jsonl (metadata: type, split), qrels/{test,train}.tsv (the
  completed labels: positives and pooled positives 1, negatives and pooled negatives 0),
  qrels/{test,train}_group.tsv (the group labels, the paper's protocol: positives 1, negatives
  0), qrels/{test,train}_negatives.tsv (the construction negatives, score 1) and README.md (the
  dataset card, boolbench.dataset_card).
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.constants import TYPES
from boolbench.dataset_card import write_card
from boolbench.errors import InputError
from boolbench.generation.filtering import met_constraint, outside_kind, verdicts
from boolbench.io import atomic_path, write_table_atomic, write_text_atomic
from boolbench.labels import COMPLETED, GROUP, judgements, negative_judgements, with_pooled
from boolbench.report import html

log = logging.getLogger(__name__)

DATASET_COLUMNS = [
    "qid", "type", "question", "source", "operator", "operand_qids", "operand_texts",
    "positives", "negatives", "pooled_positives", "pooled_negatives", "group", "cluster",
    "split", "prompt_hash", "model",
]  # fmt: skip
_LIST = pa.list_(pa.string())
DATASET_SCHEMA = pa.schema(
    [
        ("qid", pa.string()), ("type", pa.string()), ("question", pa.string()),
        ("source", pa.string()), ("operator", pa.string()), ("operand_qids", _LIST),
        ("operand_texts", _LIST), ("positives", _LIST), ("negatives", _LIST),
        ("pooled_positives", _LIST), ("pooled_negatives", _LIST),
        ("group", pa.int64()), ("cluster", pa.int64()), ("split", pa.string()),
        ("prompt_hash", pa.string()), ("model", pa.string()),
    ]
)  # fmt: skip
ALL_SCHEMA = DATASET_SCHEMA.append(pa.field("status", pa.string()))
for _name, _type in (
    ("reason", pa.string()), ("attempts", pa.int64()), ("passes_default", pa.bool_()),
    ("passes_strict", pa.bool_()), ("filter_reason", pa.string()), ("kept", pa.bool_()),
    ("reject_reason", pa.string()), ("construction", pa.string()),
):  # fmt: skip
    ALL_SCHEMA = ALL_SCHEMA.append(pa.field(_name, _type))


def written(composed: pd.DataFrame) -> pd.DataFrame:
    """The composed questions that were written, in DATASET_COLUMNS (no pooled labels yet),
    with the split composition gave them."""
    table = composed[composed["status"] != "dropped"].copy()
    if table.empty:
        reasons = dict(Counter(composed["reason"].dropna()))
        raise InputError(
            f"no AND, OR or NOT question was written for {composed['group'].nunique()} groups "
            f"(reasons: {reasons}); see questions/disjunctive.parquet and simple.parquet, or "
            "raise candidates.n_groups"
        )
    table["pooled_positives"] = [[] for _ in range(len(table))]
    table["pooled_negatives"] = [[] for _ in range(len(table))]
    return table.sort_values(["group", "type", "qid"], key=_type_order)[DATASET_COLUMNS]


def dataset_table(frame: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(frame[DATASET_COLUMNS], schema=DATASET_SCHEMA,
                                preserve_index=False)  # fmt: skip


def assemble(
    questions: pd.DataFrame,
    answers: pd.DataFrame,
    pooled: pd.DataFrame,
    mode: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(all questions with verdicts and reasons, the kept ones), with the pooled passages the
    judge found relevant (pooled_positives) or not (pooled_negatives); a pooled passage whose
    judgement failed stays unjudged."""
    table = questions.merge(verdicts(answers), on="qid", how="left")
    if "construction" not in table:  # composed before constructions were recorded
        table["construction"] = None
    # Labelled passages the judge read as outside the kind leave the group labels judged not
    # relevant; AND negatives it read as meeting the constraint too leave them unjudged.
    outside = answers[outside_kind(answers)].groupby("qid")["pid"].agg(set)
    met = answers[met_constraint(answers)].groupby("qid")["pid"].agg(set)
    leaving = {q: outside.get(q, set()) | met.get(q, set()) for q in table["qid"]}
    for column in ("positives", "negatives"):
        table[column] = [[p for p in pids if p not in leaving[q]]
                         for q, pids in zip(table["qid"], table[column], strict=True)]  # fmt: skip
    judged = pooled[pooled["relevant"].notna()].sort_values(["qid", "rank", "pid"])
    for column, relevant in (("pooled_positives", True), ("pooled_negatives", False)):
        lists = judged[judged["relevant"] == relevant].groupby("qid")["pid"].agg(list)
        table[column] = [lists.get(q, []) for q in table["qid"]]
    table["pooled_negatives"] = [sorted(outside.get(q, set())) + pids
                                 for q, pids in zip(table["qid"], table["pooled_negatives"],
                                                    strict=True)]  # fmt: skip
    written = table["status"] != "dropped"
    passes = table["passes_strict" if mode == "strict" else "passes_default"]
    table["kept"] = written & passes.fillna(False).astype(bool)
    table["reject_reason"] = None
    table.loc[~written, "reject_reason"] = "dropped: " + table.loc[~written, "reason"].astype(str)
    failed = written & ~table["kept"]
    table.loc[failed, "reject_reason"] = "filter: " + table.loc[failed, "filter_reason"].astype(str)
    table = table.sort_values(["group", "type", "qid"], key=_type_order).reset_index(drop=True)
    kept = table[table["kept"]][DATASET_COLUMNS].reset_index(drop=True)
    if kept.empty and written.any():
        # `written` is in the order before sorting: read the sorted table's own rows
        reasons = dict(Counter(table.loc[table["status"] != "dropped", "filter_reason"].dropna()))
        raise InputError(
            f"the filter rejected all {int(written.sum())} written questions (reasons: "
            f"{reasons}); nothing to evaluate. See questions/answers.parquet; filter.mode: "
            "default keeps questions whose negatives were not refused"
        )
    return table[ALL_SCHEMA.names], kept


def _type_order(column: pd.Series) -> pd.Series:
    return column.map({t: i for i, t in enumerate(TYPES)}) if column.name == "type" else column


def write_dataset(all_questions: pd.DataFrame, kept: pd.DataFrame, all_out, kept_out) -> None:
    write_table_atomic(
        pa.Table.from_pandas(all_questions, schema=ALL_SCHEMA, preserve_index=False), all_out
    )
    write_table_atomic(
        pa.Table.from_pandas(kept, schema=DATASET_SCHEMA, preserve_index=False), kept_out
    )


def table1(all_questions: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 (questions, mean positives and negatives) per type and ALL, with the
    counts behind it: groups, LLM-written, template fallbacks, drops, filter rejections, and
    the pass rates of both filter modes among written questions."""
    rows = []
    # ALL, each type, and (what a run made, and why it kept what it kept) each construction
    constructions = sorted(all_questions["construction"].dropna().unique()) if (
        "construction" in all_questions) else []  # fmt: skip
    for kind in ("ALL", *TYPES, *(f"ALL {c}" for c in constructions)):
        if kind.startswith("ALL "):
            part = all_questions[all_questions["construction"] == kind[4:]]
        else:
            part = all_questions if kind == "ALL" else all_questions[all_questions["type"] == kind]
        kept = part[part["kept"]]
        written = part[part["status"] != "dropped"]
        rows.append(
            {
                "type": kind,
                "questions": len(kept),
                "avg_pos": kept["positives"].map(len).mean() if len(kept) else float("nan"),
                "avg_neg": kept["negatives"].map(len).mean() if len(kept) else float("nan"),
                "avg_pooled_pos": (
                    kept["pooled_positives"].map(len).mean() if len(kept) else float("nan")
                ),
                "avg_pooled_neg": (
                    kept["pooled_negatives"].map(len).mean() if len(kept) else float("nan")
                ),
                "generated": len(part),
                "llm": int((part["source"] == "llm").sum()),
                "fallback": int((part["status"] == "fallback").sum()),
                "dropped": int((part["status"] == "dropped").sum()),
                "filtered_out": int((written["kept"] == False).sum()),  # noqa: E712
                "pass_rate": written["passes_default"].mean() if len(written) else float("nan"),
                "pass_rate_strict": (
                    written["passes_strict"].mean() if len(written) else float("nan")
                ),
            }
        )
    return pd.DataFrame(rows)


TABLE1_NOTES = [
    "Rows 'ALL <construction>': the questions of groups of that construction (kind: members of "
    "a kind; topic: a web topic's angles; page: a page's subject and its parts; story: a "
    "story's aspects; docs/corpora.md, 'Corpus kinds'). "
    "questions, avg_pos, avg_neg: kept questions and their group labels (the paper's Table 1); "
    "avg_pooled_pos, avg_pooled_neg: their pooled labels (pooled passages judged relevant / "
    "not). generated: questions planned (a group without one of a type counts once); llm: "
    "written by the LLM; fallback: LLM output rejected by validation and replaced by the "
    "template's question; dropped: no question; filtered_out: written but rejected by the "
    "filter; pass_rate(_strict): filter pass rate of written questions in default (strict) "
    "mode.",
]


def rejections(steps: dict[str, pd.DataFrame], all_questions: pd.DataFrame) -> pd.DataFrame:
    """What was rejected and why: per reason (rows), the atomic steps' drops and each type's
    drops and filter rejections (columns)."""
    counts = {step: Counter(frame.loc[frame["status"] == "dropped", "reason"].dropna())
              for step, frame in steps.items()}  # fmt: skip
    for kind in TYPES:
        part = all_questions[all_questions["type"] == kind]
        counts[kind] = Counter(part["reject_reason"].dropna())
    reasons = sorted({r for c in counts.values() for r in c})
    return pd.DataFrame(
        [{"reason": r, **{step: c.get(r, 0) for step, c in counts.items()}} for r in reasons],
        columns=["reason", *counts],
    )


def check_line(rates: dict) -> str:
    """The answerer check (filtering.check_rates) as the sentence under Table 1."""

    def share(name: str, n: str) -> str:
        value = rates[name]
        return f"{'-' if pd.isna(value) else f'{100 * value:.1f}%'} of {rates[n]}"

    return (
        "Answerer check (the filter is only as good as these): the answerer accepts a simple "
        f"question's own passage in {share('accept_own', 'n_own')} pairs, refuses a passage "
        f"of another cluster in {share('reject_other', 'n_other')} and a sibling of the same "
        f"group in {share('reject_sibling', 'n_sibling')}."
    )


def write_table1(
    table: pd.DataFrame, csv_out, md_out, html_out, notes=None, rejected: pd.DataFrame = None
) -> None:
    """tables/table1.csv (numbers), .md and .html (`notes` below both: TABLE1_NOTES by
    default), with the rejections by reason (`rejected`) below the table."""
    notes = notes or TABLE1_NOTES
    write_text_atomic(csv_out, table.to_csv(index=False, float_format="%.4f"))
    rows = [[_cell(v) for v in row] for row in table.itertuples(False)]
    lines = html.markdown_table(list(table.columns), rows)
    html_rows = [[html.escape(c) for c in row] for row in rows]
    parts = [html.table(list(table.columns), html_rows, text_columns=(0,), row_headers=True)]
    if rejected is not None and len(rejected):
        reason_rows = [[str(v) for v in row] for row in rejected.itertuples(False)]
        lines += ["", "Rejected, by reason (atomic steps: drops; AND/OR/NOT: drops and filter):",
                  "", *html.markdown_table(list(rejected.columns), reason_rows)]  # fmt: skip
        parts.append(html.table(list(rejected.columns), [[html.escape(c) for c in r]
                                                         for r in reason_rows],
                                "Rejected, by reason", text_columns=(0,)))  # fmt: skip
    write_text_atomic(md_out, "\n".join([*lines, "", *notes]) + "\n")
    html.write_page(html_out, "Table 1: dataset statistics", "".join(parts) + html.notes(notes))


def _cell(value) -> str:
    if isinstance(value, float):
        return "-" if pd.isna(value) else f"{value:.2f}"
    return str(value)


def generation_report(steps: dict[str, pd.DataFrame], all_questions: pd.DataFrame) -> dict:
    """Per step (atomic questions, then AND/OR/NOT): counts by status, fallback and drop
    reasons, and LLM attempts; then filter rejections per type."""
    parts = {**steps, **{kind: all_questions[all_questions["type"] == kind] for kind in TYPES}}
    report = {}
    for step, frame in parts.items():
        report[step] = {
            "total": len(frame),
            "status": dict(Counter(frame["status"])),
            "fallback_reasons": dict(Counter(frame.loc[frame["status"] == "fallback", "reason"])),
            "drop_reasons": dict(Counter(frame.loc[frame["status"] == "dropped", "reason"])),
            "attempts": dict(Counter(int(a) for a in frame["attempts"])),
        }
    report["filter"] = {
        kind: dict(Counter(part["reject_reason"].dropna()))
        for kind, part in all_questions.groupby("type")
    }
    return report


# ---------------------------------------------------------------------------------------------
# BEIR export


def _write_lines(path: Path, lines) -> None:
    with atomic_path(path) as temp, open(temp, "w", encoding="utf-8") as out:
        for line in lines:
            out.write(line + "\n")


def _corpus_lines(corpus_path):
    parquet = pq.ParquetFile(corpus_path)
    for batch in parquet.iter_batches(columns=["pid", "title", "text"]):
        for pid, title, text in zip(*(batch.column(i).to_pylist() for i in range(3)), strict=True):
            yield json.dumps({"_id": pid, "title": title or "", "text": text}, ensure_ascii=False)


def _qrels_lines(rows):
    yield "query-id\tcorpus-id\tscore"
    for qid, pid, score in rows:
        yield f"{qid}\t{pid}\t{score}"


def export_beir(kept: pd.DataFrame, corpus_path, out: dict[str, str]) -> None:
    """Write the BEIR files named in `out` (corpus, queries, and per split test/train the
    qrels {split}, {split}_group, {split}_negatives)."""
    kept = with_pooled(kept)
    _write_lines(Path(out["corpus"]), _corpus_lines(corpus_path))
    _write_lines(
        Path(out["queries"]),
        (
            json.dumps(
                {"_id": r.qid, "text": r.question, "metadata": {"type": r.type, "split": r.split}},
                ensure_ascii=False,
            )
            for r in kept.itertuples()
        ),
    )
    for split in ("test", "train"):
        part = kept[kept["split"] == split]
        for suffix, rows in (
            ("", judgements(part, COMPLETED)),
            ("_group", judgements(part, GROUP)),
            ("_negatives", negative_judgements(part)),
        ):
            _write_lines(Path(out[f"{split}{suffix}"]), _qrels_lines(rows))


def beir_export_step(kept_path, corpus_path, out: dict[str, str], card: dict) -> None:
    """beir/: the BEIR files of export_beir and README.md, the dataset card (`card`: the
    settings of boolbench.dataset_card.write_card)."""
    kept = pd.read_parquet(kept_path)
    export_beir(kept, corpus_path, out)
    write_card(kept, "beir", card, out["card"], corpus_path)
