"""The paper's baselines at the file level (section 6.3, Table 3): decomposition, Boolean
operation runs (LLM and oracle expressions), contrastive training, and Table 3.

Artifacts:
- baselines/decomposed.parquet (boolbench.decompose), baselines/runs/{decomposed,oracle}.parquet
  (the run format of boolbench.runs), models/contrastive-{subset}/model/ (boolbench.contrastive).
- tables/table3.{csv,md,tex}: base retriever, decomposed query, oracle decomposition and the
  contrastive models on MRR@10 and NegRecall@10 for ALL/AND/OR/NOT, on the baselines' split.
"""

from __future__ import annotations

import os

import pandas as pd

from boolbench.boolean_ops import boolean_run, make_scorer
from boolbench.contrastive import TrainingSettings, train, training_examples
from boolbench.corpus import DEFAULT_TEMPLATE, passage_texts
from boolbench.decompose import DECOMPOSED_SCHEMA, decompose
from boolbench.errors import InputError, located
from boolbench.evaluation import (
    TYPES,
    aggregate,
    counts_line,
    metric_table,
    question_scores,
    write_table_files,
)
from boolbench.llm import LLMClient
from boolbench.parquet_io import write_table_atomic
from boolbench.prompts import Prompt
from boolbench.retrievers import ModelSpec
from boolbench.runs import read_run, write_run
from boolbench.steps import WHOLE, Shard, frame_table, in_shard

PathLike = str | os.PathLike
TABLE3_COLUMNS = [
    *[(f"BDR MRR@10 {t}", "boolquestions", t, "MRR@10", True) for t in ("ALL", *TYPES)],
    *[(f"BDR NegRecall@10 {t}", "boolquestions", t, "NegRecall@10", False)
      for t in ("ALL", *TYPES)],
]  # fmt: skip


def questions_of_split(path: PathLike, split: str) -> pd.DataFrame:
    questions = pd.read_parquet(path)
    return questions if split == "all" else questions[questions["split"] == split]


def decompose_step(
    questions_path: PathLike,
    out: PathLike,
    llm: LLMClient,
    prompt: dict,
    split: str,
    retries: int,
    seed: int,
    max_tokens: int,
    json_schema: bool,
    shard: Shard = WHOLE,
) -> None:
    """The decompositions of the questions of `split` in one shard of the groups."""
    questions = in_shard(questions_of_split(questions_path, split), shard)
    frame = decompose(llm, Prompt(**prompt), questions, retries, seed, max_tokens, json_schema)
    write_table_atomic(frame_table(frame, DECOMPOSED_SCHEMA), out)


def oracle_expressions(questions: pd.DataFrame) -> pd.DataFrame:
    """The expression recorded when each question was composed (operator, operand questions)."""
    return pd.DataFrame(
        {
            "qid": questions["qid"],
            "operator": questions["operator"],
            "questions": [list(texts) for texts in questions["operand_texts"]],
        }
    )


def boolean_run_step(
    method: str,
    spec: ModelSpec,
    index_path: PathLike,
    embeddings_path: PathLike | None,
    questions_path: PathLike,
    decomposed_path: PathLike | None,
    base_run_path: PathLike,
    split: str,
    k: int,
    depth: int,
    out: PathLike,
    threads: int | None = None,
) -> None:
    """baselines/runs/{method}.parquet: merged lists of the LLM's (decomposed) or the recorded
    (oracle) expressions. A failed decomposition keeps the retriever's own run."""
    questions = questions_of_split(questions_path, split)
    if method == "oracle":
        expressions = oracle_expressions(questions)
    else:
        expressions = pd.read_parquet(decomposed_path)[["qid", "operator", "questions"]]
        expressions = expressions[expressions["qid"].isin(set(questions["qid"]))]
    scorer = make_scorer(spec, index_path, embeddings_path, threads)
    run = boolean_run(expressions, scorer, k, depth, fallback=read_run(base_run_path))
    write_run(run, out)


def train_step(
    spec: ModelSpec,
    subset: str,
    questions_path: PathLike,
    simple_path: PathLike | None,
    corpus_path: PathLike,
    settings: TrainingSettings,
    out: PathLike,
    threads: int | None = None,
    passage_template: str = DEFAULT_TEMPLATE,
) -> None:
    """Train one contrastive model; without `simple_path` (imported questions) no ordinary
    pairs are mixed in."""
    passages = passage_texts(corpus_path, passage_template)
    examples = training_examples(
        pd.read_parquet(questions_path),
        pd.read_parquet(simple_path) if simple_path else None,
        passages,
        subset,
        spec,
        settings.simple_pairs,
    )
    if not examples:
        raise InputError(located(questions_path, f"no train questions for subset {subset!r}"))
    train(spec, examples, settings, out, threads)


def table3_step(
    retriever: str,
    base_scores: PathLike,
    baseline_runs: dict[str, PathLike],
    contrastive_scores: dict[str, PathLike],
    questions_path: PathLike,
    decomposed_path: PathLike,
    split: str,
    out: dict[str, str],
    not_computed: dict[str, str] | None = None,
) -> None:
    """tables/table3.{csv,md,tex,html}: every row on the same questions (the baselines' split).
    `not_computed`: rows that cannot be computed for these questions (label -> why); they are
    shown empty, with the reason below the table."""
    not_computed = not_computed or {}
    questions = questions_of_split(questions_path, split)
    wanted = set(questions["qid"])
    frames = [_bool_scores(pd.read_parquet(base_scores), retriever, wanted)]
    for label, path in baseline_runs.items():
        frames.append(question_scores(read_run(path), questions).assign(model=label))
    for label, path in contrastive_scores.items():
        frames.append(_bool_scores(pd.read_parquet(path), label, wanted))
    metrics = aggregate(pd.concat(frames, ignore_index=True))
    rows = [retriever, *baseline_runs, *contrastive_scores]
    rows += [label for label in not_computed if label not in rows]
    table_split = "all"  # the questions were already restricted to `split`
    table = metric_table(metrics, rows, table_split, TABLE3_COLUMNS)
    decomposed = pd.read_parquet(decomposed_path)
    failed = int((decomposed["status"] == "failed").sum())
    notes = [
        counts_line(metrics, table_split, original=False, label=split),
        f"Decomposition failed for {failed} of {len(decomposed)} questions (they keep the "
        f"{retriever} run).",
        *(f"{label}: not computed: {why}." for label, why in not_computed.items()),
    ]
    write_table_files(table, TABLE3_COLUMNS, notes, out, "Table 3: baselines")


def _bool_scores(scores: pd.DataFrame, label: str, qids: set[str]) -> pd.DataFrame:
    scores = scores[(scores["query_set"] == "boolquestions") & scores["qid"].isin(qids)]
    return scores.assign(model=label)
