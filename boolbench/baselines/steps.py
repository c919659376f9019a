"""The paper's baselines at the file level (section 6.3, Table 3): decomposition, Boolean
operation runs (LLM and oracle expressions), contrastive training, and Table 3.

Artifacts:
- baselines/decomposed.parquet (boolbench.baselines.decompose),
  baselines/runs/{decomposed,oracle}.parquet (the run format of boolbench.retrieval.runs),
  models/contrastive-{subset}/model/ (boolbench.baselines.contrastive).
- tables/table3.{csv,md,tex}: base retriever, decomposed query, oracle decomposition and the
  contrastive models on MRR@10 under the completed labels (boolbench.labels), NegRecall@10 on
  the construction negatives and Judged@10 under the completed labels, for ALL/AND/OR/NOT, on
  the baselines' split; the notes say what the labels are and how many.
"""

from __future__ import annotations

import logging
import os

import pandas as pd

from boolbench.baselines.boolean_ops import boolean_run
from boolbench.baselines.contrastive import (
    TrainingSettings,
    train,
    train_query_encoder,
    training_examples,
    training_rows,
)
from boolbench.baselines.decompose import DECOMPOSED_SCHEMA, decompose
from boolbench.config import contrastive_label
from boolbench.corpus.sources import DEFAULT_TEMPLATE, passage_texts
from boolbench.errors import InputError, located
from boolbench.generation.prompts import Prompt
from boolbench.generation.steps import WHOLE, Shard, frame_table, in_shard
from boolbench.io import write_table_atomic
from boolbench.labels import COMPLETED
from boolbench.llm import LLMClient
from boolbench.retrieval.embeddings import load_embeddings
from boolbench.retrieval.evaluation import (
    aggregate,
    counts_line,
    labels_notes,
    metric_table,
    question_scores,
    type_columns,
    write_table_files,
)
from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.runs import read_run, write_run
from boolbench.retrieval.search import open_index

log = logging.getLogger(__name__)
PathLike = str | os.PathLike
# Under the completed labels (Table 2 shows both label sets; the baselines only these).
TABLE3_COLUMNS = [
    *type_columns("Completed MRR@10", COMPLETED, "MRR@10", True),
    *type_columns("NegRecall@10", COMPLETED, "NegRecall@10", False),
    *type_columns("Completed Judged@10", COMPLETED, "Judged@10", None),
]


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


ORACLE_ROW = "Oracle decomposition"


def oracle_expressions(questions: pd.DataFrame) -> pd.DataFrame:
    """The expression recorded when each question was composed (operator, operand questions).
    An expression with an operand that was never written (e.g. a question imported without
    its operands) is incomplete: no operator, so the question keeps the
    retriever's own run, as a failed decomposition does."""
    complete = [all(isinstance(t, str) for t in texts) for texts in questions["operand_texts"]]
    return pd.DataFrame(
        {
            "qid": questions["qid"],
            "operator": questions["operator"].where(complete, None),
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
    index = open_index(spec, index_path, embeddings_path, threads)
    run = boolean_run(expressions, index, k, depth, fallback=read_run(base_run_path))
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
    embeddings_path: PathLike | None = None,
) -> None:
    """models/contrastive-{subset}/model/: side query trains against the base model's passage
    vectors (`embeddings_path`), side both trains the whole model on the passage texts (with
    `passage_template`). Without `simple_path` (imported questions) no ordinary pairs are
    mixed in."""
    questions = pd.read_parquet(questions_path)
    simple = pd.read_parquet(simple_path) if simple_path else None
    if settings.side == "query":
        rows = training_rows(questions, simple, subset, settings.simple_pairs)
        if rows.empty:
            raise _no_train_questions(questions, subset, questions_path)
        pids, vectors = load_embeddings(embeddings_path)
        wanted = {*rows["positive"], *rows["negative"].dropna()}
        passage_vectors = {pid: vectors[i] for i, pid in enumerate(pids) if pid in wanted}
        train_query_encoder(spec, rows, passage_vectors, settings, out, threads)
        return
    examples = training_examples(
        questions,
        simple,
        passage_texts(corpus_path, passage_template),
        subset,
        spec,
        settings.simple_pairs,
    )
    if not examples:
        raise _no_train_questions(questions, subset, questions_path)
    train(spec, examples, settings, out, threads)


def _no_train_questions(questions: pd.DataFrame, subset: str, path: PathLike) -> InputError:
    """The one-line error of a contrastive model with nothing to train on."""
    train = questions[questions["split"] == "train"]
    if train.empty:
        found = (
            f"none of its {len(questions)} questions is in the train split (split.by: kind "
            "puts every group of one kind in one split: a corpus of few kinds may want "
            "split.by: group, or another split.train_fraction)"
        )
    else:
        found = f"none of its {len(train)} train questions is {subset.upper()}"
    return InputError(
        located(
            path,
            f"no question to train contrastive-{subset} on: {found}; set baselines.train_on: "
            "[] to skip contrastive training",
        )
    )


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
    training_side: str = "query",
) -> None:
    """tables/table3.{csv,md,tex,html}: every row on the same questions (the baselines' split).
    `contrastive_scores`: trained model name -> its scores (a row under its Table 3 label).
    `not_computed`: rows that cannot be computed for these questions (label -> why); they are
    shown empty, with the reason below the table."""
    not_computed = not_computed or {}
    all_questions = pd.read_parquet(questions_path)
    questions = questions_of_split(questions_path, split)
    wanted = set(questions["qid"])
    base = pd.read_parquet(base_scores)
    frames = [_bool_scores(base, retriever, wanted)]
    for label, path in baseline_runs.items():
        frames.append(question_scores(read_run(path), questions, COMPLETED).assign(model=label))
    trained = {
        contrastive_label(name): pd.read_parquet(path) for name, path in contrastive_scores.items()
    }
    for label, scores in trained.items():
        frames.append(_bool_scores(scores, label, wanted))
    metrics = aggregate(pd.concat(frames, ignore_index=True))
    rows = [retriever, *baseline_runs, *trained]
    rows += [label for label in not_computed if label not in rows]
    table_split = "all"  # the questions were already restricted to `split`
    table = metric_table(metrics, rows, table_split, TABLE3_COLUMNS)
    decomposed = pd.read_parquet(decomposed_path)
    failed = int((decomposed["status"] == "failed").sum())
    skipped = [f"{label}: not computed: {why}." for label, why in not_computed.items()]
    for line in skipped:
        log.info(line)
    notes = [
        "Scored under the completed labels; Table 2 also shows the group labels (the paper's "
        "protocol). Judged@10 shows how much of each row's top 10 the labels can score (the "
        "Boolean merges and trained models can rank passages outside the pool).",
        *labels_notes(questions),
        counts_line(metrics, table_split, original=False, label=split, key="baselines.split"),
        f"Decomposition failed for {failed} of {len(decomposed)} questions (they keep the "
        f"{retriever} run).",
        *skipped,
    ]
    incomplete = int(oracle_expressions(questions)["operator"].isna().sum())
    if incomplete and ORACLE_ROW in baseline_runs:
        notes.append(
            f"{ORACLE_ROW}: {incomplete} questions have an incomplete recorded expression (an "
            f"operand was never written); they keep the {retriever} run."
        )
    if trained:
        notes += contrastive_notes(retriever, base, trained, all_questions, training_side)
    write_table_files(table, TABLE3_COLUMNS, notes, out, "Table 3: baselines")


def contrastive_notes(
    retriever: str,
    base: pd.DataFrame,
    trained: dict[str, pd.DataFrame],
    questions: pd.DataFrame,
    side: str,
) -> list[str]:
    """How the contrastive models were trained, and what training did on the questions they
    were trained on (the train split): the evidence that the model changed at all."""
    if side == "query":
        how = (
            f"Boolean contrastive: {retriever} trained further on the train split, the query "
            f"encoder only (passages keep {retriever}'s vectors and index; the paper trains the "
            "whole model: baselines.training.side: both)."
        )
    else:
        how = f"Boolean contrastive: {retriever} trained further on the train split (whole model)."
    train_qids = set(questions.loc[questions["split"] == "train", "qid"])
    frames = [_bool_scores(base, retriever, train_qids)]
    frames += [_bool_scores(scores, label, train_qids) for label, scores in trained.items()]
    metrics = aggregate(pd.concat(frames, ignore_index=True))
    metrics = metrics[(metrics["split"] == "all") & (metrics["type"] == "ALL")]
    metrics = metrics[metrics["labels"] == COMPLETED]
    value = metrics.set_index(["model", "metric"])["value"]
    n = len(train_qids)
    fits = [
        f"{label} {100 * value[retriever, 'MRR@10']:.2f} -> {100 * value[label, 'MRR@10']:.2f} "
        f"(NegRecall@10 {100 * value[retriever, 'NegRecall@10']:.2f} -> "
        f"{100 * value[label, 'NegRecall@10']:.2f})"
        for label in trained
    ]
    return [how, f"On the {n} train questions themselves, MRR@10 ALL: " + "; ".join(fits) + "."]


def _bool_scores(scores: pd.DataFrame, label: str, qids: set[str]) -> pd.DataFrame:
    """A model's question scores under the completed labels, for the questions `qids`."""
    scores = scores[
        (scores["query_set"] == "boolquestions")
        & (scores["labels"] == COMPLETED)
        & scores["qid"].isin(qids)
    ]
    return scores.assign(model=label)
