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
from boolbench.generation.validation import (
    STEM_LETTERS,
    check_question,
    clean,
    content_words,
    mentions,
    names_by_stems,
    stems,
    words,
)
from boolbench.llm import ChatRequest, LLMClient
from boolbench.llm.until_valid import ask_until_valid

log = logging.getLogger(__name__)

STORY = "story"  # the kinds table's construction of a story group ("kind" for the others)
TOPIC_MAX_WORDS = 8
TOPIC_MAX_TOKENS = 24
ASPECT_MAX_WORDS = 5
ASPECT_MAX_TOKENS = 16
ITEM_WORDS = 40  # of each paragraph, in the topic prompt
# Words of a clause, not of a noun phrase (an aspect must be one: "apart from <aspect>").
# Besides auxiliaries and pronouns: possessives after the first word ("burst its banks") and
# the past forms news reports most ("Brann won the Cup", "coffee futures rose").
CLAUSE_WORDS = frozenset(["is", "are", "was", "were", "be", "been", "has", "have", "had",
                          "will", "would", "can", "could", "should", "did", "does", "we",
                          "us", "they", "them", "he", "she", "it", "i", "you", "that",
                          "which", "who", "its", "his", "her", "their", "our", "said",
                          "told", "won", "rose", "fell", "took", "gave", "came", "went",
                          "began", "became", "broke", "burst", "grew", "knew", "met", "ran",
                          "sold", "sent", "spent", "stood", "wrote", "deserve",
                          "deserves"])  # fmt: skip
DETERMINERS = frozenset(["the", "a", "an", "its", "their", "this", "these", "his", "her"])
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
    return _unquoted(text).strip().strip("'").rstrip(".").strip()


def _unquoted(text: str) -> str:
    """`text` without double quotes, inside too: 'an "unacceptable" risk' -> 'an unacceptable
    risk' (a reply copies them, and a question around the phrase should not)."""
    return re.sub(r"[\"“”]", "", text)


def parse_topic(reply: str | None, texts: list[str]) -> tuple[str | None, str | None]:
    """The story's topic, or (None, reason): two to TOPIC_MAX_WORDS words, no question, not a
    name of the document ("the article"), and every content word of it written in the
    paragraphs (by its stem: "foods" of "food"), some in at least two of them (what they all
    are about, not one's detail). Written as prose (`_as_prose`), with "the" before a common
    noun ("the port strike in Belgium"; "Calloway Retail", "Ireland's budget" take none)."""
    topic = re.sub(r"\s*\([^)]*\)", "", _phrase(reply)).strip()  # "Ariadne (spacecraft)"
    if not topic:
        return None, "empty"
    if "?" in topic or len(topic.split()) > TOPIC_MAX_WORDS:
        return None, "not_a_topic"
    wanted = content_words(topic)
    if not wanted or set(wanted) <= VAGUE_TOPICS:
        return None, "vague_topic"
    have = [stems(t) for t in texts]
    wanted_stems = {w[:STEM_LETTERS] for w in wanted}
    if not all(any(w in h for h in have) for w in wanted_stems):
        return None, "not_in_the_passages"
    if not any(sum(w in h for h in have) >= 2 for w in wanted_stems):
        return None, "topic_of_one_passage"
    topic = _as_prose(topic, texts)
    first, last = topic.split()[0], topic.split()[-1]
    common = first[:1].islower() or last[:1].islower()  # "budget for Ireland", "port strike"
    if common and first.lower() not in DETERMINERS and "'s " not in topic:
        topic = f"the {topic}"
    return _with_the(topic, texts), None


def parse_aspect(reply: str | None, text: str, others: list[str], topic: str
                 ) -> tuple[str | None, str | None]:  # fmt: skip
    """A paragraph's aspect of the story, or (None, reason): one to ASPECT_MAX_WORDS words
    that the paragraph writes (or every content word of them, by its stem: "Brinkman shares"
    of "Shares in Brinkman"), another paragraph of the group does not (it tells this
    paragraph from them: "apart from the shares" would exclude both), saying more than the
    topic (a small model often names the story again), no clause or list (`_clause`), no
    name (`_a_name`) and not who is quoted ("the festival spokeswoman": "other than the
    festival spokeswoman" excludes a source, not a part of the story; blind readers found it
    unnatural). Written as its paragraph writes it, with "the" where it has an article."""
    aspect = _phrase(reply)
    if not aspect:
        return None, "empty"
    if "?" in aspect or len(aspect.split()) > ASPECT_MAX_WORDS or _clause(aspect):
        return None, "not_an_aspect"
    if not _grounded(text, aspect):
        return None, "not_in_the_passage"
    if not set(content_words(aspect)) - set(content_words(topic)):
        return None, "the_topic"
    if any(_grounded(other, aspect) for other in others):
        return None, "in_another_passage"
    if _a_name(aspect, [text, *others]):
        return None, "a_name"
    if any(w.startswith("spokes") for w in words(aspect)[-1:]):
        return None, "a_source"
    return _with_the(_as_written(text, aspect, [text, *others]), [text]), None


def _clause(phrase: str) -> bool:
    """True for a clause or a list rather than a noun phrase, as a small model copies one ("The
    election was called", "employers left us no choice", "Shares in Brinkman jumped", "names,
    addresses, login details"): a comma, a verb that clauses have, a pronoun, or a past form
    after the first word ("the proposed merger" passes)."""
    if "," in phrase or ";" in phrase:
        return True
    found = words(phrase)
    while found and found[0] in DETERMINERS:
        found = found[1:]
    return bool(set(found) & CLAUSE_WORDS) or any(
        len(w) > 4 and w.endswith("ed") for w in found[1:]
    )


def _a_name(phrase: str, texts: list[str]) -> bool:
    """True when `phrase` is a name ("Brinkman Groep", "the Caledonia Deep", "CVX-214"): every
    word after its article written with a capital inside the texts' sentences, or with a
    digit. A story's names are what it is about ("the maternal RSV vaccine trial, apart from
    CVX-214" excludes the trial's own vaccine; blind readers found such questions unnatural),
    not a detail of it."""
    inside = _inside_words(texts)
    found = [w for w in phrase.split() if w.lower() not in DETERMINERS]
    return bool(found) and all(
        any(c.isdigit() for c in w) or (w[:1].isupper() and w in inside) for w in found
    )


def _inside_words(texts: list[str]) -> set[str]:
    """The words the texts write inside sentences (not a sentence's first word, whose capital
    says nothing of its case)."""
    return {m.group(1) for t in texts
            for m in re.finditer(r"(?<![.!?\"“])\s([A-Za-z][\w'-]*)", t)}  # fmt: skip


def _grounded(text: str, phrase: str) -> bool:
    """True when `text` writes `phrase`, or every content word of it by its stem."""
    return mentions(text, phrase) or names_by_stems(text, phrase)


def _with_the(phrase: str, texts: list[str]) -> str:
    """`phrase` with "the" where a text writes it with an article ("apart from the European
    Commission", "the Mekong River Commission"; "a festival tent" is a thing one counts:
    "other than festival tent" reads wrong) or where it opens with a common noun's
    possessive ("about board's consideration" -> "about the board's consideration")."""
    if words(phrase)[:1] and words(phrase)[0] in DETERMINERS:
        return phrase
    if re.match(r"[a-z][\w-]*(?:'s|s')\s", phrase):  # "board's consideration": whose?
        return f"the {phrase}"
    pattern = r"\b(?:the|an?)\s+" + r"\W+".join(map(re.escape, phrase.split())) + r"(?!\w)"
    return f"the {phrase}" if any(re.search(pattern, t, re.IGNORECASE) for t in texts) else phrase


def _as_written(text: str, phrase: str, texts: list[str]) -> str:
    """`phrase` as `text` writes it ("Future Ireland Fund"), without the capital of a sentence's
    first word ("turnout" of "Turnout was 48.6 percent"), and without quotes ('an
    "unacceptable" risk'); a phrase `text` writes by its stems only, as prose (`_as_prose`)."""
    pattern = r"(?<!\w)" + r"\W+".join(map(re.escape, phrase.split())) + r"(?!\w)"
    found = re.search(pattern, text, re.IGNORECASE)
    if not found:
        return _as_prose(phrase, texts, names=False)
    written = found.group(0)
    if re.search(r"(?:^|[.!?][\"'”]?\s+)$", text[: found.start()]):  # a sentence's first word
        first, _, rest = written.partition(" ")
        written = " ".join(filter(None, [_as_prose(first, texts, names=False), rest]))
    return _unquoted(written)


def _as_prose(phrase: str, texts: list[str], names: bool = True) -> str:
    """`phrase` in the case the texts write its words inside sentences (a possessive by its
    name: "Kovac's" of "Kovac"): without the capitals a small model gives a title ("Port
    Strike" -> "port strike"; "Firefighting", which the texts write only by its stem, of
    "firefighters") and with those of names it writes in lower case ("newcastle forward" ->
    "Newcastle forward"). A word the texts write capitalised only where a sentence starts
    keeps its capital where the phrase may be a name (`names`: a topic, "Canada's finance
    minister", a name opening a news story's sentences) and loses it where it may not (an
    aspect, which is no name: "Closing languages", "Police raids")."""
    inside = {_base(w) for w in _inside_words(texts)}
    written = {w for t in texts for w in re.findall(r"[\w-]+", t)}
    out = []
    for word in phrase.split():
        low, high = word[:1].lower() + word[1:], word[:1].upper() + word[1:]
        if word[:1].isupper() and not word.isupper() and _base(high) not in inside:
            lower = not names or _base(low) in inside or _base(word) not in written
            word = low if lower else word
        elif word[:1].islower() and _base(high) in inside and _base(low) not in inside:
            word = high
        out.append(word)
    return " ".join(out)


def _base(word: str) -> str:
    """A word without its possessive ("Kovac" of "Kovac's", "teachers" of "teachers'")."""
    return re.split(r"['’]", word)[0]


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
    paragraphs with an aspect of their own, one per distinct aspect (members, subjects: the
    aspects); a group with fewer than two is dropped (fewer_than_two_aspects). Which members
    are about the story, the judge reads next (`filtering.verify_story_members`)."""
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
        members, named, said = [], [], set()
        for slot in frame["slot"].astype(int):
            aspect = aspects.get((qid, slot))
            # distinct aspects: two that share a word ("income tax cuts", "tax changes") are
            # one detail twice, and a NOT question excluding one would label the other
            if aspect and aspect.value and not stems(aspect.value) & said:
                members.append(slot)
                named.append(aspect.value)
                said |= stems(aspect.value)
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
        "stories: %d of %d groups have a topic and two aspects or more (%s); %d of %d "
        "paragraphs an aspect (%s)",
        sum(r["status"] == "ok" for r in rows),
        len(rows),
        dict(Counter(r["reason"] for r in rows if r["reason"])),
        sum(a.value is not None for a in aspects.values()),
        len(aspects),
        dict(Counter(a.reason for a in aspects.values() if a.reason)),
    )
    return pd.DataFrame(rows, columns=DISJUNCTIVE_SCHEMA.names)


def _asks_both(topic: str, aspect: str):
    """A story question names its aspect (or every content word of it, by its stem) and says
    which story it is about (a content word of the topic, by its stem): else its AND has one
    condition only."""

    def check(question: str) -> str | None:
        if not _grounded(question, aspect):
            return "drops_the_aspect"
        if not stems(topic) & stems(question):
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
