"""The question-generation steps at the file level: read inputs, call the logic, write outputs.
Workflow scripts call these; tests call them without Snakemake."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa

from boolbench import compose, dataset, filtering, generation
from boolbench.llm import LLMClient
from boolbench.parquet_io import write_table_atomic
from boolbench.prompts import Prompt

PathLike = str | os.PathLike


def _write(frame: pd.DataFrame, schema: pa.Schema, path: PathLike) -> None:
    write_table_atomic(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), path)


def atomic_step(
    kind: str,
    candidates: PathLike,
    out: PathLike,
    llm: LLMClient,
    prompt: dict,
    template: str | None,
    settings: generation.GenerationSettings,
) -> None:
    """questions/{simple,disjunctive}.parquet from the candidates."""
    write, schema = generation.ATOMIC[kind]
    table = write(
        pd.read_parquet(candidates), llm, Prompt(**prompt), settings, template, llm.model_name
    )
    _write(table, schema, out)


def compose_step(
    operator: str,
    candidates: PathLike,
    simple: PathLike | None,
    disjunctive: PathLike | None,
    out: PathLike,
    llm: LLMClient,
    prompt: dict,
    template: str | None,
    settings: generation.GenerationSettings,
) -> None:
    empty_simple = pd.DataFrame(columns=generation.SIMPLE_SCHEMA.names)
    empty_disj = pd.DataFrame(columns=generation.DISJUNCTIVE_SCHEMA.names)
    table = compose.compose(
        operator.upper(),
        pd.read_parquet(candidates),
        pd.read_parquet(simple) if simple else empty_simple,
        pd.read_parquet(disjunctive) if disjunctive else empty_disj,
        llm,
        Prompt(**prompt),
        settings,
        template,
        llm.model_name,
    )
    _write(table, compose.COMPOSED_SCHEMA, out)


def filter_step(
    questions: PathLike,
    candidates: PathLike,
    out: PathLike,
    llm: LLMClient,
    prompt: dict,
    seed: int,
    answer_max_tokens: int,
    max_passage_words: int,
    temperature: float,
) -> None:
    cands = pd.read_parquet(candidates)
    answers = filtering.answer_pairs(
        pd.read_parquet(questions),
        dict(zip(cands["pid"], cands["text"], strict=True)),
        llm,
        Prompt(**prompt),
        seed=seed,
        max_tokens=answer_max_tokens,
        max_passage_words=max_passage_words,
        model=llm.model_name,
        temperature=temperature,
    )
    _write(answers, filtering.ANSWERS_SCHEMA, out)


def assemble_step(
    questions: list[PathLike],
    answers: list[PathLike],
    all_out: PathLike,
    kept_out: PathLike,
    mode: str,
    train_fraction: float,
    seed: int,
) -> None:
    composed = pd.concat([pd.read_parquet(p) for p in questions], ignore_index=True)
    pairs = pd.concat([pd.read_parquet(p) for p in answers], ignore_index=True)
    all_questions, kept = dataset.assemble(composed, pairs, mode, train_fraction, seed)
    dataset.write_dataset(all_questions, kept, all_out, kept_out)


def statistics_step(
    all_questions: PathLike,
    steps: dict[str, PathLike],
    csv_out: PathLike,
    md_out: PathLike,
    html_out: PathLike,
    report_out: PathLike,
) -> None:
    table = pd.read_parquet(all_questions)
    dataset.write_table1(dataset.table1(table), csv_out, md_out, html_out)
    report = dataset.generation_report({k: pd.read_parquet(v) for k, v in steps.items()}, table)
    Path(report_out).write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")


def beir_step(kept: PathLike, corpus: PathLike, out: dict[str, str]) -> None:
    dataset.export_beir(pd.read_parquet(kept), corpus, out)
