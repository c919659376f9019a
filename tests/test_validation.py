import pytest

from boolbench.generation.validation import (
    as_clause,
    check_question,
    clean,
    is_refusal,
    mentions,
    names_by_stems,
)

PASSAGE = (
    "Qinghai Lake is the largest lake in China. Located in the Qinghai Province, to which it "
    "gave its name, Qinghai Lake is classified as an alkaline endorheic salt lake."
)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("What is the largest lake in China?", None),
        ('  "Which salt lake gave its name to a Chinese province?"  ', None),
        ("Question: Which salt lake is the largest in China?", None),
        ("", "empty"),
        (None, "empty"),
        ("What is Qinghai Lake?\nIt is a lake.", "multiline"),
        ("Tell me about Qinghai Lake.", "no_question_mark"),
        ("Who named it? Which province?", "several_questions"),
        ("Why " + "very " * 31 + "big?", "too_long"),
        (
            "Located in the Qinghai Province, to which it gave its name, Qinghai Lake is "
            "classified as what?",
            "copies_passage",
        ),
        ("What does the passage say about Qinghai Lake?", "meta_text"),
        ("Can you write an answer to this?", "meta_text"),
        ("Which lake is [positive] here?", "meta_text"),
    ],
)
def test_check_question(text, reason):
    assert check_question(text, [PASSAGE])[1] == reason


def test_clean_strips_labels_and_quotes():
    assert clean(' New question: "Where is Qinghai Lake?" ') == "Where is Qinghai Lake?"
    assert check_question("'Where is it?'", [])[0] == "Where is it?"


def test_a_short_question_sharing_words_is_not_a_copy():
    # 6 words in a row with the passage are normal for a question, not copying.
    assert check_question("Which is the largest lake in China?", [PASSAGE])[1] is None


@pytest.mark.parametrize(
    ("answer", "refused"),
    [
        ("Cannot answer", True),
        ("cannot answer.", True),
        ('"Cannot Answer!"', True),
        ("I cannot answer this question.", True),
        ("The paragraph does not contain the answer.", True),
        ("It is not mentioned.", True),
        ("", True),
        (None, True),
        ("The Nile", False),
        ("Canada", False),
        ("Paris, not London", False),
    ],
)
def test_is_refusal(answer, refused):
    assert is_refusal(answer) is refused


def test_as_clause():
    assert as_clause("What is the capital of France?") == "what is the capital of France"
    assert as_clause("Paris hosted which games?") == "Paris hosted which games"


@pytest.mark.parametrize(
    ("question", "name", "named"),
    [
        ("Which island country is the Democratic Republic of Sao Tome and Principe?",
         "São Tomé and Príncipe", True),
        ("Which river flows through Zürich?", "Zurich", True),
        ("Which city is the capital of Россия?", "Россия", True),
        ("Which lake is the largest in China?", "Qinghai Lake", False),
    ],
)  # fmt: skip
def test_a_name_written_without_its_accents_is_still_named(question, name, named):
    assert mentions(question, name) is named


@pytest.mark.parametrize(
    ("text", "sort", "named"),
    [
        ("The Douglas fir is an evergreen conifer of western North America.", "coniferous", True),
        ("Albert Einstein was a theoretical physicist born in Germany.", "German", True),
        ("The beech is a deciduous tree of Europe.", "evergreen conifer", False),
        ("Tonga is an island country.", "tonal", False),  # stems of five letters
    ],
)  # fmt: skip
def test_a_passage_names_a_sort_by_its_stems(text, sort, named):
    assert names_by_stems(text, sort) is named
