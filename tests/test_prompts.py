import pytest

from boolbench.errors import ConfigError
from boolbench.generation.prompts import (
    FIELDS,
    MODES,
    Prompt,
    load_prompt_file,
    resolve_prompts,
    resolve_templates,
    step_prompt,
)


def test_both_sets_are_complete_and_use_only_known_placeholders():
    data = load_prompt_file()
    assert {"paper", "small"} <= set(data["sets"])
    for name in data["sets"]:
        prompts = resolve_prompts(name, "local")
        assert set(prompts) == {*FIELDS, "modes"}
        assert set(prompts["modes"]) == set(MODES)
    assert set(resolve_templates()) == {
        "simple",
        "disjunctive",
        "and",
        "or",
        "not",
        "disjunctive_kind",
        "not_kind",
    }


def test_the_small_set_writes_kinds_quizzes_and_not_templates_the_paper_set_asks_the_llm():
    assert resolve_prompts("small", "local")["modes"] == {
        "disjunctive": "kinds",
        "and": "quiz",
        "not": "template",
    }
    paper = resolve_prompts("paper", "openai")
    assert paper["modes"] == {"disjunctive": "question", "and": "constrain", "not": "llm"}
    # The mode is part of a step's prompt hash: the same text in another mode is another prompt.
    same_text = Prompt(system="s", template="t", mode="quiz")
    assert same_text.hash != Prompt(system="s", template="t", mode="constrain").hash


def test_paper_set_is_appendix_a():
    paper = resolve_prompts("paper", "openai")
    assert paper["simple"].startswith(
        "Please propose a question that can be answered by the following paragraph."
    )
    assert 'respond with "Cannot answer"' in paper["answerer"]
    assert "no longer than 32 words" in paper["questioner_system"]


def test_auto_picks_small_for_the_embedded_model():
    assert resolve_prompts("auto", "local") == resolve_prompts("small", "local")
    assert resolve_prompts("auto", "openai") == resolve_prompts("paper", "openai")


def test_overrides_replace_one_prompt_and_change_only_its_hash():
    base = resolve_prompts("paper", "openai")
    changed = resolve_prompts("paper", "openai", {"not": "Negate: {expression}"})
    assert changed["not"] == "Negate: {expression}"
    assert step_prompt(changed, "not").hash != step_prompt(base, "not").hash
    assert step_prompt(changed, "or").hash == step_prompt(base, "or").hash


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nope": "x"}, "generation.prompts.nope: no such prompt"),
        ({"simple": "About {passage}"}, "unknown placeholder(s) ['passage']"),
        ({"simple": "A lone { brace"}, "write literal braces as {{ and }}"),
    ],
)
def test_bad_overrides_are_clear_errors(overrides, message):
    with pytest.raises(ConfigError) as error:
        resolve_prompts("paper", "openai", overrides)
    assert message in str(error.value)


def test_unknown_set():
    with pytest.raises(ConfigError, match="'tiny' is not a set"):
        resolve_prompts("tiny", "local")


def test_prompt_messages():
    prompt = Prompt(system="Be brief.", template="Paragraph: {paragraph}")
    assert prompt.messages(paragraph="A {curly} text.") == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Paragraph: A {curly} text."},
    ]
