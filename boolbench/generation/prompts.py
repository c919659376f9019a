"""Prompt sets: load `resources/prompts.yaml`, pick a set, apply overrides, render, hash."""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from pathlib import Path

import yaml

from boolbench.constants import OPERATORS
from boolbench.errors import ConfigError

PROMPTS_FILE = Path(__file__).resolve().parents[2] / "resources" / "prompts.yaml"
# Each prompt name -> the placeholders it may use.
FIELDS = {
    "questioner_system": set(),
    "namer_system": set(),
    "kinds_system": set(),
    "sorter_system": set(),
    "answerer_system": set(),
    "judge_system": set(),
    "kinds": {"items"},
    "sort": {"paragraph", "subject", "kind_singular"},
    "place": {"paragraph", "subject", "kind_singular"},
    "simple": {"paragraph", "title", "subject", "kind", "kind_singular"},
    "subject": {"paragraph"},
    "topic": {"items"},
    "aspect": {"paragraph", "topic"},
    "story": {"paragraph", "topic", "aspect"},
    "topic_name": {"items"},
    "topic_aspect": {"paragraph", "topic"},
    "topic_question": {"paragraph", "topic", "aspect"},
    "page_aspect": {"paragraph", "topic"},
    "page_question": {"paragraph", "topic", "aspect"},
    "and": {"question", "draft", "positive_paragraphs", "negative_paragraphs"},
    "or": {"expression", "first", "second", "draft"},
    "not": {"expression", "question", "excluded", "draft"},
    "answerer": {"question", "paragraphs"},
    "judge": {"question", "paragraph"},
    "audit_system": set(),
    "audit_operator": {"question", "rubric"},
    "audit_natural": {"question"},
    "audit_part": {"question", "paragraph", "rubric"},
    "decompose": {"question"},
}
# Template name -> its placeholders; and, or, not are lists of forms (one drawn per question).
TEMPLATE_FIELDS = {
    "disjunctive": {"kind"},
    "membership": {"kind"},
    "named": {"subject", "a_kind_singular"},
    "and": {"kind", "kind_singular", "predicate"},
    "or": {"kind", "first", "second"},
    "or_place": {"kind", "first", "second"},
    "not": {"kind", "excluded"},
    "story_disjunctive": {"topic"},
    "about": {"topic"},
    "story_and": {"topic", "aspect"},
    "story_or": {"topic", "first", "second"},
    "story_not": {"topic", "excluded"},
    **{f"{c}_disjunctive": {"topic"} for c in ("topic", "page")},
    **{f"{c}_and": {"topic", "aspect"} for c in ("topic", "page")},
    **{f"{c}_or": {"topic", "first", "second"} for c in ("topic", "page")},
    **{f"{c}_not": {"topic", "excluded"} for c in ("topic", "page")},
}
# How a prompt set writes each step (`modes:` of the set; the first choice is the default):
# compose: template (AND/OR/NOT are the templates' questions, no LLM call) | llm (the LLM
#   rewrites the template's question, which stays the fallback).
MODES = {"compose": ("template", "llm")}
COMPOSED = OPERATORS  # the composed questions' prompts
# Which system message goes with which prompt.
SYSTEM_OF = {
    name: "questioner_system"
    for name in ("simple", "story", "topic_question", "page_question", *COMPOSED, "decompose")
}
SYSTEM_OF["kinds"] = "kinds_system"
SYSTEM_OF["sort"] = SYSTEM_OF["place"] = "sorter_system"
for _name in ("subject", "topic", "aspect", "topic_name", "topic_aspect", "page_aspect"):
    SYSTEM_OF[_name] = "namer_system"
SYSTEM_OF["answerer"] = "answerer_system"
SYSTEM_OF["judge"] = "judge_system"
for _name in ("audit_operator", "audit_natural", "audit_part"):
    SYSTEM_OF[_name] = "audit_system"


def load_prompt_file(path: str | Path = PROMPTS_FILE) -> dict:
    """The parsed prompts file (sets and templates)."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: prompts file not found") from None
    for name, prompts in data["sets"].items():
        for key in FIELDS:
            if key not in prompts:
                raise ConfigError(f"{path}: prompt set {name!r} lacks the prompt {key!r}")
    return data


def _fields_of(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field}


def _check_fields(name: str, template: str, allowed: set[str], where: str) -> None:
    try:
        used = _fields_of(template)
    except ValueError as err:  # e.g. a lone "{"
        raise ConfigError(f"{where}: {err} (write literal braces as {{{{ and }}}})") from None
    unknown = used - allowed
    if unknown:
        raise ConfigError(
            f"{where}: unknown placeholder(s) {sorted(unknown)}; {name!r} may use "
            f"{sorted(allowed) or 'none'}"
        )


def choose_set(prompt_set: str, backend: str) -> str:
    """`auto` is `small` for the embedded models, `paper` for endpoints."""
    if prompt_set != "auto":
        return prompt_set
    return "small" if backend == "local" else "paper"


def resolve_prompts(
    prompt_set: str, backend: str, overrides: dict | None = None, path: str | Path = PROMPTS_FILE
) -> dict[str, str]:
    """Every prompt of the chosen set, with config overrides applied and placeholders checked."""
    data = load_prompt_file(path)
    name = choose_set(prompt_set, backend)
    if name not in data["sets"]:
        raise ConfigError(
            f"generation.prompt_set: {name!r} is not a set in {path} "
            f"(sets: {', '.join(data['sets'])})"
        )
    prompts = {key: data["sets"][name][key] for key in FIELDS}
    modes = data["sets"][name].get("modes", {})
    for step, mode in modes.items():
        if step not in MODES or mode not in MODES[step]:
            raise ConfigError(
                f"{path}: prompt set {name!r}: modes.{step}: {mode!r} is not one of "
                f"{MODES.get(step, ())}"
            )
    prompts["modes"] = {step: modes.get(step, choices[0]) for step, choices in MODES.items()}
    for key, text in (overrides or {}).items():
        if key not in FIELDS:
            raise ConfigError(
                f"generation.prompts.{key}: no such prompt (prompts: {', '.join(FIELDS)})"
            )
        prompts[key] = text
    for key in FIELDS:
        _check_fields(key, prompts[key], FIELDS[key], f"prompt {key!r} of set {name!r}")
    return prompts


def resolve_templates(path: str | Path = PROMPTS_FILE) -> dict[str, str | list[str]]:
    """The templates of the construction (and, or, not: lists of forms)."""
    templates = load_prompt_file(path)["templates"]
    for key, allowed in TEMPLATE_FIELDS.items():
        forms = templates[key] if isinstance(templates[key], list) else [templates[key]]
        for form in forms:
            _check_fields(key, form, allowed, f"{path}: template {key!r}")
    return templates


@dataclass(frozen=True)
class Prompt:
    """One step's prompt: its system message, user template and (for the steps of MODES) how
    the step is written."""

    system: str
    template: str
    mode: str | None = None

    @property
    def hash(self) -> str:
        text = f"{self.system}\x00{self.template}" + (f"\x00{self.mode}" if self.mode else "")
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def messages(self, **values: str) -> list[dict]:
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.template.format(**values)},
        ]


def step_prompt(prompts: dict, step: str) -> Prompt:
    """The Prompt of one step (kinds, simple, subject, and, or, not, answerer, judge, ...); the
    composition steps carry the set's compose mode."""
    return Prompt(
        system=prompts[SYSTEM_OF[step]],
        template=prompts[step],
        mode=prompts["modes"]["compose"] if step in COMPOSED else None,
    )
