"""Story groups: the atomic questions of a window of one document's paragraphs (`grouping:
document`: a news story, a report's section).

Such a group shares no kind of thing: its paragraphs are about one thing, so the kind
construction finds no members (the news trials kept 2 of 30 groups, docs/results.md). What
they share is the story, and each paragraph reports one aspect of it. The paper's construction
fits that directly (compose.py, `plan_story`): the disjunctive question asks about the story
("What is known about the drought in Kenya?"), AND adds one paragraph's aspect (that
paragraph's question, "How did the drought in Kenya affect maize prices?"), OR asks for two
aspects, NOT excludes one.

Here: the story's topic (one call per group: a noun phrase the paragraphs write), each
paragraph's aspect (a few words its own paragraph writes and no other of the group does) and
each aspect's question (about the topic, naming the aspect). The kinds table carries them as
the group's kind (the topic), its members and their subjects (the aspects), construction
"story"; the simple-questions table as the members' questions.
"""

from __future__ import annotations

import logging
import re
from collections import Counter

import pandas as pd

from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import (
    DISJUNCTIVE_SCHEMA,
    SIMPLE_SCHEMA,
    GenerationSettings,
    Item,
    Outcome,
    disjunctive_qid,
    generate,
    log_outcomes,
    numbered_items,
    outcome_columns,
    shorten,
    simple_qid,
)
from boolbench.generation.validation import check_question, clean, content_words, mentions, words
from boolbench.llm import ChatRequest, LLMClient
from boolbench.llm.until_valid import ask_until_valid

log = logging.getLogger(__name__)

STORY = "story"  # the kinds table's construction of a story group ("kind" for the others)
TOPIC_MAX_WORDS = 8
TOPIC_MAX_TOKENS = 24
ASPECT_MAX_WORDS = 5
ASPECT_MAX_TOKENS = 16
ITEM_WORDS = 40  # of each paragraph, in the topic prompt
# Topics that name the document rather than its story ("the article", "this report").
VAGUE_TOPICS = frozenset(["article", "articles", "story", "stories", "news", "report", "reports",
                          "document", "documents", "paragraph", "paragraphs", "text"])  # fmt: skip


def is_story(kind_row) -> bool:
    """True for a kinds row of a story group."""
    get = kind_row.get if isinstance(kind_row, dict) else lambda k: getattr(kind_row, k, None)
    return get("construction") == STORY


def _phrase(reply: str | None) -> str:
    """A reply as a phrase: one line, without wrapping quotes or a final full stop."""
    text = clean(reply).splitlines()[0] if clean(reply) else ""
    return text.strip().strip("\"'“”").rstrip(".").strip()


def parse_topic(reply: str | None, texts: list[str]) -> tuple[str | None, str | None]:
    """The story's topic, or (None, reason): two to TOPIC_MAX_WORDS words, no question, not a
    name of the document ("the article"), and every content word of it written in the
    paragraphs, some in at least two of them (what they all are about, not one's detail)."""
    topic = _phrase(reply)
    if not topic:
        return None, "empty"
    if "?" in topic or len(topic.split()) > TOPIC_MAX_WORDS:
        return None, "not_a_topic"
    wanted = content_words(topic)
    if not wanted or set(wanted) <= VAGUE_TOPICS:
        return None, "vague_topic"
    have = [set(words(t)) for t in texts]
    if not all(any(w in h for h in have) for w in wanted):
        return None, "not_in_the_passages"
    if not any(sum(w in h for h in have) >= 2 for w in wanted):
        return None, "topic_of_one_passage"
    return re.sub(r"^(?:The|A|An)\b", lambda m: m.group(0).lower(), topic), None


def parse_aspect(reply: str | None, text: str, others: list[str], topic: str
                 ) -> tuple[str | None, str | None]:  # fmt: skip
    """A paragraph's aspect of the story, or (None, reason): one to ASPECT_MAX_WORDS words
    written in the paragraph, not in another paragraph of the group (it tells this paragraph
    from them), and saying more than the topic."""
    aspect = _phrase(reply)
    if not aspect:
        return None, "empty"
    if "?" in aspect or len(aspect.split()) > ASPECT_MAX_WORDS:
        return None, "not_an_aspect"
    if not mentions(text, aspect):
        return None, "not_in_the_passage"
    if not set(content_words(aspect)) - set(content_words(topic)):
        return None, "the_topic"
    if any(mentions(other, aspect) for other in others):
        return None, "in_another_passage"
    return _as_written(text, aspect), None


def _as_written(text: str, phrase: str) -> str:
    """`phrase` as `text` writes it ("maize prices" for the reply "Maize prices")."""
    pattern = r"(?<!\w)" + r"\W+".join(map(re.escape, phrase.split())) + r"(?!\w)"
    found = re.search(pattern, text, re.IGNORECASE)
    return found.group(0) if found else phrase


def story_kinds(
    candidates: pd.DataFrame,
    llm: LLMClient,
    topic_prompt: Prompt,
    aspect_prompt: Prompt,
    settings: GenerationSettings,
    template: str,
    model: str,
) -> pd.DataFrame:
    """The kinds table of story groups (DISJUNCTIVE_SCHEMA): per group its topic (kind and
    kind_singular), the disjunctive question (`template`, "What is known about {topic}?"), the
    paragraphs with an aspect of their own (members, subjects: the aspects); a group with
    fewer than two is dropped (fewer_than_two_aspects)."""
    groups = {disjunctive_qid(int(g)): frame for g, frame in candidates.groupby("group", sort=True)}
    topics = ask_until_valid(
        llm,
        list(groups),
        lambda qid, attempt: ChatRequest(
            f"topic|{qid}",
            topic_prompt.messages(
                items=numbered_items(
                    [None] * len(groups[qid]), list(groups[qid]["text"]), ITEM_WORDS
                )
            ),
            seed=settings.seed + attempt,
            max_tokens=TOPIC_MAX_TOKENS,
            temperature=0.0 if attempt == 0 else None,
        ),  # fmt: skip
        lambda qid, result: parse_topic(result.content, list(groups[qid]["text"])),
        settings.retries,
    )
    asks = {}  # (qid, slot) -> (text, the group's other texts, topic)
    for qid, frame in groups.items():
        topic = topics[qid].value
        if topic is not None:
            texts = dict(zip(frame["slot"].astype(int), frame["text"], strict=True))
            asks |= {(qid, s): (t, [o for k, o in texts.items() if k != s], topic)
                     for s, t in texts.items()}  # fmt: skip
    aspects = ask_until_valid(
        llm,
        list(asks),
        lambda key, attempt: ChatRequest(
            f"aspect|{key[0]}|{key[1]}",
            aspect_prompt.messages(
                paragraph=shorten(asks[key][0], settings.max_passage_words), topic=asks[key][2]
            ),  # fmt: skip
            seed=settings.seed + attempt,
            max_tokens=ASPECT_MAX_TOKENS,
            temperature=0.0 if attempt == 0 else None,
        ),
        lambda key, result: parse_aspect(result.content, *asks[key]),
        settings.retries,
    )
    rows = []
    for qid, frame in groups.items():
        topic = topics[qid].value
        members, named = [], []
        for slot in frame["slot"].astype(int):
            aspect = aspects.get((qid, slot))
            # one aspect per member: two paragraphs named alike are one thing asked twice
            if aspect and aspect.value and words(aspect.value) not in map(words, named):
                members.append(slot)
                named.append(aspect.value)
        reason = topics[qid].reason or (None if len(members) >= 2 else "fewer_than_two_aspects")
        question = None
        if reason is None:
            question, invalid = check_question(template.format(topic=topic), [])
            reason = f"template {invalid}" if invalid else None
        if reason:
            members, named = [], []
        rows.append(
            {"group": int(frame["group"].iloc[0]), "cluster": int(frame["cluster"].iloc[0]),
             "qid": qid, "question": None if reason else question,
             "source": None if reason else "template", "status": "dropped" if reason else "ok",
             "reason": reason, "attempts": topics[qid].attempts,
             "prompt_hash": topic_prompt.hash, "model": model, "kind": topic,
             "kind_singular": topic, "members": members, "sorts": [""] * len(members),
             "places": [""] * len(members), "subjects": named, "construction": STORY}
        )  # fmt: skip
    log.info(
        "stories: %d of %d groups have a topic and two aspects or more (%s)",
        sum(r["status"] == "ok" for r in rows),
        len(rows),
        dict(Counter(r["reason"] for r in rows if r["reason"])),
    )
    return pd.DataFrame(rows, columns=DISJUNCTIVE_SCHEMA.names)


def _asks_both(topic: str, aspect: str):
    """A story question names its aspect and says which story it is about (a content word of
    the topic): else its AND has one condition only."""

    def check(question: str) -> str | None:
        if not mentions(question, aspect) and len(
            set(content_words(aspect)) & set(content_words(question))
        ) < max(1, len(content_words(aspect))):
            return "drops_the_aspect"
        if not set(content_words(topic)) & set(content_words(question)):
            return "drops_the_topic"
        return None

    return check


def story_questions(
    candidates: pd.DataFrame,
    kinds: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    model: str,
) -> pd.DataFrame:
    """The simple questions of story groups (SIMPLE_SCHEMA): for each member, a question about
    the topic that its paragraph answers and that names its aspect (its subject); the other
    paragraphs get none (dropped: no_kind, not_a_member)."""
    story_of = {int(r["group"]): r for r in kinds.to_dict("records") if r["status"] != "dropped"}
    aspect_of = {(g, int(s)): a for g, r in story_of.items()
                 for s, a in zip(r["members"], r["subjects"], strict=True)}  # fmt: skip
    items = []
    for row in candidates.itertuples():
        aspect = aspect_of.get((int(row.group), int(row.slot)))
        if aspect is None:
            continue
        topic = story_of[int(row.group)]["kind"]
        items.append(
            Item(
                qid=simple_qid(row.group, row.slot),
                values={"paragraph": shorten(row.text, settings.max_passage_words),
                        "topic": topic, "aspect": aspect},
                passages=(row.text,),
                extra_checks=(_asks_both(topic, aspect),),
            )
        )  # fmt: skip
    outcomes = generate(llm, prompt, items, settings, None) if items else {}
    log_outcomes("story questions", outcomes)
    rows = []
    for row in candidates.itertuples():
        key = (int(row.group), int(row.slot))
        outcome = outcomes.get(simple_qid(row.group, row.slot))
        if outcome is None:
            reason = "no_kind" if key[0] not in story_of else "not_a_member"
            outcome = Outcome(None, None, "dropped", reason, 0)
        rows.append(
            {"group": row.group, "cluster": row.cluster, "slot": row.slot, "pid": row.pid,
             "qid": simple_qid(row.group, row.slot), **outcome_columns(outcome, prompt, model),
             "subject": aspect_of.get(key), "predicate": None}
        )  # fmt: skip
    return pd.DataFrame(rows, columns=SIMPLE_SCHEMA.names)
