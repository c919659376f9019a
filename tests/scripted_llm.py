"""A scripted LLM for generation tests, served by the fake OpenAI-compatible server.

Every test passage starts with a capitalised keyword ("Alpha is ..."). With TEST_PROMPTS the
responder knows the step from the prompt's first field and writes predictable questions:
- SIMPLE: "What is Alpha?"; keyword "Bad...": never a question; "Flaky...": a question only
  from the second seed on.
- DISJ: "Which of Alpha, Beta or Gamma is it?"
- AND: "What about Alpha?" (the positive's keyword only)
- OR: "What is Alpha or what is beta?"
- NOT: "Which of Alpha or Beta but not Gamma?"
- ANSWER: answers when the paragraph's keyword is in the question (any case) and not after
  "not";
  a paragraph whose keyword starts with "Mute" is never answered.
"""

from __future__ import annotations

import json
import re

from boolbench.prompts import Prompt
from tests.conftest import tiny_config

TEST_PROMPTS = {
    "simple": {"system": "Q", "template": "SIMPLE|{paragraph}"},
    "disjunctive": {"system": "Q", "template": "DISJ|{paragraphs}"},
    "and": {"system": "Q", "template": "AND|{question}|{positive}"},
    "or": {"system": "Q", "template": "OR|{first}|{second}"},
    "not": {"system": "Q", "template": "NOT|{question}|{excluded}"},
    "answerer": {"system": "A", "template": "ANSWER|{question}|{paragraphs}"},
    "decompose": {"system": "Q", "template": "DECOMPOSE|{question}"},
}
TEMPLATES = {
    "simple": "What is known about {title}?",
    "disjunctive": "What is known about {titles}?",
    "and": "{question} and {constraint}?",
    "or": "{first} or {second}?",
    "not": "{question} but not {excluded}?",
}
BASE_SEED = 13


def prompt(step: str) -> Prompt:
    return Prompt(**TEST_PROMPTS[step])


def keyword(paragraph: str) -> str:
    return paragraph.split()[0]


def keywords_in(text: str) -> list[str]:
    return re.findall(r"\b[A-Z][a-z]+[0-9]*\b", text)


def respond(body: dict) -> str:
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    step, *fields = user.split("|")
    seed = body.get("seed")
    if step == "SIMPLE":
        word = keyword(fields[0])
        if word.startswith("Bad") or (word.startswith("Flaky") and seed == BASE_SEED):
            return f"Tell me about {word}."
        return f"What is {word}?"
    if step == "DISJ":
        words = [keyword(p.split(": ", 1)[1]) for p in fields[0].split("\n\n")]
        return f"Which of {', '.join(words[:-1])} or {words[-1]} is it?"
    if step == "AND":
        return f"What about {keyword(fields[1])}?"
    if step == "OR":
        return f"{fields[0].rstrip('?')} or {fields[1].rstrip('?').lower()}?"
    if step == "NOT":
        excluded = keywords_in(fields[1])[-1]
        kept = [w for w in keywords_in(fields[0]) if w not in (excluded, "Which")]
        return f"Which of {' or '.join(kept)} but not {excluded}?"
    if step == "ANSWER":
        question, word = fields[0].lower(), keyword(fields[1])
        if (
            word.startswith("Mute")
            or word.lower() not in question
            or f"not {word.lower()}" in question
        ):
            return "Cannot answer"
        return f"It is {word}."
    if step == "DECOMPOSE":
        return json.dumps(decomposition(fields[0]))
    return "?"


def decomposition(question: str) -> dict:
    """NOT splits at "but not", OR at " or ", anything else is AND of the question and its
    last keyword."""
    body = question.rstrip("?")
    if " but not " in body:
        asked, excluded = body.split(" but not ", 1)
        return {"operator": "NOT", "questions": [f"{asked}?", f"What is {excluded}?"]}
    if " or " in body:
        first, second = body.split(" or ", 1)
        return {"operator": "OR", "questions": [f"{first}?", f"{second}?"]}
    words = keywords_in(question) or ["It"]
    return {"operator": "AND", "questions": [question, f"What is {words[-1]} known for?"]}


def scripted_config(server, **overrides):
    prompts = {step: p["template"] for step, p in TEST_PROMPTS.items()}
    prompts |= {"questioner_system": "Q", "answerer_system": "A"}
    return tiny_config(
        llm={
            "backend": "openai",
            "base_url": server.base_url,
            "model": "scripted",
            "cache_dir": "cache",
            "backoff_s": 0.01,
        },
        generation={"prompts": prompts},
        **overrides,
    )
