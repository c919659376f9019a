"""Checks on every LLM output: is it a usable search question? is an answer a refusal?"""

from __future__ import annotations

import re
import unicodedata

from boolbench.generation.grammar import broken_agreement, glued_questions

MAX_WORDS = 32
COPY_RUN_WORDS = 12  # this many consecutive words shared with a passage count as copying
# Phrases that give away that the text talks about the task rather than asking a question.
META_PHRASES = (
    "___",  # the mask of a simple question's answer (boolbench.generation.questions.masked)
    "the passage",
    "this passage",
    "the paragraph",
    "this paragraph",
    "these paragraphs",
    "in the text",
    "the given",
    "the following",
    "this question",
    "the question",
    "new question",
    "answer to",
    "as an ai",
    "[positive]",
    "[negative]",
    "positive paragraph",
    "negative paragraph",
    "question a",
    "question b",
    "unwanted topic",
)
# Labels small models put before the question; removed before checking.
_LABEL = re.compile(r"^(?:new |rewritten |combined |final )?(?:question|q)\s*[:.-]\s*", re.I)
_QUOTES = "\"'“”‘’`"
_WORD = re.compile(r"[^\W_]+")  # letters and digits of any script


def clean(text: str | None) -> str:
    """Trim whitespace, wrapping quotes and a leading 'Question:' label."""
    text = (text or "").strip()
    text = _LABEL.sub("", text).strip()
    while len(text) >= 2 and text[0] in _QUOTES and text[-1] in _QUOTES:
        text = text[1:-1].strip()
    return text


def words(text: str) -> list[str]:
    """Lower-case words without accents, so that "Sao Tome" matches "São Tomé" (a question
    that names its answer without the accents still names it)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return _WORD.findall("".join(c for c in decomposed if not unicodedata.combining(c)))


def _longest_shared_run(a: list[str], b: list[str]) -> int:
    """Length of the longest run of consecutive words appearing in both."""
    best = 0
    previous = [0] * (len(b) + 1)
    for word in a:
        current = [0] * (len(b) + 1)
        for j, other in enumerate(b, 1):
            if word == other:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def check_question(
    text: str | None, passages: list[str], max_words: int = MAX_WORDS
) -> tuple[str, str | None]:
    """(cleaned question, None) if valid, else (cleaned text, reason): one line, one "?" at
    the end, at most `max_words` words, nothing copied from a passage, no meta text, not two
    questions glued together, number agreement."""
    question = clean(text)
    if not question:
        return question, "empty"
    if "\n" in question:
        return question, "multiline"
    if not question.endswith("?"):
        return question, "no_question_mark"
    if question.count("?") > 1:
        return question, "several_questions"
    tokens = words(question)
    if len(question.split()) > max_words:
        return question, "too_long"
    if any(_longest_shared_run(tokens, words(p)) >= COPY_RUN_WORDS for p in passages):
        return question, "copies_passage"
    lowered = question.lower()
    if any(phrase in lowered for phrase in META_PHRASES):
        return question, "meta_text"
    if glued_questions(question):
        return question, "glued_questions"
    if broken_agreement(question):
        return question, "broken_agreement"
    return question, None


# "Cannot answer" and the ways small models paraphrase it.
_REFUSAL = re.compile(
    r"\b(?:(?:cannot|can ?not|cant|unable to) (?:be )?answer(?:ed)?"
    r"|(?:does|do|did) ?(?:not|nt) (?:contain|provide|mention|answer|say|include)"
    r"|no information|not (?:mentioned|provided|stated|specified))\b"
)


def is_refusal(answer: str | None) -> bool:
    """True for "Cannot answer" in any case or punctuation, also inside a longer reply or
    paraphrased ("the paragraph does not contain ...", "not mentioned"); empty answers too."""
    normalised = re.sub(r"[^a-z ]+", "", (answer or "").lower().replace("\n", " "))
    return not normalised.strip() or bool(_REFUSAL.search(" ".join(normalised.split())))


def strip_question_mark(question: str) -> str:
    return question.rstrip().rstrip("?").rstrip()


_LOWER_FIRST = {
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
    "were", "do", "does", "did", "can", "could", "has", "have", "in", "on", "for",
}  # fmt: skip


def as_clause(question: str) -> str:
    """A question as the second half of a combined one: no '?', lower-case question word."""
    text = strip_question_mark(question)
    first, _, rest = text.partition(" ")
    if first.lower() in _LOWER_FIRST:
        return first.lower() + (" " + rest if rest else "")
    return text


def mentions(question: str, name: str | None) -> bool:
    """True if `question` contains `name` as whole words (case and punctuation ignored; a
    parenthetical qualifier such as "Grand Canal (China)" is not needed)."""
    if not name:
        return False
    wanted = words(re.sub(r"\([^)]*\)", " ", name)) or words(name)
    have = words(question)
    n = len(wanted)
    return n > 0 and any(have[i : i + n] == wanted for i in range(len(have) - n + 1))


# Words that say nothing about what a question asks for.
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "did",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "some",
        "that",
        "the",
        "their",
        "them",
        "these",
        "this",
        "those",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "with",
        "about",
        "any",
        "key",
        "main",
        "most",
        "known",
    ]
)


def content_words(text: str) -> list[str]:
    """The words of a question that carry its content (no stopwords, at least 3 letters)."""
    return [w for w in words(text) if len(w) >= 3 and w not in STOPWORDS]


STEM_LETTERS = 5  # "conifer" and "coniferous", "German" and "Germany" share a stem


def stems(text: str) -> set[str]:
    """The content words of `text` by their first STEM_LETTERS letters."""
    return {w[:STEM_LETTERS] for w in content_words(text)}


def names_by_stems(text: str, name: str) -> bool:
    """True when every stem of `name` is a stem of `text`: a passage about "a conifer" names
    the sort "coniferous", one born "in Germany" names "German"."""
    wanted = stems(name)
    return bool(wanted) and wanted <= stems(text)
