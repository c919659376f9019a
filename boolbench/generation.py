"""LLM-written questions with validation, retries under other seeds, and fallbacks (paper
section 4.2: simple and disjunctive questions).

Artifacts:
- questions/simple.parquet: one row per candidate passage (group, cluster, slot, pid, qid, ...).
- questions/disjunctive.parquet: one row per group (group, cluster, qid, ...).
Both carry QUESTION_COLUMNS: question (null when dropped), source ("llm" | "template" | null),
status ("ok" | "fallback" | "dropped"), reason (why the last LLM attempt was invalid, or null),
attempts (LLM attempts made), prompt_hash, model.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa

from boolbench.llm import ChatRequest, LLMClient
from boolbench.prompts import Prompt
from boolbench.validation import MAX_WORDS, check_question, words

log = logging.getLogger(__name__)

QUESTION_COLUMNS = ["question", "source", "status", "reason", "attempts", "prompt_hash", "model"]
QUESTION_FIELDS = [
    ("question", pa.string()), ("source", pa.string()), ("status", pa.string()),
    ("reason", pa.string()), ("attempts", pa.int64()), ("prompt_hash", pa.string()),
    ("model", pa.string()),
]  # fmt: skip
SIMPLE_SCHEMA = pa.schema(
    [("group", pa.int64()), ("cluster", pa.int64()), ("slot", pa.int32()), ("pid", pa.string()),
     ("qid", pa.string()), *QUESTION_FIELDS]
)  # fmt: skip
DISJUNCTIVE_SCHEMA = pa.schema(
    [("group", pa.int64()), ("cluster", pa.int64()), ("qid", pa.string()), *QUESTION_FIELDS]
)


@dataclass(frozen=True)
class GenerationSettings:
    retries: int = 2  # further attempts, each with another seed, after an invalid output
    fallback: str = "template"  # drop | template
    max_words: int = MAX_WORDS
    question_max_tokens: int = 80
    max_passage_words: int = 300  # longer passages are cut in prompts
    seed: int = 13

    @classmethod
    def from_config(cls, section: dict, seed: int) -> GenerationSettings:
        keys = cls.__dataclass_fields__
        return cls(**{k: v for k, v in section.items() if k in keys}, seed=seed)


@dataclass(frozen=True)
class Item:
    """One question to write: its id, prompt values, and the passages it must not copy."""

    qid: str
    values: dict[str, str]
    passages: tuple[str, ...]
    fallback_values: dict[str, str] | None = None  # for the template; None: cannot fall back
    operands: tuple[str, ...] = ()  # a composed question must not just repeat one of these


@dataclass
class Outcome:
    question: str | None
    source: str | None
    status: str
    reason: str | None
    attempts: int


def shorten(text: str, max_words: int) -> str:
    """At most max_words words of a passage (for prompts)."""
    tokens = text.split()
    return text if len(tokens) <= max_words else " ".join(tokens[:max_words]) + " ..."


def generate(
    llm: LLMClient,
    prompt: Prompt,
    items: list[Item],
    settings: GenerationSettings,
    template: str | None,
) -> dict[str, Outcome]:
    """Ask for every item; retry invalid ones with seed+1, seed+2, ...; then fall back or drop."""
    outcomes: dict[str, Outcome] = {}
    last_reason: dict[str, str] = {}
    pending = list(items)
    for attempt in range(settings.retries + 1):
        if not pending:
            break
        requests = [
            ChatRequest(
                item.qid,
                prompt.messages(**item.values),
                seed=settings.seed + attempt,
                max_tokens=settings.question_max_tokens,
            )
            for item in pending
        ]
        results = llm.run(requests)
        llm.check_failures(results)
        still_pending = []
        for item, result in zip(pending, results, strict=True):
            if not result.ok:
                last_reason[item.qid] = "llm_failed"
                still_pending.append(item)
                continue
            question, reason = check_question(
                result.content, list(item.passages), settings.max_words
            )
            if reason is None and repeats(question, item.operands):
                reason = "repeats_operand"
            if reason is None:
                outcomes[item.qid] = Outcome(question, "llm", "ok", None, attempt + 1)
            else:
                last_reason[item.qid] = reason
                still_pending.append(item)
        pending = still_pending
    for item in pending:
        outcomes[item.qid] = _fall_back(item, last_reason[item.qid], settings, template)
    return outcomes


def repeats(question: str, operands: tuple[str, ...]) -> bool:
    """True if `question` is one of its operand questions (ignoring case and punctuation):
    e.g. an AND question that is the disjunctive one without any constraint."""
    return words(question) in [words(o) for o in operands if o]


def _fall_back(item: Item, reason: str, settings: GenerationSettings, template: str | None):
    attempts = settings.retries + 1
    if settings.fallback != "template" or template is None or item.fallback_values is None:
        return Outcome(None, None, "dropped", reason, attempts)
    rendered = template.format(**item.fallback_values)
    question, invalid = check_question(rendered, list(item.passages), settings.max_words)
    if invalid:
        return Outcome(None, None, "dropped", f"{reason}; template {invalid}", attempts)
    return Outcome(question, "template", "fallback", reason, attempts)


def outcome_columns(outcome: Outcome, prompt: Prompt, model: str) -> dict:
    return {
        "question": outcome.question,
        "source": outcome.source,
        "status": outcome.status,
        "reason": outcome.reason,
        "attempts": outcome.attempts,
        "prompt_hash": prompt.hash,
        "model": model,
    }


def log_outcomes(step: str, outcomes: dict[str, Outcome]) -> None:
    status = Counter(o.status for o in outcomes.values())
    reasons = Counter(o.reason for o in outcomes.values() if o.reason)
    log.info(
        "%s: %d questions, %s; invalid LLM outputs by reason: %s",
        step,
        len(outcomes),
        dict(status),
        dict(reasons),
    )


def _title_or_start(title: str | None, text: str) -> str:
    if isinstance(title, str) and title.strip():
        return title.strip()
    return " ".join(text.split()[:6])


def simple_questions(
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    template: str | None,
    model: str,
) -> pd.DataFrame:
    """One question per candidate passage, answerable by that passage."""
    items = []
    for row in candidates.itertuples():
        items.append(
            Item(
                qid=simple_qid(row.group, row.slot),
                values={
                    "paragraph": shorten(row.text, settings.max_passage_words),
                    "title": row.title or "",
                },
                passages=(row.text,),
                fallback_values={"title": _title_or_start(row.title, row.text)},
            )
        )
    outcomes = generate(llm, prompt, items, settings, template)
    log_outcomes("simple", outcomes)
    rows = [
        {
            "group": row.group,
            "cluster": row.cluster,
            "slot": row.slot,
            "pid": row.pid,
            "qid": item.qid,
            **outcome_columns(outcomes[item.qid], prompt, model),
        }
        for row, item in zip(candidates.itertuples(), items, strict=True)
    ]
    return pd.DataFrame(rows)


def numbered_paragraphs(texts: list[str], max_words: int) -> str:
    return "\n\n".join(f"Paragraph {i}: {shorten(t, max_words)}" for i, t in enumerate(texts, 1))


def join_or(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def disjunctive_questions(
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    template: str | None,
    model: str,
) -> pd.DataFrame:
    """One question per group that each candidate passage answers on its own."""
    groups = list(candidates.groupby("group", sort=True))
    items = [
        Item(
            qid=disjunctive_qid(group),
            values={"paragraphs": numbered_paragraphs(list(g["text"]), settings.max_passage_words)},
            passages=tuple(g["text"]),
            fallback_values={
                "titles": join_or(
                    [_title_or_start(t, x) for t, x in zip(g["title"], g["text"], strict=True)]
                )
            },
        )
        for group, g in groups
    ]
    outcomes = generate(llm, prompt, items, settings, template)
    log_outcomes("disjunctive", outcomes)
    rows = [
        {
            "group": group,
            "cluster": int(g["cluster"].iloc[0]),
            "qid": item.qid,
            **outcome_columns(outcomes[item.qid], prompt, model),
        }
        for (group, g), item in zip(groups, items, strict=True)
    ]
    return pd.DataFrame(rows)


# kind -> (function writing the questions, schema of its artifact)
ATOMIC = {
    "simple": (simple_questions, SIMPLE_SCHEMA),
    "disjunctive": (disjunctive_questions, DISJUNCTIVE_SCHEMA),
}


def simple_qid(group: int, slot: int) -> str:
    return f"simple-{group:05d}-{slot}"


def disjunctive_qid(group: int) -> str:
    return f"disj-{group:05d}"
