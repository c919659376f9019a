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
- JUDGE: the same verdict as ANSWER as a yes/no judgement with token probabilities (0.9/0.1);
  a keyword written backwards ("ahpla") also counts (the QUIZ questions below).
- The label audit's yes/no prompts (0.9/0.1 as JUDGE): NATURAL is yes unless the question
  glues a second question on with "or what/which/who"; OPERATOR is yes when the question has
  its operator's word (AND "and", OR "or", NOT "not", "other than", "excluding", ...); PART
  (meets part of the question) is, for NOT, yes when the paragraph's keyword follows "not"
  (the excluded thing), for AND yes when its keyword is not in the question.
- SMALL_PROMPTS (the small set's modes): KINDS names Greek letters "greek letters" and every
  other keyword "oddities"; QUIZ asks "Which thing is coded <keyword backwards>?"; SUBJECT
  names the keyword.
"""

from __future__ import annotations

import json
import re

from boolbench.generation.prompts import Prompt
from tests.conftest import tiny_config

TEST_PROMPTS = {
    "simple": {"system": "Q", "template": "SIMPLE|{paragraph}"},
    "disjunctive": {"system": "Q", "template": "DISJ|{paragraphs}"},
    "and": {"system": "Q", "template": "AND|{question}|{positive}"},
    "or": {"system": "Q", "template": "OR|{first}|{second}"},
    "not": {"system": "Q", "template": "NOT|{question}|{excluded}"},
    "answerer": {"system": "A", "template": "ANSWER|{question}|{paragraphs}"},
    "judge": {"system": "J", "template": "JUDGE|{question}|{paragraph}"},
    "decompose": {"system": "Q", "template": "DECOMPOSE|{question}"},
    "audit_natural": {"system": "U", "template": "NATURAL|{question}"},
    "audit_operator": {"system": "U", "template": "OPERATOR|{question}|{rubric}"},
    "audit_part": {"system": "U", "template": "PART|{question}|{rubric}|{paragraph}"},
}
# The small set's steps that differ (kinds, quiz and template modes).
SMALL_PROMPTS = {
    "subject": "SUBJECT|{paragraph}",
    "disjunctive": "KINDS|{items}",
    "and": "QUIZ|{positive}|{subject}",
}
GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "iota", "kappa", "lambda"}
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
        return f"It is {keyword(fields[1])}." if answers(*fields) else "Cannot answer"
    if step == "JUDGE":
        return (
            ("yes", {"yes": 0.9, "no": 0.1})
            if answers(*fields)
            else ("no", {"no": 0.9, "yes": 0.1})
        )
    if step in AUDIT:
        return yes_no(AUDIT[step](*fields))
    if step == "SUBJECT":
        return keyword(fields[0])
    if step == "KINDS":
        names = [line.split(". ", 1)[1].split()[0].rstrip(":") for line in fields[0].splitlines()]
        return json.dumps(
            {"kinds": ["greek letters" if n.lower() in GREEK else "oddities" for n in names]}
        )
    if step == "QUIZ":
        return f"Which thing is coded {fields[1][::-1].lower()}?"
    if step == "DECOMPOSE":
        return json.dumps(decomposition(fields[0]))
    return "?"


def yes_no(verdict: bool) -> tuple[str, dict]:
    return ("yes", {"yes": 0.9, "no": 0.1}) if verdict else ("no", {"no": 0.9, "yes": 0.1})


def natural(question: str) -> bool:
    return not re.search(r" or (what|which|who)\b", question.lower())


OPERATOR_WORDS = {
    "conditions": (" and ",),  # the AND rubric
    "either": (" or ",),  # OR
    "excluding": ("not ", "other than", "excluding", "apart from", "besides"),  # NOT
}


def operator_expressed(question: str, rubric: str) -> bool:
    words = next(words for cue, words in OPERATOR_WORDS.items() if cue in rubric)
    return any(word in question.lower() for word in words)


def meets_part(question: str, rubric: str, paragraph: str) -> bool:
    word = keyword(paragraph).lower()
    if "excludes" in rubric:  # NOT: the excluded thing
        return f"not {word}" in question.lower()
    return word not in question.lower()  # AND


AUDIT = {"NATURAL": natural, "OPERATOR": operator_expressed, "PART": meets_part}


def answers(question: str, paragraph: str) -> bool:
    """The scripted answerer's verdict: the paragraph's keyword (or its QUIZ code) is in the
    question, not after "not", and the keyword is not Mute..."""
    question, word = question.lower(), keyword(paragraph)
    if word.startswith("Mute") or f"not {word.lower()}" in question:
        return False
    return word.lower() in question or word[::-1].lower() in question


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
    prompts |= {"questioner_system": "Q", "answerer_system": "A", "judge_system": "J"}
    prompts |= {"audit_system": "U"}
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
