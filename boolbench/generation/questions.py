"""LLM-written questions with validation, retries under other seeds, and fallbacks (paper
section 4.2: simple and disjunctive questions).

Artifacts:
- questions/simple.parquet: one row per candidate passage (group, cluster, slot, pid, qid, ...,
  subject: the passage's title, or the subject the LLM named when the group's titles cannot tell
  its passages apart; null when neither is known).
- questions/disjunctive.parquet: one row per group (group, cluster, qid, ...). In kinds mode also
  kind (the plural noun most of the group's passages share, null if none does), kinds (the
  noun named for each passage, by slot) and members (the slots of the passages of that kind).
Both carry QUESTION_COLUMNS: question (null when dropped), source ("llm" | "template" | null),
status ("ok" | "fallback" | "dropped"), reason (why the last LLM attempt was invalid, or null),
attempts (LLM attempts made), prompt_hash, model.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd
import pyarrow as pa

from boolbench.generation.prompts import Prompt
from boolbench.generation.validation import MAX_WORDS, check_question, mentions, words
from boolbench.llm import ChatRequest, LLMClient
from boolbench.llm.until_valid import ask_until_valid

log = logging.getLogger(__name__)

QUESTION_COLUMNS = ["question", "source", "status", "reason", "attempts", "prompt_hash", "model"]
QUESTION_FIELDS = [
    ("question", pa.string()), ("source", pa.string()), ("status", pa.string()),
    ("reason", pa.string()), ("attempts", pa.int64()), ("prompt_hash", pa.string()),
    ("model", pa.string()),
]  # fmt: skip
SIMPLE_SCHEMA = pa.schema(
    [("group", pa.int64()), ("cluster", pa.int64()), ("slot", pa.int32()), ("pid", pa.string()),
     ("qid", pa.string()), *QUESTION_FIELDS, ("subject", pa.string())]
)  # fmt: skip
DISJUNCTIVE_SCHEMA = pa.schema(
    [("group", pa.int64()), ("cluster", pa.int64()), ("qid", pa.string()), *QUESTION_FIELDS,
     ("kind", pa.string()), ("kinds", pa.list_(pa.string())), ("members", pa.list_(pa.int32()))]
)  # fmt: skip
# Kinds too vague to make a question of ("What are some things other than X?").
VAGUE_KINDS = {
    "thing", "object", "item", "paragraph", "text", "topic", "concept", "term", "entity",
    "idea", "people", "person", "subject", "fact", "information", "other", "various",
}  # fmt: skip
SUBJECT_MAX_WORDS = 6


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


# ---------------------------------------------------------------------------------------------
# Questions


@dataclass(frozen=True)
class Item:
    """One question to write: its id, prompt values, and the passages it must not copy."""

    qid: str
    values: dict[str, str]
    passages: tuple[str, ...]
    fallback_values: dict[str, str] | None = None  # for the template; None: cannot fall back
    operands: tuple[str, ...] = ()  # a composed question must not just repeat one of these
    forbidden: tuple[str, ...] = ()  # names the question must not mention (a quiz's answer)
    extra_checks: tuple[Callable[[str], str | None], ...] = field(default=())


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


def check_item(item: Item, reply: str | None, max_words: int) -> tuple[str, str | None]:
    """(question, None) if the reply is a valid question for `item`, else (text, reason)."""
    question, reason = check_question(reply, list(item.passages), max_words)
    if reason is None and repeats(question, item.operands):
        reason = "repeats_operand"
    if reason is None and any(mentions(question, name) for name in item.forbidden):
        reason = "names_the_answer"
    for extra in item.extra_checks:
        if reason is None:
            reason = extra(question)
    return question, reason


def generate(
    llm: LLMClient,
    prompt: Prompt,
    items: list[Item],
    settings: GenerationSettings,
    template: str | None,
) -> dict[str, Outcome]:
    """Ask for every item; retry invalid ones with seed+1, seed+2, ...; then fall back or drop."""
    by_qid = {item.qid: item for item in items}
    answers = ask_until_valid(
        llm,
        list(by_qid),
        lambda qid, attempt: ChatRequest(
            qid,
            prompt.messages(**by_qid[qid].values),
            seed=settings.seed + attempt,
            max_tokens=settings.question_max_tokens,
        ),
        lambda qid, result: check_item(by_qid[qid], result.content, settings.max_words),
        settings.retries,
    )
    outcomes = {}
    for qid, answer in answers.items():
        if answer.reason is None:
            outcomes[qid] = Outcome(answer.value, "llm", "ok", None, answer.attempts)
        else:
            outcomes[qid] = _fall_back(by_qid[qid], answer.reason, settings, template)
    return outcomes


def repeats(question: str, operands: tuple[str, ...]) -> bool:
    """True if `question` is one of its operand questions (ignoring case and punctuation):
    e.g. an AND question that is the disjunctive one without any constraint."""
    return words(question) in [words(o) for o in operands if o]


def _fall_back(item: Item, reason: str, settings: GenerationSettings, template: str | None):
    attempts = settings.retries + 1
    if settings.fallback != "template" or template is None or item.fallback_values is None:
        return Outcome(None, None, "dropped", reason, attempts)
    return from_template(template, item, settings, reason, attempts, "fallback")


def from_template(
    template: str, item: Item, settings: GenerationSettings, reason, attempts, status
) -> Outcome:
    """The item's question rendered from `template` (checked like an LLM's)."""
    rendered = template.format(**item.fallback_values)
    question, invalid = check_question(rendered, list(item.passages), settings.max_words)
    if invalid:
        why = f"{reason}; template {invalid}" if reason else f"template {invalid}"
        return Outcome(None, None, "dropped", why, attempts)
    return Outcome(question, "template", status, reason, attempts)


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


def usable_titles(group: pd.DataFrame) -> bool:
    """A group's titles name its passages when every passage has one and no two share it
    (passages of one page, as in the paper's NQ variant, share their page's title)."""
    titles = [t.strip().lower() for t in group["title"] if isinstance(t, str) and t.strip()]
    return len(titles) == len(group) and len(set(titles)) == len(titles)


def subject_of_title(title: str) -> str:
    """A title as a subject: without a trailing qualifier ("Grand Canal (China)" -> "Grand
    Canal"), which names the page rather than the thing."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title.strip()) or title.strip()


def check_subject(reply: str | None) -> tuple[str | None, str | None]:
    """A named subject: a short name on one line, without a question or a sentence."""
    text = (reply or "").strip().strip("\"'“”").rstrip(".").strip()
    if not text:
        return None, "empty"
    if "\n" in text or "?" in text:
        return None, "not_a_name"
    if len(text.split()) > SUBJECT_MAX_WORDS:
        return None, "too_long"
    return text, None


def name_subjects(
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
) -> dict[str, str | None]:
    """pid -> subject: the title where the group's titles tell its passages apart, else the
    subject the LLM names (None if it never names one validly)."""
    subjects: dict[str, str | None] = {}
    to_name: dict[str, str] = {}
    for _, group in candidates.groupby("group", sort=True):
        for row in group.itertuples():
            if usable_titles(group):
                subjects[row.pid] = subject_of_title(row.title)
            else:
                to_name[row.pid] = row.text
    if to_name:
        answers = ask_until_valid(
            llm,
            list(to_name),
            lambda pid, attempt: ChatRequest(
                f"subject|{pid}",
                prompt.messages(paragraph=shorten(to_name[pid], settings.max_passage_words)),
                seed=settings.seed + attempt,
                max_tokens=16,
            ),
            lambda pid, result: check_subject(result.content),
            settings.retries,
        )
        subjects |= {pid: answer.value for pid, answer in answers.items()}
    return subjects


def simple_questions(
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    template: str | None,
    model: str,
    subject_prompt: Prompt | None = None,
) -> pd.DataFrame:
    """One question per candidate passage, answerable by that passage, and its subject (named
    by the LLM with `subject_prompt` where titles cannot tell a group's passages apart)."""
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
    subjects = (
        name_subjects(candidates, llm, subject_prompt, settings)
        if subject_prompt is not None else {}
    )  # fmt: skip
    rows = [
        {
            "group": row.group,
            "cluster": row.cluster,
            "slot": row.slot,
            "pid": row.pid,
            "qid": item.qid,
            **outcome_columns(outcomes[item.qid], prompt, model),
            "subject": subjects.get(row.pid),
        }
        for row, item in zip(candidates.itertuples(), items, strict=True)
    ]
    return pd.DataFrame(rows)


def numbered_paragraphs(texts: list[str], max_words: int) -> str:
    return "\n\n".join(f"Paragraph {i}: {shorten(t, max_words)}" for i, t in enumerate(texts, 1))


def numbered_items(titles: list, texts: list[str], words_each: int = 25) -> str:
    """'1. Title: the first words' per passage (kinds mode: enough to tell what it is)."""
    lines = []
    for i, (title, text) in enumerate(zip(titles, texts, strict=True), 1):
        name = f"{title.strip()}: " if isinstance(title, str) and title.strip() else ""
        lines.append(f"{i}. {name}{shorten(text, words_each)}")
    return "\n".join(lines)


def join_or(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def disjunctive_questions(
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    template: str | None,
    model: str,
    kind_template: str | None = None,
) -> pd.DataFrame:
    """One question per group that each candidate passage answers on its own: written by the
    LLM (mode question), or (mode kinds) the kind_template question of the kind most of the
    group's passages share, as the LLM names each passage's kind."""
    groups = list(candidates.groupby("group", sort=True))
    if prompt.mode == "kinds":
        return _kind_questions(groups, llm, prompt, settings, kind_template, model)
    items = [
        Item(
            qid=disjunctive_qid(group),
            values={
                "paragraphs": numbered_paragraphs(list(g["text"]), settings.max_passage_words),
                "items": numbered_items(list(g["title"]), list(g["text"])),
            },
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
            "kind": None,
            "kinds": None,
            "members": None,
        }
        for (group, g), item in zip(groups, items, strict=True)
    ]
    return pd.DataFrame(rows)


def kinds_format(count: int) -> dict:
    """The reply's JSON schema (as response_format): one kind per passage, in order."""
    schema = {
        "type": "object",
        "properties": {
            "kinds": {
                "type": "array",
                "items": {"type": "string", "maxLength": 40},
                "minItems": count,
                "maxItems": count,
            }
        },
        "required": ["kinds"],
    }
    return {"type": "json_schema", "json_schema": {"name": "kinds", "schema": schema}}


def parse_kinds(reply: str | None, count: int) -> tuple[list[str] | None, str | None]:
    """The kinds of a reply ({"kinds": [...]}, one per passage), or (None, reason)."""
    try:
        data = json.loads(reply or "")
    except json.JSONDecodeError:
        return None, "not_json"
    kinds = data.get("kinds") if isinstance(data, dict) else None
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        return None, "no_kinds"
    kinds = [" ".join(k.split()).strip(" .") for k in kinds]
    if len(kinds) != count or not all(kinds):
        return None, "wrong_count"
    return kinds, None


def kind_key(kind: str) -> str:
    """A kind for comparison: lower case, each word without a plural ending (cities/city)."""
    keys = []
    for word in words(kind):
        for ending, replacement in (("ies", "y"), ("ses", "s"), ("es", "e"), ("s", "")):
            if word.endswith(ending) and len(word) > len(ending) + 2:
                word = word[: -len(ending)] + replacement
                break
        keys.append(word)
    return " ".join(keys)


def shared_kind(kinds: list[str]) -> tuple[str | None, list[int]]:
    """(the kind most passages share, their positions) when at least two do and it is not
    vague; the kind is given as named, preferring a plural form."""
    keys = [kind_key(k) for k in kinds]
    key, count = Counter(keys).most_common(1)[0] if keys else (None, 0)
    if count < 2 or not key or set(key.split()) & VAGUE_KINDS:
        return None, []
    positions = [i for i, k in enumerate(keys) if k == key]
    named = [kinds[i] for i in positions]
    plural = [k for k in named if k.lower().endswith("s")]
    return (plural or named)[0].lower(), positions


def _kind_questions(groups, llm, prompt, settings, kind_template, model) -> pd.DataFrame:
    by_qid = {disjunctive_qid(group): g for group, g in groups}
    answers = ask_until_valid(
        llm,
        list(by_qid),
        lambda qid, attempt: ChatRequest(
            qid,
            prompt.messages(
                items=numbered_items(list(by_qid[qid]["title"]), list(by_qid[qid]["text"])),
                paragraphs=numbered_paragraphs(
                    list(by_qid[qid]["text"]), settings.max_passage_words
                ),
            ),
            seed=settings.seed + attempt,
            max_tokens=16 + 12 * len(by_qid[qid]),
            temperature=0.0 if attempt == 0 else None,
            response_format=kinds_format(len(by_qid[qid])),
        ),
        lambda qid, result: parse_kinds(result.content, len(by_qid[qid])),
        settings.retries,
    )
    rows = []
    for qid, g in by_qid.items():
        answer = answers[qid]
        kinds = answer.value
        kind, positions = shared_kind(kinds) if kinds else (None, [])
        slots = [int(s) for s in g["slot"]]
        base = {"group": int(g["group"].iloc[0]), "cluster": int(g["cluster"].iloc[0]),
                "qid": qid, "prompt_hash": prompt.hash, "model": model,
                "attempts": answer.attempts, "kind": kind, "kinds": kinds,
                "members": [slots[i] for i in positions]}  # fmt: skip
        if kind is None:
            reason = answer.reason or "no_shared_kind"
            rows.append(base | {"question": None, "source": None, "status": "dropped",
                                "reason": reason})  # fmt: skip
        else:
            rows.append(base | {"question": kind_template.format(kind=kind), "source": "template",
                                "status": "ok", "reason": None})  # fmt: skip
    log.info(
        "disjunctive (kinds): %d of %d groups share a kind",
        sum(r["kind"] is not None for r in rows),
        len(rows),
    )
    return pd.DataFrame(rows)


ATOMIC_SCHEMAS = {"simple": SIMPLE_SCHEMA, "disjunctive": DISJUNCTIVE_SCHEMA}


def simple_qid(group: int, slot: int) -> str:
    return f"simple-{group:05d}-{slot}"


def disjunctive_qid(group: int) -> str:
    return f"disj-{group:05d}"
