"""Corpus kinds and their constructions (corpus/genre.py, stories.py's topic and page groups),
near-duplicates and copies (grouping/candidates.py), and Table 1's construction rows."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boolbench.corpus.genre import construction_of, defines, detect_genre
from boolbench.generation import dataset
from boolbench.generation.compose import compose
from boolbench.generation.prompts import Prompt
from boolbench.generation.stories import (
    aspect_choices,
    page_topic,
    parse_aspect,
    parse_topic,
    story_kinds,
    story_questions,
)
from boolbench.grouping.candidates import copies_of, copy_key, distinct, draw_candidates
from boolbench.llm.fake_server import FakeOpenAIServer
from tests.scripted_llm import (
    TEMPLATES,
    TEST_PROMPTS,
    candidates,
    prompt,
    scripted,
    scripted_client,
    settings,
)


@pytest.fixture
def llm(tmp_path):
    with FakeOpenAIServer(responder=scripted) as server:
        yield scripted_client(server, tmp_path)


def table(rows) -> pd.DataFrame:
    """A corpus table (pid, title, doc_id, position, text) of (title, text) rows, documents
    numbered in order of their title."""
    frame = pd.DataFrame(rows, columns=["title", "text"])
    frame["pid"] = [f"p{i}" for i in range(len(frame))]
    frame["doc_id"] = frame["title"]
    frame["position"] = frame.groupby("title", dropna=False).cumcount()
    return frame


def genre_of(frame: pd.DataFrame) -> str:
    texts = dict(zip(frame["pid"], frame["text"], strict=True))
    return detect_genre(frame.drop(columns="text"), lambda pids: {p: texts[p] for p in pids})[0]


PAGES = [
    ("Atari Jaguar", "The Atari Jaguar is a home video game console released in 1993."),
    ("Atari Jaguar", "Its chipset, code-named Tom and Jerry, ran at 26.59 MHz."),
    ("Alan Turing", "Alan Mathison Turing (1912-1954) was an English mathematician."),
    ("Alan Turing", "During the war he worked at Bletchley Park on codebreaking."),
]
NEWS = [
    ("Storm closes ports in Norland", "Ferries stayed in harbour on Tuesday as winds rose."),
    ("Storm closes ports in Norland", "The mayor said repairs would take a week."),
    ("Budget vote delayed", "Councillors will meet again on Friday, the clerk said."),
    ("Budget vote delayed", "Turnout at the public hearing was low."),
]


def test_a_corpus_kind_is_read_from_its_data():
    assert genre_of(table([(None, "How long to boil an egg? About nine minutes.")] * 3)) == "web"
    entities = [("Nile", "The Nile is a river."), ("Rhine", "The Rhine is a river.")]
    assert genre_of(table(entities)) == "entities"
    assert genre_of(table(PAGES)) == "pages"
    assert genre_of(table(NEWS)) == "news"
    # each kind gets its construction, by grouping
    assert [construction_of(g, "cluster") for g in ("entities", "web", "pages", "news")] == [
        "kind", "topic", "topic", "topic"]  # fmt: skip
    assert [construction_of(g, "document") for g in ("pages", "news")] == ["page", "story"]


@pytest.mark.parametrize(
    ("title", "text", "expected"),
    [
        ("Alan Turing", "Alan Mathison Turing OBE (1912-1954) was an English mathematician.", True),
        ("Mercury (planet)", "Mercury is the smallest planet in the Solar System.", True),
        ("Atari Jaguar", "The Atari Jaguar is a home video game console.", True),
        ("Storm closes ports", "Ferries stayed in harbour as the storm closed ports.", False),
        ("Budget vote delayed", "The budget vote was delayed again.", False),  # "vote" after
        (None, "Anything is anything.", False),
    ],
)
def test_a_page_opens_by_defining_its_title(title, text, expected):
    assert defines(title, text) is expected


@pytest.mark.parametrize(
    ("title", "texts", "expected"),
    [
        # "the" where the texts write it so more often than not, not for "the Nauru government"
        (
            "Nauru",
            ["Nauru is an island country.", "The Nauru government met.", "Nauru grew."],
            "Nauru",
        ),
        (
            "Atari Jaguar",
            ["The Atari Jaguar is a console.", "Sales of the Atari Jaguar fell."],
            "the Atari Jaguar",
        ),
        # a title's capital that the texts write in lower case inside sentences
        (
            "Pharmacology",
            ["Pharmacology is a branch of medicine.", "Modern pharmacology grew."],
            "pharmacology",
        ),
        ("Mercury (planet)", ["Mercury is the smallest planet."], "Mercury"),
        (
            "Human–computer interaction",
            ["Human–computer interaction is a field."],
            "Human–computer interaction",
        ),
    ],
)
def test_a_page_topic_is_its_title_written_as_its_texts_write_it(title, texts, expected):
    assert page_topic(title, texts) == (expected, None)


WEB = [
    "Heart Failure Symptoms. The symptoms of heart failure include shortness of breath.",
    "Heart failure is treated with medicines; treatment of heart failure also means rest.",
    "Is heart failure common? Heart failure affects millions of people in the United States.",
]


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # a web page's title-cased heading is no name; no article where the texts write none
        ("The Heart Failure", "heart failure"),
        ("heart failure in the united states", "heart failure in the United States"),
    ],
)
def test_a_web_topic_is_written_as_its_passages_usually_write_it(reply, expected):
    assert parse_topic(reply, WEB, "topic") == (expected, None)
    # a story's topic keeps its audited rules
    assert parse_topic("The Heart Failure", WEB, "story")[0] != "heart failure"


def test_a_one_word_angle_is_one_its_passage_writes_twice():
    text = WEB[1]
    assert parse_aspect("treatment", text, [], "heart failure", "topic") == ("treatment", None)
    once = "A comparison of two drugs for heart failure was published."
    assert parse_aspect("comparison", once, [], "heart failure", "topic") == (
        None, "a_passing_word")  # fmt: skip
    # two words say what they are about
    assert parse_aspect("two drugs", once, [], "heart failure", "topic") == ("two drugs", None)


def test_an_aspect_of_a_topic_or_page_names_no_word_of_the_topic():
    text = "The Atari Jaguar's chipset, code-named Tom and Jerry, ran at 26.59 MHz."
    reply = "the Atari Jaguar's chipset"
    assert parse_aspect(reply, text, [], "the Atari Jaguar", "page") == (None, "names_the_topic")
    assert parse_aspect("chipset", text + " The chipset", [], "the Atari Jaguar", "page") == (
        "the chipset", None)  # fmt: skip
    # a story's aspect keeps its audited rule: it only has to say more than the topic
    assert parse_aspect(reply, text, [], "the Atari Jaguar", "story")[1] is None


PAGE = [
    ["Harbour walls of Norland Castle were built in 1300; the harbour silted up later.",
     "Towers of Norland Castle rise 40 metres above the bay; two towers fell.",
     "Gardens of Norland Castle opened to visitors in 1950, the gardens of a duke."],
]  # fmt: skip


def test_a_page_window_asks_about_its_title_and_each_passage_part(llm):
    cands = candidates(PAGE)
    cands["title"] = "Norland Castle"
    gen = settings()
    kinds = story_kinds(cands, llm, None, prompt("aspect"), gen, TEMPLATES["page_disjunctive"],
                        "m", "page")  # fmt: skip
    kind = kinds.iloc[0]
    # the topic is the page's title (no LLM call), each member's aspect a part of it
    assert (kind["kind"], kind["construction"], kind["question"]) == (
        "Norland Castle", "page", "What is known about Norland Castle?")  # fmt: skip
    assert list(kind["subjects"]) == ["the harbour", "towers", "the gardens"]
    simple = story_questions(cands, kinds, llm, prompt("story"), gen, "m")
    forms = {"page": None}
    composed = {}
    for op in ("AND", "OR", "NOT"):
        forms["page"] = TEMPLATES[f"page_{op.lower()}"]
        composed[op] = compose(op, cands, simple, kinds, llm,
                               Prompt(**TEST_PROMPTS[op.lower()], mode="template"), gen,
                               TEMPLATES[op.lower()], "m", story_forms=dict(forms))  # fmt: skip
    for op, frame in composed.items():
        written = frame[frame["status"] != "dropped"]
        assert len(written) and (written["construction"] == "page").all()
        assert written["question"].str.contains("Norland Castle").all(), op
    nots = composed["NOT"]
    assert nots["question"].str.contains(
        r"apart from|Besides|unrelated to", regex=True).all()  # fmt: skip


def test_near_duplicates_are_one_passage():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(6, 16))
    base[3] = base[1] + 0.001 * rng.normal(size=16)  # p3 says what p1 says
    vectors = dict(zip([f"p{i}" for i in range(6)], base, strict=True))

    def vectors_of(pids):
        return np.stack([vectors[p] for p in pids])

    assert distinct(list(vectors), vectors_of) == ["p0", "p1", "p2", "p4", "p5"]
    groups = pd.DataFrame({"cluster": 0, "pid": list(vectors)})
    drawn = draw_candidates(groups, 1, [5], 13, vectors_of)
    assert sorted(drawn["pid"]) == ["p0", "p1", "p2", "p4", "p5"]
    # a cluster of copies of fewer distinct passages than a group holds gives no group
    with pytest.raises(Exception, match="only 0 groups"):
        draw_candidates(groups, 1, [6], 13, vectors_of)


def test_copies_of_a_labelled_passage_carry_its_label(tmp_path, llm):
    corpus = tmp_path / "corpus.parquet"
    texts = {"a": "Boil the egg for nine minutes.", "b": "boil the egg  for nine minutes!",
             "c": "Poach it instead.", "d": "Boil the egg for nine minutes."}  # fmt: skip
    pq.write_table(pa.table({"pid": list(texts), "text": list(texts.values())}), corpus)
    assert copy_key(texts["a"]) == copy_key(texts["b"])
    cands = pd.DataFrame({"pid": ["a", "c"], "text": [texts["a"], texts["c"]]})
    assert copies_of(corpus, cands) == [["b", "d"], []]
    # composition: a positive's copies are positives too, a negative's negatives
    story = candidates(PAGE)
    story["title"] = "Norland Castle"
    story["copies"] = [["copy-of-harbour"], [], []]
    gen = settings()
    kinds = story_kinds(story, llm, None, prompt("aspect"), gen, TEMPLATES["page_disjunctive"],
                        "m", "page")  # fmt: skip
    simple = story_questions(story, kinds, llm, prompt("story"), gen, "m")
    ands = compose("AND", story, simple, kinds, llm,
                   Prompt(**TEST_PROMPTS["and"], mode="template"), gen, TEMPLATES["and"], "m",
                   story_forms={"page": TEMPLATES["page_and"]})  # fmt: skip
    harbour = story.loc[0, "pid"]
    for row in ands.itertuples():
        labels = row.positives if harbour in row.positives else row.negatives
        assert harbour in labels and "copy-of-harbour" in labels


def test_table1_has_a_row_per_construction():
    rows = []
    for i, (construction, kept) in enumerate([("kind", True), ("kind", False), ("topic", True)]):
        rows.append({"qid": f"q{i}", "type": "AND", "positives": ["a"], "negatives": ["b"],
                     "pooled_positives": [], "pooled_negatives": [], "source": "template",
                     "status": "ok", "kept": kept, "passes_default": kept,
                     "passes_strict": kept, "construction": construction})  # fmt: skip
    t1 = dataset.table1(pd.DataFrame(rows)).set_index("type")
    assert t1.loc["ALL", "questions"] == 2
    assert t1.loc["ALL kind", "questions"] == 1 and t1.loc["ALL kind", "generated"] == 2
    assert t1.loc["ALL topic", "questions"] == 1


def test_a_topic_aspect_is_chosen_among_its_passage_phrases():
    text = "Heart failure symptoms include shortness of breath and swollen legs. Symptoms worsen."
    others = ["Heart failure is treated with medicines."]
    choices = aspect_choices(text, others, "heart failure", "topic")
    # every choice is a valid aspect: written in the passage, in no other, naming no word of
    # the topic, one word only where the passage writes it twice, no list
    assert "shortness of breath" in choices and "swollen legs" in choices
    assert "shortness of breath and swollen legs" not in choices
    # in the shape of a noun phrase: not cut inside one ("symptoms" of "symptoms include"),
    # no verb's form after a subject, no adverb
    assert "symptoms" not in choices
    other = "The Jaguar failed to gain ground and sold largely in the northern states."
    assert aspect_choices(other, [], "heart failure", "topic") == [
        "the northern states", "northern states"]  # fmt: skip
    assert not [c for c in choices if "heart" in c.lower() or "medicines" in c]
    assert all(parse_aspect(c, text, others, "heart failure", "topic")[1] is None
               for c in choices)  # fmt: skip
