import pytest

from boolbench.errors import ConfigError
from boolbench.generation.prompts import (
    COMPOSED,
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
    templates = resolve_templates()
    topical = {f"{c}_{t}" for c in ("story", "topic", "page")
               for t in ("disjunctive", "and", "or", "not")}  # fmt: skip
    assert set(templates) == {"disjunctive", "membership", "named", "and", "or", "or_place",
                              "not", "about", *topical}  # fmt: skip
    # AND, OR (of sorts and of places) and NOT are lists of forms, one drawn per question (and
    # so are a story's, a topic's and a page's AND, OR and NOT)
    assert all(isinstance(templates[t], list) and len(templates[t]) >= 2
               for t in (*COMPOSED, "or_place", *(t for t in topical
                                                  if not t.endswith("disjunctive"))))  # fmt: skip


def test_the_small_set_renders_templates_and_the_paper_set_has_the_llm_rewrite_them():
    assert resolve_prompts("small", "local")["modes"] == {"compose": "template"}
    paper = resolve_prompts("paper", "openai")
    assert paper["modes"] == {"compose": "llm"}
    assert step_prompt(paper, "and").mode == "llm"
    assert step_prompt(paper, "simple").mode is None
    # The mode is part of a step's prompt hash: the same text in another mode is another prompt.
    same_text = Prompt(system="s", template="t", mode="llm")
    assert same_text.hash != Prompt(system="s", template="t", mode="template").hash


def test_paper_set_keeps_appendix_a_where_the_construction_allows():
    paper = resolve_prompts("paper", "openai")
    assert paper["simple"].startswith(
        "Please propose a question that can be answered by the following paragraph"
    )
    assert "adding constraints to the question" in paper["and"]
    assert "but is unrelated to" in paper["not"]
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
        ({"kinds": "Kinds of {paragraph}"}, "'kinds' may use ['items']"),
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
