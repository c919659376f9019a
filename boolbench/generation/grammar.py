"""English that templates and checks need: a kind's plural and singular forms (inflect), and the
checks that catch what a person would not write (broken number agreement, two questions glued
into one)."""

from __future__ import annotations

import re
from functools import cache

# Question words that start a second question when they follow "and" / "or" / "but".
_GLUE = re.compile(
    r"\b(?:and|or|but)\s+(?:what|who|whom|whose|which|where|when|why|how)\b", re.IGNORECASE
)
# "What/Which <noun> are/is ...", "What are some/notable <noun> ...": the noun must agree.
_NOUN_VERB = re.compile(
    r"^(?:what|which)\s+(?:other\s+)?([a-z][\w-]*)\s+(are|were|is|was)\b", re.IGNORECASE
)
_VERB_NOUN = re.compile(
    r"^(?:what|which)\s+(?:are|were)\s+(?:some|notable|the|other|a few)\s+"
    r"((?:[\w'-]+\s+){0,5}?[a-z][\w-]*)"
    r"(?=\s+(?:other|besides|apart|excluding|except|that|which|who|but)\b|[,?])",
    re.IGNORECASE,
)
# An exclusion put first ("Apart from Sydney, which cities ..."): agreement is read after it.
_LEADING_EXCLUSION = re.compile(
    r"^(?:apart from|besides|other than|excluding|except for)\s[^,]+,\s*", re.IGNORECASE
)
# Words before which a kind's head noun ends ("lakes in China": the head noun is "lakes").
_PREPOSITIONS = {"of", "in", "from", "on", "at", "by", "for", "with", "under", "during", "since"}


@cache
def _engine():
    # inflect takes about two seconds to import (its type checks): only where a kind is read.
    import inflect

    return inflect.engine()


def _singular(noun: str) -> str | bool:
    """inflect's singular of a noun, False when it is singular. inflect takes a singular that
    ends in s ("virus", "bus", "lens") for a plural; its plural's singular gives it back."""
    engine = _engine()
    singular = engine.singular_noun(noun)
    ends_in_s = singular is not False and singular + "s" == noun
    if ends_in_s and engine.singular_noun(engine.plural_noun(noun)) == noun:
        return False
    return singular


def is_plural(noun: str) -> bool:
    """True when inflect reads `noun` (one word) as plural."""
    return _singular(noun) is not False


def _head(words: list[str]) -> int:
    """The index of a noun phrase's head noun: the word before its first preposition ("lakes in
    China": "lakes"), else its last word."""
    return next((i for i, w in enumerate(words) if w.lower() in _PREPOSITIONS), len(words)) - 1


def head_noun(kind: str) -> str:
    """The head noun of a kind ("lakes in China": "lakes"), in lower case."""
    words = kind.split()
    return words[max(_head(words), 0)].lower()


# Fields of study and of the arts whose plural a small model makes a kind of ("cellular
# biologies", "literatures" of Dracula and D. H. Lawrence); those in -ics are caught by their
# ending.
_FIELDS = {"biology", "chemistry", "geology", "ecology", "physiology", "psychology", "sociology",
           "anthropology", "astronomy", "linguistics", "science", "literature", "engineering",
           "music", "medicine", "architecture", "agriculture", "history"}  # fmt: skip


def names_a_field(kind: str) -> bool:
    """True when a kind is a field of study, not a kind of thing ("physics", "economics",
    "cellular biologies"): "What are some physics other than Surface tension?" is not English."""
    head = head_noun(kind)
    return head.endswith("ics") or (_singular(head) or head) in _FIELDS


def kind_forms(kind: str) -> tuple[str, str]:
    """(plural, singular) of a kind named as a noun phrase in either number ("lake" or "lakes in
    China"), its head noun in lower case ("Cities" -> "cities"); only the head is inflected."""
    words = kind.split()
    head = max(_head(words), 0)
    if words[head][:1].isupper() and words[head][1:].islower():
        words[head] = words[head].lower()  # "English Romantic Poets" -> "English Romantic poets"
    noun = words[head]
    singular = _singular(noun)
    if singular is False:  # named in the singular
        plural, singular = _engine().plural_noun(noun), noun
    else:
        plural = noun
    return (
        " ".join([*words[:head], plural, *words[head + 1 :]]),
        " ".join([*words[:head], singular, *words[head + 1 :]]),
    )


def glued_questions(question: str) -> bool:
    """True when a second question is joined to the first ("... and who was X?")."""
    return bool(_GLUE.search(question))


def broken_agreement(question: str) -> bool:
    """True when the noun asked for does not agree with its verb ("What lake are there ...",
    "What are notable place ...", "Apart from X, which lake are there?")."""
    question = _LEADING_EXCLUSION.sub("", question)
    match = _NOUN_VERB.match(question)
    if match:
        noun, verb = match.group(1), match.group(2).lower()
        if verb in ("are", "were") and not is_plural(noun) and not _uncountable(noun):
            return True
        if verb in ("is", "was") and is_plural(noun) and not _uncountable(noun):
            return True
    match = _VERB_NOUN.match(question)
    if not match:
        return False
    words = match.group(1).split()
    noun = words[max(_head(words), 0)]  # "lakes in China": "lakes"
    return not is_plural(noun) and not _uncountable(noun)


def _uncountable(noun: str) -> bool:
    """Nouns whose singular and plural are one word (species, news, ...): never disagree."""
    engine = _engine()
    return engine.singular_noun(noun) == noun or engine.plural_noun(noun) == noun


# What follows a name that opens its passage ("The Yellow River or Huang He is", "The Taiwan
# Strait, also"), where "The Diwali festival" uses the name as a modifier.
_NAME_ENDS = r"(?=\s*[,;:.(]|\s+(?:is|was|are|were|or|also|has|had)\b)"


def as_named(subject: str, text: str) -> str:
    """A subject as its passage names it inside a sentence: with the article the passage opens
    with ("the Yellow River": Wikipedia's titles drop it, and "besides Gulf of Thailand" is not
    English), and in lower case where the passage writes it so ("active transport": a title's
    capital is not a name's), with "a" where the passage counts it ("a granary")."""
    if re.match(rf"the\s+{re.escape(subject)}{_NAME_ENDS}", text.strip(), re.IGNORECASE):
        return f"the {subject}"
    lowered = subject[:1].lower() + subject[1:]
    if lowered != subject and re.search(rf"\b{re.escape(lowered)}\b", text):
        # a thing one counts takes the article its passage gives it ("A granary is ...")
        counted = re.search(rf"\b(an?)\s+{re.escape(lowered)}\b", text, re.IGNORECASE)
        return f"{counted.group(1).lower()} {lowered}" if counted else lowered
    return subject


# Nouns whose article goes by sound, not spelling ("a university", "an hour").
_A_BEFORE_VOWEL = ("uni", "use", "usu", "uti", "eu", "one", "once", "ewe")
_AN_BEFORE_H = ("hour", "honest", "honor", "honour", "heir")


def with_article(noun: str) -> str:
    """A noun phrase with its indefinite article: "a poet", "an island country", "a
    university", "an hour"."""
    lowered = noun.lower()
    vowel = lowered[:1] in "aeiou" and not lowered.startswith(_A_BEFORE_VOWEL)
    return f"{'an' if vowel or lowered.startswith(_AN_BEFORE_H) else 'a'} {noun}"


# A simple question's predicate ("Which <kind> <predicate>?") says something of its answer with
# a verb. Four shapes a small model writes instead, none of which a person would ask:
# - the answer identified by a name after "is"/"was": "Which novelist was Bram Stoker?", "Which
#   island country is Dili in Timor?" (an inverted question), "Which country is the
#   Principality of Austria?", "Which star is designated as α Carinae?";
# - no verb where one must start: "Which clothing underclothing serves to ...?";
# - a reference to the passage it came from: "Which biological process requires cellular energy
#   to achieve this movement?";
# - a second condition: a clause joined with "and" ("Which kingdom was founded in 305 BC by
#   Ptolemy I Soter and ruled by the Macedonian Greek dynasty ...?") or anything joined with
#   "or" ("Which economist is seen as the father of economics or the father of capitalism?").
#   As an AND question's constraint it would ask for three conditions, or mix in an OR.
_COPULAS = {"is", "was", "are", "were"}
_AUXILIARIES = _COPULAS | {
    "has", "had", "have", "did", "does", "do", "can", "could", "will", "would", "may", "might",
    "must", "shall", "should", "became", "becomes",
}  # fmt: skip
# Irregular past forms a predicate opens with (regular ones end in -ed, present ones in -s).
_IRREGULAR_PAST = {
    "began", "bore", "brought", "built", "came", "drew", "fell", "fought", "found", "flew", "gave",
    "grew", "held", "knew", "led", "left", "lost", "made", "meant", "met", "ran", "rose", "sang",
    "sat", "saw", "sent", "set", "shot", "spoke", "spent", "split", "stood", "struck", "swam",
    "taught", "told", "took", "threw", "thought", "underwent", "won", "wore", "wrote",
}  # fmt: skip
# Words that may come before the verb: a clause or phrase about the answer ("Which poet, who
# ...", "Which tree in the genus Alnus is ..."), or an adverb ("first described", "once ruled").
_BEFORE_VERB = {
    "who", "that", "which", "whose", "in", "of", "from", "on", "at", "with", "during", "since",
    "by", "for", "under", "first", "once", "also", "still", "later", "now", "never", "only",
    "originally", "best", "most", "mainly", "largely", "primarily", "famously",
}  # fmt: skip
# Lower-case words inside a name ("Democratic Republic of Timor-Leste", "Ludwig van Beethoven").
NAME_CONNECTORS = {"of", "and", "the", "de", "du", "la", "le", "von", "van", "der", "y", "al"}
_PASSAGE_REFERENCE = re.compile(r"\b(?:this|these)\s+[a-z]", re.IGNORECASE)
# "designated" introduces a catalogue name of the answer ("designated α Carinae", "HD 45348").
_DESIGNATION = re.compile(r"\bdesignated\s+(?:as\s+)?(?!(?:a|an|the)\b)\S+(?:\s+\S+)?")
_OR = re.compile(r"\bor\b")
_AND_CLAUSE = re.compile(r"\band\s+(?:also\s+|then\s+|later\s+)?([a-z]+)\b")


def _is_name(word: str) -> bool:
    """A capitalised word that is not a possessive ("Bram", not "Portugal's")."""
    return word[:1].isupper() and not re.search(r"['’]s$", word)


def _is_verb(word: str) -> bool:
    """A verb without doubt (an -s word may be a plural noun: "physics and mathematics")."""
    word = word.lower()
    return word in _AUXILIARIES or word in _IRREGULAR_PAST or word.endswith("ed")


def _verb_like(word: str) -> bool:
    """A verb, or an -s word that may be one ("serves")."""
    return _is_verb(word) or (word.lower().endswith("s") and not word.lower().endswith("ss"))


def predicate_problem(predicate: str) -> str | None:
    """Why a simple question's predicate is not English a person would ask, or None:
    names_by_name, no_verb, refers_to_passage or two_conditions (see the shapes above)."""
    tokens = re.findall(r"[\w'’()-]+", predicate)
    if not tokens:
        return "no_verb"
    if _PASSAGE_REFERENCE.search(predicate):
        return "refers_to_passage"
    designation = _DESIGNATION.search(predicate)
    if designation and any(_is_name(t) for t in designation.group(0).split()[1:]):
        return "names_by_name"
    first = tokens[0].lower()
    if first in _COPULAS:
        rest = [t for t in tokens[1:] if t.lower() not in ("officially", "formally", "also")]
        stranded = tokens[-1].lower() in _PREPOSITIONS | {"to", "into"}  # "is Malaysia part of"
        if rest and _is_name(rest[0]) and not stranded:
            return "names_by_name"
        if (
            rest[:1] == ["the"]
            and len(rest) > 1
            and all(_is_name(t) or t.lower() in NAME_CONNECTORS for t in rest[1:])
        ):
            return "names_by_name"
        return _second_condition(predicate)
    if _verb_like(first) or first in _BEFORE_VERB or first.endswith("ly"):
        return _second_condition(predicate)
    return "no_verb"


# What a simple question says of its answer must be said of the answer in its passage. The
# questioner reads the passage with the answer's names masked, and two shapes come of it:
# - another name for the answer where the passage gave one, now masked: "Which island country
#   is officially known as Gabon?" (from "officially the Democratic Republic of ___ ... off the
#   coast of Gabon"), "Which city is often called Manhattan?";
# - a relation turned round: "Which island country is the capital of Dili?" (from "Dili ... is
#   its capital").
# Only a proper name is looked for: a description ("known as the father of economics") may be
# paraphrased.
_CONNECTOR = "|".join(sorted(NAME_CONNECTORS, key=lambda w: (-len(w), w)))
_NAMING = re.compile(
    r"^(?i:is|was)\s+(?:(?:also|officially|often|commonly|sometimes|formerly|popularly|"
    r"usually|widely)\s+)*(?:known\s+as|called|named|nicknamed|referred\s+to\s+as)\s+"
    rf"(?:the\s+)?(?P<name>[A-Z][\w'’.-]*(?:\s+(?:[A-Z][\w'’.-]*|{_CONNECTOR}))*)"
)
_NAMING_CUES = (
    r"(?:\b(?:known\s+as|called|named|nicknamed|referred\s+to\s+as|officially|or)\s+|\(\s*)"
)
_RELATION = re.compile(
    r"^(?:is|was)\s+the\s+(?P<noun>[\w-]+(?:\s+[\w-]+)?)\s+of\s+(?P<name>[A-Z].*)$"
)


def misstated(predicate: str, passage: str) -> str | None:
    """Why a simple question's predicate is not what its passage says of the answer, or None:
    alias_not_in_passage (a name the passage does not give the answer) or inverted_relation
    (the passage says the named thing is the answer's <noun>). Only these two shapes are
    checked: a paraphrase of anything else is the filter's to read."""
    if not passage:
        return None
    predicate = predicate.strip()
    naming = _NAMING.match(predicate)
    if naming:
        name = re.escape(re.sub(r"(?:\s+[a-z]+)+$", "", naming.group("name")))
        # "also known as Alexander the Liberator" gives the name "the Liberator"
        stated = rf"{_NAMING_CUES}(?:[\"'“]?[\w'’.-]+\s+){{0,3}}?[\"'“]?{name}\b"
        return None if re.search(stated, passage, re.IGNORECASE) else "alias_not_in_passage"
    relation = _RELATION.match(predicate)
    if relation:
        noun, name = (re.escape(relation.group(k).strip()) for k in ("noun", "name"))
        turned = (
            rf"\b{name}\b[^.]{{0,60}}?\b(?:is|was)\s+(?:its|the)\s+(?:\w+\s+)?{noun}\b",
            rf"\bits\s+{noun}\b[^.]{{0,40}}?\b(?:is|was)\s+{name}\b",
        )
        if any(re.search(t, passage, re.IGNORECASE) for t in turned):
            return "inverted_relation"
    return None


def _second_condition(predicate: str) -> str | None:
    clause = _AND_CLAUSE.search(predicate)
    if _OR.search(predicate) or (clause and _is_verb(clause.group(1))):
        return "two_conditions"
    return None
