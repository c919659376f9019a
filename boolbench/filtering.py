"""Cyclic-consistency filtering (paper section 4.4): the answerer reads each composed question
with each of its labelled passages, one passage at a time.

Artifact questions/answers.parquet: qid, type, pid, role ("positive" | "negative"), answer
(null when the call failed), answered (true unless the answer is "Cannot answer"; null when the
call failed), prompt_hash, model.

Verdicts: a question passes (default mode) when every positive is answered; `strict` also
requires every negative to be refused.
"""

from __future__ import annotations

import logging

import pandas as pd
import pyarrow as pa

from boolbench.generation import shorten
from boolbench.llm import ChatRequest, LLMClient
from boolbench.prompts import Prompt
from boolbench.validation import is_refusal

log = logging.getLogger(__name__)
FILTER_MODES = ("default", "strict")
ANSWERS_SCHEMA = pa.schema(
    [("qid", pa.string()), ("type", pa.string()), ("pid", pa.string()), ("role", pa.string()),
     ("answer", pa.string()), ("answered", pa.bool_()), ("prompt_hash", pa.string()),
     ("model", pa.string())]
)  # fmt: skip


def answer_pairs(
    questions: pd.DataFrame,
    passages: dict[str, str],
    llm: LLMClient,
    prompt: Prompt,
    seed: int,
    max_tokens: int,
    max_passage_words: int,
    model: str,
    temperature: float | None = 0.0,
) -> pd.DataFrame:
    """Ask the answerer every (question, labelled passage) pair of the questions not dropped."""
    pairs = []
    for row in questions[questions["status"] != "dropped"].itertuples():
        pairs += [(row.qid, row.type, row.question, pid, "positive") for pid in row.positives]
        pairs += [(row.qid, row.type, row.question, pid, "negative") for pid in row.negatives]
    requests = [
        ChatRequest(
            f"{qid}|{pid}",
            prompt.messages(
                question=question, paragraphs=shorten(passages[pid], max_passage_words)
            ),
            seed=seed,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        for qid, _, question, pid, _ in pairs
    ]
    results = llm.run(requests) if requests else []
    llm.check_failures(results)
    rows = [
        {
            "qid": qid,
            "type": kind,
            "pid": pid,
            "role": role,
            "answer": result.content if result.ok else None,
            "answered": (not is_refusal(result.content)) if result.ok else None,
            "prompt_hash": prompt.hash,
            "model": model,
        }
        for (qid, kind, _, pid, role), result in zip(pairs, results, strict=True)
    ]
    answers = pd.DataFrame(rows, columns=ANSWERS_SCHEMA.names)
    if len(answers):
        rates = answers.groupby("role")["answered"].mean()
        log.info(
            "answered: %.0f%% of positive pairs, %.0f%% of negative pairs",
            100 * rates.get("positive", float("nan")),
            100 * rates.get("negative", float("nan")),
        )
    return answers


def verdicts(answers: pd.DataFrame) -> pd.DataFrame:
    """Per qid: passes_default, passes_strict and filter_reason (why it fails strict, if so)."""
    rows = []
    for qid, pairs in answers.groupby("qid", sort=True):
        positives = pairs[pairs["role"] == "positive"]["answered"]
        negatives = pairs[pairs["role"] == "negative"]["answered"]
        passes_default = False
        if positives.isna().any():
            reason = "answerer_failed"
        elif not positives.all():
            reason = "positive_unanswered"
        else:
            passes_default = True
            if negatives.isna().any():
                reason = "answerer_failed"
            elif negatives.any():
                reason = "negative_answered"
            else:
                reason = None
        rows.append((qid, passes_default, reason is None, reason))
    return pd.DataFrame(rows, columns=["qid", "passes_default", "passes_strict", "filter_reason"])
