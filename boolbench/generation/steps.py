"""The question-generation steps at the file level: read inputs, call the logic, write outputs.
Workflow scripts call these; tests call them without Snakemake."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.generation import compose, dataset, filtering
from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import (
    ATOMIC_SCHEMAS,
    DISJUNCTIVE_SCHEMA,
    SIMPLE_SCHEMA,
    GenerationSettings,
    disjunctive_questions,
    simple_questions,
)
from boolbench.io import write_table_atomic, write_text_atomic
from boolbench.llm import LLMClient

log = logging.getLogger(__name__)
PathLike = str | os.PathLike
# (index, count): an LLM job's share of the groups. Group g belongs to shard g % count, so a
# group's requests are the same whatever the count (and the response cache answers them).
Shard = tuple[int, int]
WHOLE: Shard = (0, 1)


def in_shard(frame: pd.DataFrame, shard: Shard) -> pd.DataFrame:
    """The rows of `frame` whose `group` belongs to `shard`."""
    index, count = shard
    return frame if count == 1 else frame[frame["group"] % count == index]


def _write(frame: pd.DataFrame, schema: pa.Schema, path: PathLike) -> None:
    write_table_atomic(frame_table(frame, schema), path)


def frame_table(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """`frame` as a table of `schema`; an empty frame (a shard without groups) may lack columns."""
    if frame.empty:
        return schema.empty_table()
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def atomic_step(
    kind: str,
    candidates: PathLike,
    out: PathLike,
    llm: LLMClient,
    prompt: dict,
    template: str | None,
    settings: GenerationSettings,
    shard: Shard = WHOLE,
    subject_prompt: dict | None = None,
    kind_template: str | None = None,
) -> None:
    """Simple (with subjects) or disjunctive questions of the candidates of one shard of the
    groups."""
    cands = in_shard(pd.read_parquet(candidates), shard)
    if kind == "simple":
        subject = Prompt(**subject_prompt) if subject_prompt else None
        table = simple_questions(
            cands, llm, Prompt(**prompt), settings, template, llm.model_name, subject
        )
    else:
        table = disjunctive_questions(
            cands, llm, Prompt(**prompt), settings, template, llm.model_name, kind_template
        )
    _write(table, ATOMIC_SCHEMAS[kind], out)


def compose_step(
    operator: str,
    candidates: PathLike,
    simple: PathLike | None,
    disjunctive: PathLike | None,
    out: PathLike,
    llm: LLMClient,
    prompt: dict,
    template: str | None,
    settings: GenerationSettings,
    shard: Shard = WHOLE,
    forms: list[str] | None = None,
) -> None:
    """AND/OR/NOT questions of one shard of the groups (operands from every group's file;
    `forms`: the not_kind templates of NOT's template mode)."""
    empty_simple = pd.DataFrame(columns=SIMPLE_SCHEMA.names)
    empty_disj = pd.DataFrame(columns=DISJUNCTIVE_SCHEMA.names)
    table = compose.compose(
        operator.upper(),
        in_shard(pd.read_parquet(candidates), shard),
        pd.read_parquet(simple) if simple else empty_simple,
        pd.read_parquet(disjunctive) if disjunctive else empty_disj,
        llm,
        Prompt(**prompt),
        settings,
        template,
        llm.model_name,
        forms,
    )
    _write(table, compose.COMPOSED_SCHEMA, out)


def filter_step(
    questions: list[PathLike],
    simple: PathLike,
    disjunctive: PathLike,
    candidates: PathLike,
    answers_out: PathLike,
    check_out: PathLike,
    llm: LLMClient,
    prompt: dict,
    settings: filtering.AnswererSettings,
    shard: Shard = WHOLE,
) -> None:
    """The answerer's reading of the composed questions of one shard of the groups, and its
    check on their simple questions (one job, so a passage's prompt is cached for both)."""
    answers, check = filtering.filter_and_check(
        pd.concat([in_shard(pd.read_parquet(p), shard) for p in questions]),
        in_shard(pd.read_parquet(simple), shard),
        in_shard(pd.read_parquet(disjunctive), shard),
        pd.read_parquet(candidates),
        llm,
        Prompt(**prompt),
        settings,
    )
    _write(answers, filtering.ANSWERS_SCHEMA, answers_out)
    _write(check, filtering.CHECK_SCHEMA, check_out)


def assemble_step(
    questions: list[PathLike],
    answers: PathLike,
    all_out: PathLike,
    kept_out: PathLike,
    mode: str,
    train_fraction: float,
    seed: int,
) -> None:
    composed = pd.concat([pd.read_parquet(p) for p in questions], ignore_index=True)
    pairs = pd.read_parquet(answers)
    all_questions, kept = dataset.assemble(composed, pairs, mode, train_fraction, seed)
    dataset.write_dataset(all_questions, kept, all_out, kept_out)


def statistics_step(
    all_questions: PathLike,
    steps: dict[str, PathLike],
    check: PathLike,
    csv_out: PathLike,
    md_out: PathLike,
    html_out: PathLike,
    report_out: PathLike,
) -> None:
    """Table 1 with the answerer check under it, and generation_report.json."""
    table = pd.read_parquet(all_questions)
    rates = filtering.check_rates(pd.read_parquet(check))
    notes = [*dataset.TABLE1_NOTES, dataset.check_line(rates)]
    dataset.write_table1(dataset.table1(table), csv_out, md_out, html_out, notes)
    report = dataset.generation_report({k: pd.read_parquet(v) for k, v in steps.items()}, table)
    report["answerer_check"] = rates
    write_text_atomic(report_out, json.dumps(report, indent=2, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------------------------
# Gathering the shards of an LLM stage


def gather_shards(shards: list[PathLike], out: PathLike) -> int:
    """One Parquet file from the shards of an LLM stage, sorted by group (else by qid, which
    numbers groups) and stable, so rows of one group keep their order: the result is the same
    for every shard count (and, where rows carry a group, the order an unsharded job writes)."""
    table = pa.concat_tables([pq.read_table(path) for path in shards])
    key = "group" if "group" in table.column_names else "qid"
    write_table_atomic(table.sort_by([(key, "ascending")]), out)
    return table.num_rows


def gather_stage(
    shards: list[PathLike],
    accounting: list[PathLike],
    rows_out: PathLike,
    accounting_out: PathLike,
    checks: list[PathLike] | None = None,
    checks_out: PathLike | None = None,
) -> None:
    """The gather job of an LLM stage: its rows, its accounting and (the filter) its answerer
    checks, each one file whatever the shard count."""
    rows = gather_shards(shards, rows_out)
    gather_accounting(accounting, accounting_out)
    if checks is not None:
        gather_shards(checks, checks_out)
    log.info("%d rows from %d shards -> %s", rows, len(shards), rows_out)


def gather_accounting(shards: list[PathLike], out: PathLike) -> None:
    """The accounting of an LLM stage: every count, token, cost and second of its shards."""
    total: dict = {}
    for path in shards:
        for key, value in json.loads(Path(path).read_text()).items():
            if isinstance(value, dict):  # errors by kind
                merged = total.setdefault(key, {})
                for kind, count in value.items():
                    merged[kind] = merged.get(kind, 0) + count
            else:
                total[key] = total.get(key, 0) + value
    write_text_atomic(out, json.dumps(total, indent=2, sort_keys=True) + "\n")
