"""The atomic questions of a group (paper section 4.2), with validation, retries under other
seeds and fallbacks: the kind its passages share (the disjunctive question) and a simple
question per member of that kind.

Artifacts:
- questions/disjunctive.parquet: one row per group (group, cluster, qid, QUESTION_COLUMNS):
  kind (a plural noun phrase that at least two of the group's passages are, as the LLM names
  it; null if none is valid), kind_singular, members (the slots of the passages of that kind)
  and question, the kind question ("What are some <kind>?", the `disjunctive` template);
  sorts (aligned with members): the word or two, copied from each member's passage, that say
  which sort of the kind it is ("Hindu" of a festival, "red giant" of a star; "" when the LLM
  gave none that holds), what OR questions ask for ("What are some Hindu or Christian
  festivals?"); places (aligned with members): the place the passage's first sentence puts
  the member in ("Vietnam" of a city; "" when none holds), what OR questions ask for too,
  before two sorts ("What are some cities in Vietnam or in Thailand?"); subjects
  (aligned with members): each member's name (the passage's title, or the name the LLM gave
  when the group's titles cannot tell its passages apart).
- questions/simple.parquet: one row per candidate passage (group, cluster, slot, pid, qid,
  QUESTION_COLUMNS, subject, predicate): members get "Which <kind, singular> <predicate>?",
  whose answer is their subject; others are dropped (reason no_kind or not_a_member).
QUESTION_COLUMNS: question (null when dropped), source ("llm" | "template" | null), status
("ok" | "fallback" | "dropped"), reason (why the last attempt was invalid, or null), attempts
(LLM attempts made), prompt_hash, model.
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

from boolbench.generation.grammar import (
    NAME_CONNECTORS,
    kind_forms,
    misstated,
    names_a_field,
    predicate_problem,
)
from boolbench.generation.prompts import Prompt
from boolbench.generation.validation import (
    MAX_WORDS,
    check_question,
    clean,
    content_words,
    mentions,
    words,
)
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
     ("qid", pa.string()), *QUESTION_FIELDS, ("subject", pa.string()),
     ("predicate", pa.string())]
)  # fmt: skip
DISJUNCTIVE_SCHEMA = pa.schema(
    [("group", pa.int64()), ("cluster", pa.int64()), ("qid", pa.string()), *QUESTION_FIELDS,
     ("kind", pa.string()), ("kind_singular", pa.string()), ("members", pa.list_(pa.int32())),
     ("sorts", pa.list_(pa.string())), ("places", pa.list_(pa.string())),
     ("subjects", pa.list_(pa.string())), ("construction", pa.string())]
)  # fmt: skip
KIND = "kind"  # the construction of a group whose members are of one kind (stories.STORY)
ATOMIC_SCHEMAS = {"simple": SIMPLE_SCHEMA, "disjunctive": DISJUNCTIVE_SCHEMA}
# Kinds too vague to make a question of ("What are some things other than X?"). "Events"
# ("historical events") takes whatever happened: blind annotators read the Roman Republic and
# the Western Roman Empire, its members, as no events (docs/results.md).
VAGUE_KINDS = {
    "thing", "things", "object", "objects", "item", "items", "paragraph", "paragraphs", "text",
    "event", "events",
    "topic", "topics", "concept", "concepts", "term", "terms", "entity", "entities", "idea",
    "ideas", "people", "person", "persons", "subject", "subjects", "fact", "facts",
    "information", "other", "others", "various", "encyclopedia", "article", "articles",
}  # fmt: skip
# Words that say nothing specific of a member ("is considered one of the major poets").
GENERIC_WORDS = {
    "considered", "one", "major", "famous", "well", "important", "notable", "popular",
    "significant", "great", "greatest", "regarded", "widely", "often", "also", "many", "first",
    "best", "called", "named", "type", "kind", "example",
}  # fmt: skip
KIND_MAX_WORDS = 6
KIND_MAX_TOKENS = 48
SUBJECT_MAX_WORDS = 6


PER_GROUP = 3  # questions of a type per group, at most, where the config names no number


@dataclass(frozen=True)
class GenerationSettings:
    retries: int = 2  # further attempts, each with another seed, after an invalid output
    fallback: str = "template"  # drop | template
    max_words: int = MAX_WORDS
    question_max_tokens: int = 80
    max_passage_words: int = 300  # longer passages are cut in prompts
    per_group: int | dict = PER_GROUP  # questions of each type per group, at most (or per type)
    seed: int = 13

    def cap(self, operator: str) -> int:
        """At most this many `operator` questions per group."""
        if isinstance(self.per_group, dict):
            return int(self.per_group.get(operator.lower(), PER_GROUP))
        return self.per_group

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
    rewrite: Callable[[str], str] | None = None  # a reply's wording put in the asked form


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
    if item.rewrite is not None:
        reply = item.rewrite(clean(reply))
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


def usable_titles(group: pd.DataFrame) -> bool:
    """A group's titles name its passages when every passage has one and no two share it
    (passages of one page, as in the paper's NQ variant, share their page's title)."""
    titles = [t.strip().lower() for t in group["title"] if isinstance(t, str) and t.strip()]
    return len(titles) == len(group) and len(set(titles)) == len(titles)


def subject_of_title(title: str) -> str:
    """A title as a subject: without a trailing qualifier ("Grand Canal (China)" -> "Grand
    Canal"), which names the page rather than the thing."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title.strip()) or title.strip()


def check_subject(reply: str | None, paragraph: str = "") -> tuple[str | None, str | None]:
    """A named subject: a short name on one line, without a question or a sentence, that its
    `paragraph` writes as it is written (a description the LLM made up, "Cloud market issues",
    "Chileans' Victory", or a common noun capitalised, "Offshore wind farm" for "an offshore
    wind farm", names nothing a question could exclude or ask for)."""
    text = (reply or "").strip().strip("\"'“”").rstrip(".").strip()
    if not text:
        return None, "empty"
    if "\n" in text or "?" in text:
        return None, "not_a_name"
    if len(text.split()) > SUBJECT_MAX_WORDS:
        return None, "too_long"
    if paragraph and not re.search(rf"(?<!\w){re.escape(text)}(?!\w)", paragraph):
        return None, "not_in_the_passage"
    return text, None


def name_subjects(
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt | None,
    settings: GenerationSettings,
) -> dict[str, str | None]:
    """pid -> subject: the title where the group's titles tell its passages apart, else the
    subject the LLM names with `prompt` (None if it never names one validly, or no prompt)."""
    subjects: dict[str, str | None] = {}
    to_name: dict[str, str] = {}
    for _, group in candidates.groupby("group", sort=True):
        for row in group.itertuples():
            if usable_titles(group):
                subjects[row.pid] = subject_of_title(row.title)
            else:
                to_name[row.pid] = row.text
    if to_name and prompt is not None:
        answers = ask_until_valid(
            llm,
            list(to_name),
            lambda pid, attempt: ChatRequest(
                f"subject|{pid}",
                prompt.messages(paragraph=shorten(to_name[pid], settings.max_passage_words)),
                seed=settings.seed + attempt,
                max_tokens=16,
            ),
            lambda pid, result: check_subject(result.content, to_name[pid]),
            settings.retries,
        )
        subjects |= {pid: answer.value for pid, answer in answers.items()}
    return subjects


# ---------------------------------------------------------------------------------------------
# The group's kind (the disjunctive question)


def numbered_items(titles: list, texts: list[str], words_each: int = 25) -> str:
    """'1. Title: the first words' per passage (enough to tell what it is)."""
    lines = []
    for i, (title, text) in enumerate(zip(titles, texts, strict=True), 1):
        name = f"{title.strip()}: " if isinstance(title, str) and title.strip() else ""
        lines.append(f"{i}. {name}{shorten(text, words_each)}")
    return "\n".join(lines)


def kind_format(count: int) -> dict:
    """The reply's JSON schema (as response_format): a kind and the passages of it."""
    schema = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "maxLength": 60},
            "members": {
                "type": "array",
                "items": {"type": "integer", "minimum": 1, "maximum": count},
                "minItems": 1,
                "maxItems": count,
            },
        },
        "required": ["kind", "members"],
    }
    return {"type": "json_schema", "json_schema": {"name": "kind", "schema": schema}}


@dataclass(frozen=True)
class Kind:
    """What a group's passages share: the kind in both numbers, and the slots of its members."""

    plural: str
    singular: str
    members: tuple[int, ...]


def parse_kind(reply: str | None, titles: list, slots: list[int]) -> tuple[Kind | None, str | None]:
    """The kind of a reply ({"kind": ..., "members": [1-based numbers]}), or (None, reason): a
    kind needs at least two members, one to six words, a noun that says something, and must not
    be one of its members' titles."""
    try:
        data = json.loads(reply or "")
    except json.JSONDecodeError:
        return None, "not_json"
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        return None, "no_kind"
    name = " ".join(data["kind"].split()).strip(" .")
    numbers = data.get("members")
    if not isinstance(numbers, list) or not all(isinstance(n, int) for n in numbers):
        return None, "no_members"
    members = sorted({slots[n - 1] for n in numbers if 1 <= n <= len(slots)})
    if len(members) < 2:
        return None, "fewer_than_two_members"
    if not name or len(name.split()) > KIND_MAX_WORDS or any(c.isdigit() for c in name):
        return None, "not_a_kind"
    if re.search(r"\b(?:and|or)\b|[,/&]", name):  # two kinds ("poets and scholars")
        return None, "two_kinds"
    plural, singular = kind_forms(name)
    if set(words(singular)) & VAGUE_KINDS or set(words(plural)) & VAGUE_KINDS:
        return None, "vague_kind"
    if names_a_field(plural):
        return None, "field_not_a_kind"
    named = {words(subject_of_title(t)) == words(singular) or words(t) == words(plural)
             for t in titles if isinstance(t, str)}  # fmt: skip
    if True in named:
        return None, "kind_is_a_subject"
    return Kind(plural, singular, tuple(members)), None


def kind_questions(
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    template: str,
    model: str,
) -> pd.DataFrame:
    """Per group: the kind of thing at least two of its passages are (the LLM names it, with a
    JSON schema), the passages of that kind (members) and the group's kind question, the
    `template` of the kind ("What are some {kind}?"), which the disjunctive question is."""
    by_qid = {disjunctive_qid(int(group)): g for group, g in candidates.groupby("group", sort=True)}
    answers = ask_until_valid(
        llm,
        list(by_qid),
        lambda qid, attempt: ChatRequest(
            qid,
            prompt.messages(
                items=numbered_items(list(by_qid[qid]["title"]), list(by_qid[qid]["text"]))
            ),
            seed=settings.seed + attempt,
            max_tokens=KIND_MAX_TOKENS,
            temperature=0.0 if attempt == 0 else None,
            response_format=kind_format(len(by_qid[qid])),
        ),  # fmt: skip
        lambda qid, result: parse_kind(
            result.content, list(by_qid[qid]["title"]), [int(s) for s in by_qid[qid]["slot"]]
        ),
        settings.retries,
    )
    rows = []
    for qid, g in by_qid.items():
        answer = answers[qid]
        kind: Kind | None = answer.value
        base = {"group": int(g["group"].iloc[0]), "cluster": int(g["cluster"].iloc[0]),
                "qid": qid, "attempts": answer.attempts, "prompt_hash": prompt.hash,
                "model": model}  # fmt: skip
        if kind is None:
            rows.append(base | {"question": None, "source": None, "status": "dropped",
                                "reason": answer.reason, "kind": None, "kind_singular": None,
                                "members": [], "sorts": [], "places": [],
                                "subjects": [], "construction": KIND})  # fmt: skip
            continue
        question, invalid = check_question(template.format(kind=kind.plural), [])
        rows.append(
            base
            | {"question": None if invalid else question, "source": "template",
               "status": "dropped" if invalid else "ok",
               "reason": f"template {invalid}" if invalid else None, "kind": kind.plural,
               "kind_singular": kind.singular, "members": list(kind.members),
               "sorts": [""] * len(kind.members), "places": [""] * len(kind.members),
               "subjects": [""] * len(kind.members), "construction": KIND}
        )  # fmt: skip
    log.info(
        "kinds: %d of %d groups share one (%s)",
        sum(r["status"] == "ok" for r in rows),
        len(rows),
        dict(Counter(r["reason"] for r in rows if r["reason"])),
    )
    return pd.DataFrame(rows, columns=DISJUNCTIVE_SCHEMA.names)


def with_subjects(kinds: pd.DataFrame, candidates: pd.DataFrame,
                  subjects: dict[str, str | None]) -> pd.DataFrame:  # fmt: skip
    """The kinds with each member's subject (column subjects, aligned with members): what its
    simple question answers and the set questions call it. A member without one, or whose
    name is the kind's ("Offshore wind farm" among offshore wind farms), is none (no question
    could name it). Where the LLM named the subjects (titles cannot tell the group's
    passages apart), a member whose subject another member's passage names too is none either:
    both are about one thing (the paragraphs of one news story, "Election" in both). A kind
    left with fewer than two members gives no question."""
    kinds = kinds.copy()
    passages = candidates.set_index(["group", "slot"])
    for i, row in kinds.iterrows():
        group = int(row["group"])
        text = {int(s): passages.loc[(group, int(s)), "text"] for s in row["members"]}
        named = {s: subjects.get(passages.loc[(group, s), "pid"]) for s in text}
        # a name that is the kind's own names no member ("besides offshore wind farm")
        named = {s: name for s, name in named.items()
                 if name and words(name) not in (words(row["kind"] or ""),
                                                 words(row["kind_singular"] or ""))}  # fmt: skip
        distinct = named
        if not usable_titles(candidates[candidates["group"] == group]):
            distinct = {s: name for s, name in named.items()
                        if not any(mentions(text[o], name) for o in text if o != s)}  # fmt: skip
        if row["status"] != "dropped" and len(distinct) < 2:
            reason = ("members_are_one_thing" if len(named) >= 2
                      else "fewer_than_two_members_of_the_kind")  # fmt: skip
            kinds.loc[i, ["question", "source", "status", "reason"]] = [None, None, "dropped",
                                                                        reason]  # fmt: skip
        kept = [s for s in map(int, row["members"]) if s in distinct]
        kinds.at[i, "members"] = kept
        kinds.at[i, "sorts"] = [""] * len(kept)  # named later (member_sorts)
        kinds.at[i, "places"] = [""] * len(kept)
        kinds.at[i, "subjects"] = [distinct[s] for s in kept]
    log.info(
        "subjects: %d of %d groups keep at least two members with distinct names (%s)",
        int((kinds["status"] != "dropped").sum()),
        len(kinds),
        dict(Counter(kinds.loc[kinds["status"] == "dropped", "reason"])),
    )
    return kinds


# ---------------------------------------------------------------------------------------------
# Sorts: which sort of the kind each member is ("Hindu" festival), for OR questions

SORT_MAX_WORDS = 2
SORT_PASSAGE_WORDS = 80  # what a member's sort is, its passage says first
SORT_MAX_TOKENS = 12
# A place reply often repeats the sentence ("Vega is a star in the northern constellation of
# Lyra"): 12 tokens cut it before the name ("... of Bo" of Boötes).
PLACE_MAX_TOKENS = 20
# Words that rank or size a member rather than sort it ("the brightest star", "a major city").
VAGUE_SORTS = frozenset(
    ["famous", "major", "large", "small", "big", "great", "important", "notable", "well-known",
     "popular", "main", "common", "bright", "prominent", "influential", "significant",
     "leading", "primary", "first", "second", "third", "only", "many", "several", "other",
     "various", "single", "best", "most", "very", "good", "new", "well", "known", "type",
     "kind", "sort", "form", "part", "member", "group", "branch", "one", "two"]
)  # fmt: skip
_LEADING = re.compile(r"^(?:(?:a|an|the|its|it|is|was)\s+)+", re.IGNORECASE)
# A sort qualifies the kind ("Hindu festivals"); a noun in its place reads as another kind
# ("overseas collectivity countries", "study sub-disciplines", "catalysis processes").
NOUN_SORTS = frozenset(
    ["study", "system", "area", "field", "place", "sea", "republic", "region", "theory",
     "process", "science", "state", "territory", "nation", "land", "discipline", "subject",
     "topic", "concept", "thing", "way", "example", "name"]
)  # fmt: skip
NOUN_ENDINGS = ("ity", "sis", "tion", "sion", "ment", "ness", "ship")
# Endings of common nouns only ("appliance", "undergarments"): a proper word may end so and
# qualify ("Renaissance painters", "Swiss banks").
COMMON_NOUN_ENDINGS = ("ance", "ence", "s")
ADJECTIVE_S_ENDINGS = ("ss", "us", "is", "ous")  # "gneiss", "igneous": not plurals


def parse_sort(reply: str | None, text: str, subject: str, kind: str,
               kind_singular: str) -> tuple[str | None, str | None]:  # fmt: skip
    """The sort a reply names ("Hindu", from "Diwali is a Hindu festival." too), as the passage
    writes it, or (None, reason): one or two words found in the passage, none of them the
    kind's own, the subject's, a ranking or size ("brightest", "major") or a number, and ending
    in a word that can qualify the kind (not a noun such as "study" or "collectivity")."""
    value = " ".join((reply or "").split()).strip(" .,;:!\"'`")
    value = re.sub(r"^.*?\b(?:is|was|are|were)\s+(?:an?|the)\s+", "", value, flags=re.IGNORECASE)
    # what comes before the kind: "Portuguese" of "Portuguese island country."
    kind_words = set(content_words(kind) + content_words(kind_singular))
    tokens = value.split()
    found = [i for i, w in enumerate(tokens) if words(w)[:1] and words(w)[0] in kind_words]
    if found:
        value = " ".join(tokens[: found[0]])
    value = _LEADING.sub("", value).strip(" .,;:-")
    have = words(value)
    if not have:
        return None, "no_sort"
    if len(have) > SORT_MAX_WORDS:
        return None, "not_one_sort"
    # "Chinese" says no more than "rivers in China"
    own = {w[:4] for w in kind_words} | set(words(subject))
    if any(w[:4] in own or w in own for w in have):
        return None, "names_the_kind_or_subject"
    vague = VAGUE_SORTS | VAGUE_KINDS
    if any(w in vague or w.endswith("est") or w[0].isdigit() for w in have):
        return None, "vague_sort"
    if have[-1] in NOUN_SORTS or have[-1].endswith(NOUN_ENDINGS) or _common_noun(value):
        return None, "not_a_modifier"
    pattern = r"\W+".join(map(re.escape, value.split()))
    match = re.search(rf"(?<![\w-]){pattern}(?![\w-])", text, re.IGNORECASE)
    if not match:
        return None, "not_in_the_passage"
    return match.group(0), None


def _common_noun(value: str) -> bool:
    """True when a sort's last word is a common noun by its ending: a plural
    ("undergarments clothing") or an -ance/-ence noun ("household appliance")."""
    last = value.split()[-1]
    return (
        last.islower()
        and last.endswith(COMMON_NOUN_ENDINGS)
        and not last.endswith(ADJECTIVE_S_ENDINGS)
    )


@dataclass(frozen=True)
class SortAsk:
    """One member whose sort (or place) is asked: its passage, subject and group's kind."""

    text: str
    subject: str
    kind: str
    kind_singular: str


def member_sorts(
    kinds: pd.DataFrame,
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    column: str = "sorts",
) -> pd.DataFrame:
    """The kinds with each member's sort (column sorts, aligned with members; "" where the reply
    gives none that holds): one call per member, no retry (a member without a sort is simply
    not an OR alternative; sampled replies gave sorts that are no qualifier of the kind, "inlet
    geographical regions", "poet literary works": measured in docs/results.md). With
    `column="places"` (the `place` prompt) each member's place instead (parse_place)."""
    parse = parse_place if column == "places" else parse_sort
    kinds = kinds.copy()
    passages = candidates.set_index(["group", "slot"])
    asks: dict[tuple[str, int], SortAsk] = {}
    for row in kinds[kinds["status"] != "dropped"].itertuples():
        for slot, subject in zip(row.members, row.subjects, strict=True):
            passage = passages.loc[(int(row.group), int(slot))]
            asks[(row.qid, int(slot))] = SortAsk(passage["text"], subject or "It", row.kind,
                                                 row.kind_singular)  # fmt: skip

    def request(key: tuple[str, int], attempt: int) -> ChatRequest:
        ask = asks[key]
        paragraph = shorten(ask.text, SORT_PASSAGE_WORDS)
        return ChatRequest(
            f"{column}|{key[0]}|{key[1]}",
            prompt.messages(
                paragraph=paragraph, subject=ask.subject, kind_singular=ask.kind_singular
            ),
            seed=settings.seed,
            max_tokens=PLACE_MAX_TOKENS if column == "places" else SORT_MAX_TOKENS,
            temperature=0.0,
        )

    def check(key: tuple[str, int], result) -> tuple[str | None, str | None]:
        ask = asks[key]
        return parse(result.content, ask.text, ask.subject, ask.kind, ask.kind_singular)

    answers = ask_until_valid(llm, list(asks), request, check)
    kinds[column] = [
        [(answers[(qid, int(s))].value or "") if (qid, int(s)) in answers else "" for s in members]
        for qid, members in zip(kinds["qid"], kinds["members"], strict=True)
    ]
    log.info(
        "%s: %d of %d members have one (%s)",
        column,
        sum(bool(a.value) for a in answers.values()),
        len(answers),
        dict(Counter(a.reason for a in answers.values() if a.reason)),
    )
    return kinds


# Places: where a member is ("cities in Vietnam"), for OR questions (cities, island countries
# and mountain ranges are rarely sorted by a word before the kind, but their passages say where
# they are).
PLACE_MAX_WORDS = 4
PLACE_GAP_WORDS = 4  # between "in" and the place: "in the northern constellation of Lyra"
GENERIC_PLACES = frozenset(["world", "earth", "universe", "western world", "northern hemisphere",
                            "southern hemisphere", "space", "nature"])  # fmt: skip
_DESCRIBED_NAME = re.compile(r"^(?:[a-z][\w.'-]*\s+)+of\s+(?=[A-Z])")
_FIRST_SENTENCE = re.compile(r"^.*?[.!?](?=\s+[A-Z\"'(]|\s*$)", re.DOTALL)


def first_sentence(text: str) -> str:
    """A passage's first sentence (to its first full stop before a capital)."""
    match = _FIRST_SENTENCE.match(text.strip())
    return match.group(0) if match else text


def parse_place(reply: str | None, text: str, subject: str, kind: str,
                kind_singular: str) -> tuple[str | None, str | None]:  # fmt: skip
    """The place a reply names ("Vietnam", from "Haiphong is a city in Vietnam." too), as the
    passage writes it, or (None, reason): a proper name of at most four words, none of them the
    kind's or the subject's, that the passage's first sentence puts the member in: after "in"
    and at most four words ("the third-largest city in Vietnam", "in the eastern Mediterranean
    Sea"), whole ("Canis" of "Canis Major" is none), by its name ("Lyra" of "the northern
    constellation of Lyra"). A place named elsewhere is no place the member is in ("after whom
    the continent of America is named"); people are rarely put in a place by their first
    sentence."""
    value = " ".join((reply or "").split()).strip(" .,;:!\"'`")
    value = re.sub(r"^.*?\bin\s+", "", value, flags=re.IGNORECASE)
    value = re.sub(r"^the\s+", "", value, flags=re.IGNORECASE).strip(" .,;:")
    # the name, not its description: "Lyra" of "the northern constellation of Lyra" (two such
    # places share "constellation" and would never pair)
    value = _DESCRIBED_NAME.sub("", value)
    have = words(value)
    if not have:
        return None, "no_place"
    if len(value.split()) > PLACE_MAX_WORDS:
        return None, "not_one_place"
    if not any(w[:1].isupper() for w in value.split()):
        return None, "not_a_place_name"
    if " ".join(have) in GENERIC_PLACES:
        return None, "vague_place"
    own = set(words(kind)) | set(words(kind_singular)) | set(words(subject))
    if set(have) & own:
        return None, "names_the_kind_or_subject"
    pattern = r"\W+".join(map(re.escape, value.split()))
    gap = rf"(?:[\w-]+\s+){{0,{PLACE_GAP_WORDS}}}?"
    whole = r"(?![\w-])(?!\s+(?-i:[A-Z]))"  # not followed by more of a name
    match = re.search(rf"\bin\s+({gap})({pattern}){whole}", first_sentence(text), re.IGNORECASE)
    if not match:
        return None, "not_where_it_is"
    # with the article the passage gives it ("in the Gulf of Guinea")
    article = "the " if match.group(1).strip().lower() == "the" else ""
    return article + match.group(2), None


# ---------------------------------------------------------------------------------------------
# Simple questions: "Which <kind> <predicate>?", one per member, answered by its subject


SIBLING_SHARE = 0.75  # of a predicate's specific words found in another member's passage


def quiz_check(kind_singular: str, siblings: tuple[str, ...] = (), passage: str = ""):
    """The checks of a member's simple question: it does not copy the mark of the hidden name,
    it starts with "Which <kind>", its predicate is English a person would ask
    (`grammar.predicate_problem`) and does not misstate its own `passage`
    (`grammar.misstated`), what it says of the subject is more than the
    kind itself, and is not what another member's passage (`siblings`) says too: "Which poet
    was a Chinese politician of the Tang dynasty?" is as true of the group's other Tang poet,
    whose AND question then fails."""
    opening = ["which", *words(kind_singular)]
    kind_words = set(words(kind_singular)) | set(words(kind_forms(kind_singular)[0]))
    sibling_words = [set(words(text)) for text in siblings]

    def check(question: str) -> str | None:
        if "__" in question:  # the hidden name's mark, copied ("known as the __ of Siam")
            return "copies_the_mask"
        tokens = words(question)
        if tokens[: len(opening)] != opening:
            return "not_which_kind"
        predicate = predicate_of(question, kind_singular)
        problem = predicate_problem(predicate) or misstated(predicate, passage)
        if problem:
            return problem
        said = set(content_words(predicate)) - kind_words
        specific = said - GENERIC_WORDS
        if not specific:
            return "not_specific"
        if any(len(specific & other) >= SIBLING_SHARE * len(specific) for other in sibling_words):
            return "true_of_a_sibling"
        return None

    return check


def as_which(kind_singular: str) -> Callable[[str], str]:
    """A simple question put in the asked form "Which <kind> <predicate>?" where a model wrote
    another form of it: "What city ...?", "Who was the poet who ...?", "What is the river
    that ...?" (the 1.5B writes these for about one in seven requests)."""
    kind = r"\s+".join(re.escape(w) for w in kind_singular.split())
    forms = [
        re.compile(rf"^what\s+(?={kind}\b)", re.IGNORECASE),
        re.compile(rf"^(?:who|what)\s+(?:is|was)\s+(?:the|a|an)\s+({kind})\s+(?:who|that|which)\s+",
                   re.IGNORECASE),
    ]  # fmt: skip

    def rewrite(question: str) -> str:
        if forms[0].match(question):
            return forms[0].sub("Which ", question, count=1)
        match = forms[1].match(question)
        return f"Which {match.group(1)} {question[match.end() :]}" if match else question

    return rewrite


def predicate_of(question: str, kind_singular: str) -> str:
    """What a simple question "Which <kind> <predicate>?" says of its answer."""
    body = question.strip().rstrip("?").strip()
    n = len(kind_singular.split())
    return " ".join(body.split()[1 + n :])


# The other names a passage opens with, before its first "is"/"was": "Mehmed Talât Pasha,
# commonly known as Talaat Pasha or Talat Pasha, was ...", "Timor-Leste, also known as East
# Timor, officially the Democratic Republic of Timor-Leste, is ...".
_OPENING = re.compile(r"^(.{1,200}?)\s(?:is|was|are|were)\s")
_ALIAS_BREAKS = re.compile(
    r"[,;()]|\s(?:or|also|commonly|formerly|officially|sometimes|known|as|born|anglici[sz]ed)\s"
)


def opening_names(text: str) -> list[str]:
    """The names a passage gives its subject in its opening ("Talaat Pasha", "East Timor"):
    runs of capitalised words, and each two capitalised words in a row of them ("Mehmed
    Talât"), so that a question naming its answer by another name is caught too."""
    match = _OPENING.match(text.strip())
    if not match:
        return []
    names = []
    for piece in _ALIAS_BREAKS.split(match.group(1)):
        tokens = piece.split()
        while tokens and tokens[0].lower() in ("the", "a", "an"):
            tokens = tokens[1:]
        capitals = [t for t in tokens if t[:1].isupper()]
        if not capitals or any(not t[:1].isupper() and t not in NAME_CONNECTORS for t in tokens):
            continue
        names.append(" ".join(tokens))
        names += [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)
                  if a[:1].isupper() and b[:1].isupper()]  # fmt: skip
    return list(dict.fromkeys(names))


# Capitalised words of a subject that do not single it out ("New", "River").
_COMMON_NAME_WORDS = {
    "new", "old", "north", "south", "east", "west", "northern", "southern", "eastern", "western",
    "great", "upper", "lower", "united", "saint", "republic", "kingdom", "empire", "city",
    "river", "lake", "mount", "sea", "island", "islands", "state", "states", "first", "second",
    "asia", "europe", "africa", "america", "oceania", "antarctica",
}  # fmt: skip


def answer_names(subject: str, text: str, kind: str) -> tuple[str, ...]:
    """The names a simple question must not mention, since they give its answer away: the
    subject, the other names its passage opens with, and each word of the subject's name that
    singles it out ("Which physicist developed the Schrödinger equation?"), not a word of the
    kind ("Yellow River" among rivers) nor a common one ("New")."""
    kind_words = set(words(kind)) | set(words(kind_forms(kind)[1]))
    singles = [w for w in re.findall(r"[A-Z][\w'-]{2,}", subject)
               if words(w) and words(w)[0] not in kind_words | _COMMON_NAME_WORDS]  # fmt: skip
    return tuple(dict.fromkeys([subject, *opening_names(text), *singles]))


def masked(text: str, subject: str) -> str:
    """`text` with its subject's name words replaced by "___" (also the other names it opens
    with): a small model asked for a question whose answer is the subject then rarely writes
    the answer into it."""
    names = {subject, *opening_names(text)}
    names |= {word for name in list(names) for word in re.findall(r"[A-Z][\w'-]{2,}", name)}
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(rf"\b{re.escape(name)}\b", "___", text)
    return text


def simple_questions(
    candidates: pd.DataFrame,
    kinds: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    model: str,
) -> pd.DataFrame:
    """A simple question for each member of its group's kind, whose answer is the member's
    subject (named by the kinds job: the title, or a name the LLM gave where titles cannot
    tell passages apart): "Which <kind> <a fact from the passage>?" (its `predicate`).
    Passages of groups without a kind, or not of it, get none (dropped: not_a_member)."""
    kind_of = {int(r.group): r for r in kinds.itertuples() if r.status != "dropped"}
    subjects = {(int(r.group), int(slot)): subject for r in kind_of.values()
                for slot, subject in zip(r.members, r.subjects, strict=True)}  # fmt: skip
    items, checks = [], {}
    for row in candidates.itertuples():
        kind = kind_of.get(int(row.group))
        subject = subjects.get((int(row.group), int(row.slot)))
        if kind is None or int(row.slot) not in set(kind.members):
            continue
        group = candidates[candidates["group"] == row.group]
        siblings = tuple(group.loc[group["slot"].isin(set(kind.members) - {int(row.slot)}),
                                   "text"])  # fmt: skip
        qid = simple_qid(row.group, row.slot)
        items.append(
            Item(
                qid=qid,
                values={"paragraph": masked(shorten(row.text, settings.max_passage_words),
                                            subject),
                        "title": row.title or "", "subject": subject, "kind": kind.kind,
                        "kind_singular": kind.kind_singular},
                passages=(row.text,),
                forbidden=answer_names(subject, row.text, kind.kind),
                extra_checks=(quiz_check(kind.kind_singular, siblings, row.text),),
                rewrite=as_which(kind.kind_singular),
            )
        )  # fmt: skip
        checks[qid] = kind.kind_singular
    outcomes = generate(llm, prompt, items, settings, None) if items else {}
    log_outcomes("simple", outcomes)
    rows = []
    for row in candidates.itertuples():
        qid = simple_qid(row.group, row.slot)
        outcome = outcomes.get(qid)
        if outcome is None:
            kind = kind_of.get(int(row.group))
            reason = "no_kind" if kind is None else "not_a_member"
            outcome = Outcome(None, None, "dropped", reason, 0)
        predicate = predicate_of(outcome.question, checks[qid]) if outcome.question else None
        rows.append(
            {"group": row.group, "cluster": row.cluster, "slot": row.slot, "pid": row.pid,
             "qid": qid, **outcome_columns(outcome, prompt, model),
             "subject": subjects.get((int(row.group), int(row.slot))) or None,
             "predicate": predicate}
        )  # fmt: skip
    return pd.DataFrame(rows, columns=SIMPLE_SCHEMA.names)


def simple_qid(group: int, slot: int) -> str:
    return f"simple-{group:05d}-{slot}"


def disjunctive_qid(group: int) -> str:
    return f"disj-{group:05d}"


def sort_qid(group: int, sort: str) -> str:
    """The operand of an OR question that asks for one sort of the group's kind:
    "disj-00012/Hindu" ("What are some Hindu festivals?")."""
    return f"{disjunctive_qid(group)}/{sort}"


def sorts_of(operand_qids) -> list[str]:
    """The sorts an OR question asks for, read back from its operands (sort_qid)."""
    return [qid.split("/", 1)[1] for qid in operand_qids if "/" in qid]


PLACE_SORT = "in "  # an OR operand's sort that is a place: "in Vietnam" ("cities in Vietnam")


def sort_name(sort: str) -> str:
    """What a passage names of a sort: the sort, or a place without its "in"."""
    return sort.removeprefix(PLACE_SORT)


def sort_kind(sort: str, kind: str) -> str:
    """A sort of the kind as a kind: "Hindu festivals", "cities in Vietnam"."""
    return f"{kind} {sort}" if sort.startswith(PLACE_SORT) else f"{sort} {kind}"
