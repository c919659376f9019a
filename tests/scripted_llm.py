"""A scripted LLM for generation tests, served by the fake OpenAI-compatible server, and the
candidate groups it knows (GROUPS, `candidates`) with the settings and client those tests use.

Every test passage starts with a capitalised keyword ("Alpha is ..."). With TEST_PROMPTS the
responder knows the step from the prompt's first field and writes predictable answers:
- KINDS: the kind "records" with every passage as a member, except those whose keyword starts
  with "Odd" (never of the kind); a group with fewer than two others gets only its first.
- SORT: the word after the first "is a" or "was a" ("Alpha is a Nordic thing." -> "Nordic").
- PLACE: the capitalised word after " in " ("Rho is a thing in Norland." -> "Norland").
- SIMPLE: "Which record is coded <subject backwards>?"; keyword "Bad...": never a question;
  "Flaky...": a question only from the second seed on.
- AND / OR / NOT (compose mode llm): the draft with "What" for "Which".
- ANSWER: answers when the paragraph's keyword (or, backwards, its subject code) is in the
  question (any case) and not after "not"; a paragraph whose keyword starts with "Mute" is
  never answered.
- JUDGE: the same verdict as ANSWER as a yes/no judgement with token probabilities (0.9/0.1);
  the membership question ("Is this paragraph about one of the records?") is yes unless the
  paragraph's keyword starts with "Odd" or "Mute"; asked of sorts ("... of the Nordic or Celtic
  records?"), also only when the paragraph is of one ("Alpha is a Nordic thing."), and of places
  ("... of the records in Norland?") only when it says it is in one; asked of a
  name ("Is Alpha a record?"), yes unless the name starts with "Odd", "Mute" or "Stray" (a
  passage read as of the kind whose subject is not).
- Story groups: TOPIC is "the <last word of four letters or more in every paragraph>"
  ("the storm"; "the" alone where there is none); ASPECT the paragraph's keyword; STORY
  "What about <topic> concerns <aspect>?"; JUDGE of "Is this paragraph about <topic>?" is yes
  when the paragraph has the topic's last word, unless its keyword starts with "Aside".
- SUBJECT names the keyword; DECOMPOSE splits at "or" / the exclusion (also one that comes
  first: "Apart from X, which ...?").
- The label audit's yes/no prompts (0.9/0.1 as JUDGE): NATURAL is yes unless the question
  glues a second question on with "or what/which/who"; OPERATOR is yes when the question has
  its operator's word (AND "and", OR "or", NOT "not", "other than", "excluding", ...); PART
  (meets part of the question) is, for NOT, yes when the paragraph's keyword is named in the
  question (the excluded thing), for AND yes when its keyword is not in the question.
"""

from __future__ import annotations

import json
import re

import pandas as pd

from boolbench.generation.filtering import AnswererSettings
from boolbench.generation.prompts import Prompt, resolve_templates
from boolbench.generation.questions import GenerationSettings
from boolbench.llm import LLMClient, LLMSettings
from tests.conftest import tiny_config

TEST_PROMPTS = {
    "kinds": {"system": "K", "template": "KINDS|{items}"},
    "sort": {"system": "S", "template": "SORT|{kind_singular}|{subject}|{paragraph}"},
    "place": {"system": "S", "template": "PLACE|{kind_singular}|{subject}|{paragraph}"},
    "simple": {"system": "Q", "template": "SIMPLE|{kind_singular}|{subject}|{paragraph}"},
    "subject": {"system": "N", "template": "SUBJECT|{paragraph}"},
    "topic": {"system": "N", "template": "TOPIC|{items}"},
    "aspect": {"system": "N", "template": "ASPECT|{topic}|{paragraph}"},
    "story": {"system": "Q", "template": "STORY|{topic}|{aspect}|{paragraph}"},
    # topic (web) and page groups: scripted as a story's
    "topic_name": {"system": "N", "template": "TOPIC|{items}"},
    "topic_aspect": {"system": "N", "template": "ASPECT|{topic}|{paragraph}"},
    "topic_question": {"system": "Q", "template": "STORY|{topic}|{aspect}|{paragraph}"},
    "page_aspect": {"system": "N", "template": "ASPECT|{topic}|{paragraph}"},
    "page_question": {"system": "Q", "template": "STORY|{topic}|{aspect}|{paragraph}"},
    "and": {"system": "Q", "template": "AND|{draft}"},
    "or": {"system": "Q", "template": "OR|{draft}"},
    "not": {"system": "Q", "template": "NOT|{draft}"},
    "answerer": {"system": "A", "template": "ANSWER|{question}|{paragraphs}"},
    "judge": {"system": "J", "template": "JUDGE|{question}|{paragraph}"},
    "decompose": {"system": "Q", "template": "DECOMPOSE|{question}"},
    "audit_natural": {"system": "U", "template": "NATURAL|{question}"},
    "audit_operator": {"system": "U", "template": "OPERATOR|{question}|{rubric}"},
    "audit_part": {"system": "U", "template": "PART|{question}|{rubric}|{paragraph}"},
}
KIND = "records"
MEMBERSHIP = "Is this paragraph about one of the"
ABOUT = "Is this paragraph about "
NAMED = re.compile(r"^Is (?P<subject>.+) an? \w+\?$")
BASE_SEED = 13


def prompt(step: str) -> Prompt:
    return Prompt(**TEST_PROMPTS[step])


def keyword(paragraph: str) -> str:
    return paragraph.split()[0]


def sort_of(paragraph: str) -> str:
    """What sort of thing a passage says it is: the word after its first "is a" or "was a"
    ("Alpha is a Nordic thing." -> "Nordic"; "Alpha is a thing." -> "thing")."""
    match = re.search(r"\b(?:is|was) an? ([\w-]+)", paragraph)
    return match.group(1) if match else ""


def keywords_in(text: str) -> list[str]:
    return re.findall(r"\b[A-Z][a-z]+[0-9]*\b", text)


def respond(body: dict) -> str:
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    step, *fields = user.split("|")
    seed = body.get("seed")
    if step == "KINDS":
        names = [line.split(". ", 1)[1].split()[0].rstrip(":") for line in fields[0].splitlines()]
        members = [i for i, n in enumerate(names, 1) if not n.startswith("Odd")]
        return json.dumps({"kind": KIND, "members": members if len(members) >= 2 else [1]})
    if step == "SORT":
        return sort_of(fields[2]) or "thing"
    if step == "PLACE":
        place = re.search(r" in ([A-Z]\w+)", fields[2])
        return place.group(1) if place else "?"
    if step == "SIMPLE":
        word = keyword(fields[2])
        if word.startswith("Bad") or (word.startswith("Flaky") and seed == BASE_SEED):
            return f"Tell me about {word}."
        return f"Which {fields[0]} is coded {fields[1][::-1].lower()}?"
    if step in ("AND", "OR", "NOT"):
        return fields[0].replace("Which ", "What ", 1)
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
    if step == "TOPIC":
        items = [set(re.findall(r"[a-z]{4,}", line.lower())) for line in fields[0].splitlines()]
        common = [w for w in re.findall(r"[a-z]{4,}", fields[0].splitlines()[0].lower())
                  if all(w in item for item in items)]  # fmt: skip
        return f"the {common[-1]}" if common else "the"
    if step == "ASPECT":
        return keyword(fields[1])
    if step == "STORY":
        return f"What about {fields[0]} concerns {fields[1]}?"
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
    if "excludes" in rubric:  # NOT: the excluded thing, named in the question
        return word in question.lower()
    return word not in question.lower()  # AND


AUDIT = {"NATURAL": natural, "OPERATOR": operator_expressed, "PART": meets_part}


def answers(question: str, paragraph: str) -> bool:
    """The scripted answerer's verdict: the paragraph's keyword (or its code, the keyword
    backwards) is in the question, not after "not", and the keyword is not Mute...; the
    membership question: the keyword is not Odd... or Mute..."""
    word = keyword(paragraph).rstrip(":")
    if question.startswith(MEMBERSHIP) and " in " in question:  # "... the records in Norland?"
        place = question.rstrip("?").split(" in ", 1)[1]
        return not word.startswith(("Odd", "Mute")) and f" in {place}" in paragraph
    if question.startswith(MEMBERSHIP):  # "... the records?", "... the Nordic or Celtic records?"
        sorts = set(question[len(MEMBERSHIP) :].strip(" ?").split()[:-1]) - {"or", "the"}
        return not word.startswith(("Odd", "Mute")) and (not sorts or sort_of(paragraph) in sorts)
    if question.startswith(ABOUT):  # a story's topic: "Is this paragraph about the storm?"
        about = question.rstrip("?").split()[-1].lower() in paragraph.lower()
        return about and not word.startswith("Aside")
    named = NAMED.match(question)
    if named:  # "Is Alpha a record?"
        return not named["subject"].startswith(("Odd", "Mute", "Stray"))
    question = question.lower()
    if word.startswith("Mute") or f"not {word.lower()}" in question:
        return False
    return word.lower() in question or word[::-1].lower() in question


EXCLUSION = re.compile(
    r",? (?:but not|besides|other than|excluding|apart from|not counting|that "
    r"are not) "
)
# The exclusion first: "Apart from X, which ...?", "Besides X, what other ...?"
LEADING_EXCLUSION = re.compile(
    r"^(?:apart from|besides|other than|excluding|except for|not counting) (?P<excluded>[^,]+), "
    r"(?P<asked>.+)$",
    re.IGNORECASE,
)


def decomposition(question: str) -> dict:
    """NOT splits at its exclusion ("besides", "other than", ...; or, when the question starts
    with it, "Apart from X, which ...?", after the excluded thing, and "what other" asks for
    "what"), OR at " or ", anything else is AND of the question and its last keyword."""
    body = question.rstrip("?")
    leading = LEADING_EXCLUSION.match(body)
    if leading:
        asked = re.sub(r"^(what|which) other ", r"\1 ", leading["asked"], flags=re.IGNORECASE)
        asked = asked[:1].upper() + asked[1:]
        return {"operator": "NOT", "questions": [f"{asked}?", f"What is {leading['excluded']}?"]}
    if EXCLUSION.search(body):
        asked, excluded = EXCLUSION.split(body, maxsplit=1)
        return {"operator": "NOT", "questions": [f"{asked}?", f"What is {excluded}?"]}
    if " or " in body:
        first, second = body.split(" or ", 1)
        return {"operator": "OR", "questions": [f"{first}?", f"{second}?"]}
    words = keywords_in(question) or ["It"]
    return {"operator": "AND", "questions": [question, f"What is {words[-1]} known for?"]}


def scripted_config(server, **overrides):
    prompts = {step: p["template"] for step, p in TEST_PROMPTS.items()}
    prompts |= {
        "questioner_system": "Q",
        "answerer_system": "A",
        "judge_system": "J",
        "kinds_system": "K",
        "sorter_system": "S",
        "namer_system": "N",
        "audit_system": "U",
    }
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


# ---------------------------------------------------------------------------------------------
# Candidate groups the script knows, and the settings and client the generation tests use

TEMPLATES = resolve_templates()
MEMBERSHIP_TEMPLATE = TEMPLATES["membership"]
NAMED_TEMPLATE = TEMPLATES["named"]
LEAD_WORDS = 12
# Group 2's Flaky gets a question from the second seed on, group 3's Bad never (scripted
# below); group 4's Mute is read as not of the kind; group 5 has one passage of the kind only.
GROUPS = [
    ["Alpha is a Nordic thing.", "Beta is a Celtic thing.", "Gamma is a Gothic thing."],
    ["Delta is a thing.", "Epsilon is a thing."],
    ["Zeta is a Nordic thing.", "Flaky is a Celtic thing.", "Theta is a Celtic thing."],
    ["Bad is a Nordic thing.", "Iota is a Celtic thing."],
    ["Kappa is a Nordic thing.", "Mute is a Celtic thing.", "Lambda is a Gothic thing."],
    ["Oddity is a thing.", "Nu is a thing."],
]


def candidates(groups=GROUPS) -> pd.DataFrame:
    rows = []
    for group, texts in enumerate(groups):
        for slot, text in enumerate(texts):
            word = text.split()[0]
            rows.append((group, 100 + group, slot, f"p-{word}", word, text))
    return pd.DataFrame(rows, columns=["group", "cluster", "slot", "pid", "title", "text"])


def scripted(body: dict):
    """respond, with the simple questions of subjects "Bad..." never valid and of "Flaky..."
    valid from the second seed on (the prompt hides the subject in the passage as ___, so
    the subject field says which passage it is)."""
    user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
    if user.startswith("SIMPLE|"):
        subject = user.split("|")[2]
        if subject.startswith("Bad") or (
            subject.startswith("Flaky") and body.get("seed") == BASE_SEED
        ):
            return f"Tell me about {subject}."
    return respond(body)


def scripted_client(server, cache_dir) -> LLMClient:
    settings = LLMSettings(
        backend="openai", model="scripted", cache_dir=str(cache_dir), seed=BASE_SEED
    )
    client = LLMClient(settings, server.base_url, "scripted", "scripted")
    client.server = server
    return client


def settings(**overrides) -> GenerationSettings:
    return GenerationSettings(seed=BASE_SEED, **overrides)


def answerer(**scope) -> AnswererSettings:
    return AnswererSettings(seed=BASE_SEED, scope=dict.fromkeys(("and", "or", "not"),
                                                                "expression") | scope)  # fmt: skip


def judge_params() -> dict:
    """The `member_judge` params of a kinds job (atomic_step): its membership reads, with the
    judge of answerer()."""
    return {"prompt": TEST_PROMPTS["judge"], "answerer": {}, "max_passage_words": 300,
            "membership": MEMBERSHIP_TEMPLATE, "named": NAMED_TEMPLATE,
            "lead_words": LEAD_WORDS}  # fmt: skip
