"""What kind of corpus a passage table is (its genre), and so which construction its groups get.

The paper builds BoolQuestions from two corpora of different shape, and each shape asks for
its own questions (docs/corpora.md, "Corpus kinds"):

- entities: one passage per titled page, each about one named thing (the embedded encyclopedia
  leads). A group's passages are members of a kind: construction `kind` ("What are some Hindu
  or Christian festivals?").
- web: passages without titles (MS MARCO). A cluster shares a topic, one information need
  answered from several angles: construction `topic` ("What causes upper abdomen pain but is
  unrelated to the liver?").
- pages: pages cut into successive passages whose first passage defines the page's subject
  (Wikipedia, DPR's psgs_w100). A window of one page: construction `page`, questions about the
  page's subject and each passage's aspect, worded as encyclopedia questions.
- news: documents of several paragraphs that do not open by defining a subject (news stories,
  reports): construction `story`.

A corpus entry may state its genre (`genre:`); `auto` reads it from the data with
`detect_genre`, and the candidates step records each group's construction.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd

GENRES = ("entities", "web", "pages", "news")
# What a source's files always are (a source of any shape is read from the data).
GENRE_OF_SOURCE = {"vital_articles": "entities", "msmarco": "web", "dpr": "pages"}
CONSTRUCTIONS = ("kind", "topic", "page", "story")
TITLED_SHARE = 0.5  # of passages with a title, below which a corpus counts as untitled (web)
DEFINING_SHARE = 0.5  # of documents whose first passage defines the title: pages, else news
SAMPLE_DOCUMENTS = 300  # documents read for the defining test
# A definition's verb after the subject ("Nauru is an island country", "The Planck family
# were ..."; "X refers to", "X, also known as Y, was").
_DEFINING = re.compile(r"\b(?:is|was|are|were|refers to|has been)\b", re.IGNORECASE)


def detect_genre(
    passages: pd.DataFrame, texts_of: Callable[[list[str]], dict[str, str]]
) -> tuple[str, str]:
    """(genre, why) of a corpus table with columns pid, title, doc_id, position (title and
    doc_id may be null; `texts_of` gives the texts of some pids): untitled is web; one passage
    per document is entities; documents whose first passage names its title and defines it
    are pages, other documents news."""
    titled = passages["title"].notna() & (passages["title"].astype(str).str.strip() != "")
    if len(passages) == 0 or titled.mean() < TITLED_SHARE:
        return "web", f"{titled.mean():.0%} of passages have a title"
    docs = passages["doc_id"].where(passages["doc_id"].notna(), passages["title"])
    per_doc = docs.value_counts()
    if (per_doc >= 2).sum() < 0.5 * len(per_doc):
        return "entities", f"{(per_doc == 1).mean():.0%} of documents are one passage"
    firsts = (
        passages.assign(_doc=docs)[docs.isin(per_doc[per_doc >= 2].index)]
        .sort_values(["_doc", "position"], kind="stable")
        .groupby("_doc", sort=True)
        .head(1)
    )
    firsts = firsts.iloc[:: max(1, len(firsts) // SAMPLE_DOCUMENTS)]
    texts = texts_of(list(firsts["pid"]))
    share = sum(
        defines(t, texts.get(p, "")) for p, t in zip(firsts["pid"], firsts["title"], strict=True)
    ) / max(1, len(firsts))
    why = f"{share:.0%} of {len(firsts)} documents open by defining their title"
    return ("pages" if share >= DEFINING_SHARE else "news"), why


def defines(title, text: str) -> bool:
    """True when `text`'s first sentence names every word of `title` (its parenthesis aside:
    "Mercury (planet)") before a definition's verb: "Alan Mathison Turing (1912-1954) was an
    English mathematician" defines "Alan Turing"; a news story's first paragraph rarely
    writes its whole headline."""
    if not isinstance(title, str) or not title.strip():
        return False
    first = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip(), maxsplit=1)[0]
    verb = _DEFINING.search(first)
    if verb is None:
        return False
    head = first[: verb.start()].lower()
    wanted = re.findall(r"\w+", re.sub(r"\s*\([^)]*\)", "", title).lower())
    return bool(wanted) and all(re.search(rf"\b{re.escape(w)}", head) for w in wanted)


def construction_of(genre: str, grouping: str) -> str:
    """The construction a corpus's groups get: windows of one document ask about the page
    (pages) or the story (any other); clusters ask about a kind (entities) or a topic (web,
    and clusters of pages' or stories' passages, which share a topic, not a kind)."""
    if grouping == "document":
        return "page" if genre == "pages" else "story"
    return "kind" if genre == "entities" else "topic"
