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

The same construction serves every group that shares a subject rather than a kind, each in
its own wording (the group's `construction`, corpus/genre.py; prompts and templates per
construction in resources/prompts.yaml):
- story: a news story's window ("What do reports on the drought in Kenya say about maize
  prices?");
- topic: a cluster of web passages that answer one information need from several angles (the
  paper's BQ-MARCO: "What causes upper abdomen pain but is unrelated to the liver?"); the
  topic is named by the LLM as a story's is;
- page: a window of one encyclopedia page (the paper's BQ-NQ): the topic is the page's title,
  no LLM call, each passage's aspect a part of its subject ("Regarding the Atari Jaguar, what
  is known about the chipset?").
Beside a story's rules, an aspect of a topic or page may not name the topic again ("the Atari
Jaguar's chipset" of the Atari Jaguar), and it is chosen by the LLM among its passage's own
phrases of a noun phrase's shape (`aspect_choices`, a JSON enum): asked to copy one, a small
model paraphrases it as often as not.
"""

from __future__ import annotations

import json
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
from boolbench.llm.until_valid import Answer, ask_until_valid

log = logging.getLogger(__name__)

STORY = "story"  # the kinds table's construction of a story group ("kind" for the others)
# The constructions this module writes (story groups and their kin; `is_story`), each with
# its prompts (resources/prompts.yaml): the topic's (None: a page's title), the aspect's and
# the aspect question's; its templates are <construction>_disjunctive, _and, _or and _not.
PROMPTS_OF = {
    "story": ("topic", "aspect", "story"),
    "topic": ("topic_name", "topic_aspect", "topic_question"),
    "page": (None, "page_aspect", "page_question"),
}
TOPICAL = tuple(PROMPTS_OF)
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
    """True for a kinds row of a story group or its kin (TOPICAL: a topic, a page)."""
    get = kind_row.get if isinstance(kind_row, dict) else lambda k: getattr(kind_row, k, None)
    return get("construction") in TOPICAL


def _phrase(reply: str | None) -> str:
    """A reply as a phrase: one line, without wrapping quotes or a final full stop."""
    text = clean(reply).splitlines()[0] if clean(reply) else ""
    return _unquoted(text).strip().strip("'").rstrip(".").strip()


def _unquoted(text: str) -> str:
    """`text` without double quotes, inside too: 'an "unacceptable" risk' -> 'an unacceptable
    risk' (a reply copies them, and a question around the phrase should not)."""
    return re.sub(r"[\"“”]", "", text)


def parse_topic(reply: str | None, texts: list[str], construction: str = STORY
                ) -> tuple[str | None, str | None]:  # fmt: skip
    """The story's topic, or (None, reason): two to TOPIC_MAX_WORDS words, no question, not a
    name of the document ("the article"), and every content word of it written in the
    paragraphs (by its stem: "foods" of "food"), some in at least two of them (what they all
    are about, not one's detail). A story's is written as prose (`_as_prose`), with "the"
    before a common noun ("the port strike in Belgium"; "Calloway Retail", "Ireland's budget"
    take none). A web topic's (`construction` topic) is written as the passages usually write
    it (`_as_usually_written`): web passages open with title-cased headings ("Life Cycle of a
    Housefly."), so a capital inside a sentence is no sign of a name, and a need is asked
    about without an article unless the passages give it one ("heart failure", "sharks")."""
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
    if construction != STORY:
        return _as_usually_written(topic, texts), None
    topic = _as_prose(topic, texts)
    first, last = topic.split()[0], topic.split()[-1]
    common = first[:1].islower() or last[:1].islower()  # "budget for Ireland", "port strike"
    if common and first.lower() not in DETERMINERS and "'s " not in topic:
        topic = f"the {topic}"
    return _with_the(topic, texts), None


def page_topic(title: str | None, texts: list[str]) -> tuple[str | None, str | None]:
    """A page's topic, its title, or (None, reason): without a parenthesis ("Mercury
    (planet)"), with "the" where the texts write the title after "the" more often than not
    ("the Atari Jaguar", "the Planck family"; "Nauru", though one writes "the Nauru
    government"), and a first word in lower case where the texts write it so inside
    sentences ("pharmacology": titles open with a capital)."""
    if not isinstance(title, str) or not title.strip():
        return None, "no_title"
    topic = re.sub(r"\s*\([^)]*\)", "", title).strip().replace("_", " ")
    if len(topic.split()) > TOPIC_MAX_WORDS:
        return None, "not_a_topic"
    first, _, rest = topic.partition(" ")
    lower = first[:1].lower() + first[1:]
    inside = _inside_words(texts)
    if first[:1].isupper() and lower in inside and first not in inside:
        topic = " ".join(filter(None, [lower, rest]))
    return _the_by_majority(topic, texts), None


def _as_usually_written(phrase: str, texts: list[str]) -> str:
    """`phrase` with each word in the case the texts write it most often inside sentences (a
    word they do not write there keeps its case), and "the" by `_the_by_majority`."""
    counts = Counter(m.group(1) for t in texts
                     for m in re.finditer(r"(?<![.!?\"“:])\s([A-Za-z][\w'-]*)", t))  # fmt: skip
    found = phrase.split()
    while len(found) > 1 and found[0].lower() in DETERMINERS:  # "the": by the texts, below
        found = found[1:]
    out = []
    for word in found:
        low, high = word[:1].lower() + word[1:], word[:1].upper() + word[1:]
        if not word.isupper() and (counts[low] or counts[high]):
            word = low if counts[low] >= counts[high] else high
        out.append(word)
    return _the_by_majority(" ".join(out) or phrase, texts)


def _the_by_majority(phrase: str, texts: list[str]) -> str:
    """`phrase` with "the" where the texts write it after "the" more often than not ("the
    Atari Jaguar", "the hotel industry"; "Nauru", though one writes "the Nauru government";
    "heart failure")."""
    words_ = phrase.split()
    if words_[0].lower() == "the":
        words_ = words_[1:]
    pattern = r"(?<!\w)(the\s+)?" + r"\W+".join(map(re.escape, words_)) + r"(?!\w)"
    found = [m.group(1) is not None for t in texts for m in re.finditer(pattern, t, re.IGNORECASE)]
    bare = " ".join(words_)
    return f"the {bare}" if sum(found) > len(found) / 2 else bare


def parse_aspect(reply: str | None, text: str, others: list[str], topic: str,
                 construction: str = STORY) -> tuple[str | None, str | None]:  # fmt: skip
    """A paragraph's aspect of the story, or (None, reason): one to ASPECT_MAX_WORDS words
    that the paragraph writes (or every content word of them, by its stem: "Brinkman shares"
    of "Shares in Brinkman"), another paragraph of the group does not (it tells this
    paragraph from them: "apart from the shares" would exclude both), saying more than the
    topic (a small model often names the story again), no clause or list (`_clause`), no
    name (`_a_name`) and not who is quoted ("the festival spokeswoman": "other than the
    festival spokeswoman" excludes a source, not a part of the story; blind readers found it
    unnatural). A topic's or page's aspect names no word of the topic ("the Atari Jaguar's
    chipset"): its questions name the topic beside it; and one word of it is what the passage
    is about only where the passage writes it twice or more (by its stem: "symptoms",
    "symptom"): a word written once in passing ("comparison", "organization") names no angle
    of the topic that a reader could ask for (`a_passing_word`). Written as its paragraph writes it,
    with "the" where it has an article."""
    aspect = _phrase(reply)
    if not aspect:
        return None, "empty"
    if "?" in aspect or len(aspect.split()) > ASPECT_MAX_WORDS or _clause(aspect):
        return None, "not_an_aspect"
    if not _grounded(text, aspect):
        return None, "not_in_the_passage"
    if not set(content_words(aspect)) - set(content_words(topic)):
        return None, "the_topic"
    if construction != STORY and stems(aspect) & stems(topic):
        return None, "names_the_topic"
    if construction != STORY and len(content_words(aspect)) == 1 and _times(text, aspect) < 2:
        return None, "a_passing_word"
    if any(_grounded(other, aspect) for other in others):
        return None, "in_another_passage"
    if _a_name(aspect, [text, *others]):
        return None, "a_name"
    if any(w.startswith("spokes") for w in words(aspect)[-1:]):
        return None, "a_source"
    return _with_the(_as_written(text, aspect, [text, *others]), [text]), None


CHOICE_WORDS = 4  # the longest phrase an aspect is chosen among
LIST_WORDS = frozenset(["and", "or", "but", "nor", "&"])
# What a noun phrase follows inside a clause: an article or possessive, or a preposition.
LEAD_INS = DETERMINERS | frozenset(["of", "in", "on", "for", "with", "by", "about", "from",
                                    "into", "over", "under", "at", "after", "before", "during",
                                    "between", "against", "without", "through", "our", "your",
                                    "those", "such", "including", "like", "as"])  # fmt: skip
MAX_CHOICES = 120  # of a passage's phrases, in the order it writes them


def aspect_choices(text: str, others: list[str], topic: str, construction: str) -> list[str]:
    """The phrases of `text` that are valid aspects (`parse_aspect`) and have the shape of a
    noun phrase, in the order it writes them: runs of one to CHOICE_WORDS words within a clause
    (no punctuation inside, no "and" or "or": a list is two aspects) that open and close on a
    content word, with an article only at their start and that one "the" ("steals the
    paintings", "the Organization of the Black" are no phrase), not opening or closing on an
    adverb ("largely"), not opening on a verb's form unless after an article, a possessive or
    a preposition ("failed to gain", "designed houses"), and that end where the clause does or
    a function word follows (not inside a name: "the Organization of the Black Sea")."""
    found, seen = [], set()
    for clause in re.split(r"[,.;:!?()\[\]\"“”]+|\s[-–—]\s", text):
        tokens = clause.split()
        for i in range(len(tokens)):
            before = tokens[i - 1].lower() if i else None
            for n in range(1, CHOICE_WORDS + 1):
                span = tokens[i : i + n]
                after = tokens[i + n].lower() if i + n < len(tokens) else None
                if len(span) < n or not _phrase_shape(span, before, after):
                    continue
                phrase = " ".join(span)
                if phrase.lower() in seen:
                    continue
                seen.add(phrase.lower())
                if parse_aspect(phrase, text, others, topic, construction)[1] is None:
                    found.append(phrase)
    return found[:MAX_CHOICES]


def _phrase_shape(span: list[str], before: str | None, after: str | None) -> bool:
    """True when `span` (between the words `before` and `after` of its clause) may be a noun
    phrase (`aspect_choices`)."""
    low = [w.lower() for w in span]
    if not (content_words(span[0]) or low[0] in DETERMINERS) or not content_words(span[-1]):
        return False
    if set(low) & LIST_WORDS or set(low[1:]) & DETERMINERS or low[0].endswith("ly"):
        return False
    if low[0] in ("a", "an"):  # "apart from a member": the article the phrase has is "the"
        return False
    # a verb's form ("collaborated with", "failed to gain", "living in") opens a phrase only
    # after an article, a possessive or a preposition ("the proposed merger", "of boiling water")
    verb_like = len(low[0]) > 4 and low[0].endswith(("ed", "ing"))
    if (verb_like and before is not None and before not in LEAD_INS) or before == "to":
        return False  # after "to": an infinitive ("to gain ground") more often than not
    if low[-1].endswith("ly"):
        return False
    return after is None or not content_words(after)


def _choice_format(choices: list[str]) -> dict:
    """The reply's JSON schema (as response_format): one of `choices`."""
    schema = {"type": "string", "enum": choices}
    return {"type": "json_schema", "json_schema": {"name": "aspect", "schema": schema}}


def _chosen(reply: str | None, enum: bool) -> str | None:
    """The phrase of a reply (a JSON string where it was chosen from an enum)."""
    if not enum or reply is None:
        return reply
    try:
        value = json.loads(reply)
    except ValueError:
        return reply
    return value if isinstance(value, str) else None


def _times(text: str, word: str) -> int:
    """How often `text` writes `word` (its content word, by its stem)."""
    stem = next(iter(stems(word)))
    return sum(w[:STEM_LETTERS] == stem for w in content_words(text))


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
    topic_prompt: Prompt | None,
    aspect_prompt: Prompt,
    settings: GenerationSettings,
    template: str,
    model: str,
    construction: str = STORY,
) -> pd.DataFrame:
    """The kinds table of story groups and their kin (DISJUNCTIVE_SCHEMA, `construction`): per
    group its topic (kind and kind_singular; named with `topic_prompt`, or for a page its
    title, `page_topic`), the disjunctive question (`template`, "What is known about
    {topic}?"), the paragraphs with an aspect of their own, one per distinct aspect (members,
    subjects: the aspects); a group with fewer than two is dropped (fewer_than_two_aspects).
    Which members are about the story, the judge reads next
    (`filtering.verify_story_members`)."""
    groups = {disjunctive_qid(int(g)): frame for g, frame in candidates.groupby("group", sort=True)}
    if topic_prompt is None:  # a page: its title
        topics = {qid: Answer(*page_topic(frame["title"].iloc[0], list(frame["text"])), 0)
                  for qid, frame in groups.items()}  # fmt: skip
    else:
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
            lambda qid, result: parse_topic(
                result.content, list(groups[qid]["text"]), construction
            ),
            settings.retries,
        )
    asks = {}  # (qid, slot) -> (text, the group's other texts, topic)
    for qid, frame in groups.items():
        topic = topics[qid].value
        if topic is not None:
            texts = dict(zip(frame["slot"].astype(int), frame["text"], strict=True))
            asks |= {(qid, s): (t, [o for k, o in texts.items() if k != s], topic)
                     for s, t in texts.items()}  # fmt: skip
    # a topic's or page's aspect is chosen among the phrases its passage allows (a JSON enum):
    # a small model asked to copy a phrase paraphrases it as often as not
    choices = {key: aspect_choices(*ask, construction) for key, ask in asks.items()
               if construction != STORY}  # fmt: skip
    asks = {key: ask for key, ask in asks.items() if construction == STORY or choices[key]}
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
            response_format=_choice_format(choices[key]) if key in choices else None,
        ),
        lambda key, result: parse_aspect(
            _chosen(result.content, key in choices), *asks[key], construction
        ),  # fmt: skip
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
             "prompt_hash": (topic_prompt or aspect_prompt).hash, "model": model, "kind": topic,
             "kind_singular": topic, "members": members, "sorts": [""] * len(members),
             "places": [""] * len(members), "subjects": named, "construction": construction}
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
