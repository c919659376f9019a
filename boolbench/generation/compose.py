"""AND / OR / NOT questions with their positive and negative passages (paper section 4.3).

- AND: only one randomly chosen candidate answers it. Positive: that passage; negatives: the
  other candidates. The recorded expression is (disjunctive AND the positive's simple question).
  Mode constrain (the paper): the LLM adds constraints to the disjunctive question. Mode quiz:
  the LLM writes a question whose answer is the positive's subject without naming it (which
  kind of thing, and a fact only it has).
- OR: two randomly chosen simple questions joined with OR and paraphrased. Positives: their two
  passages; negatives: the other candidates. The paraphrase must keep both operands' words.
- NOT: the disjunctive question NOT one randomly chosen simple question. Negative: that
  question's passage; positives: the other candidates. Mode llm (the paper): the LLM
  paraphrases the expression. Mode template (with kinds-mode disjunctive questions): a not_kind
  form, "What are some <kind> other than <subject>?", over the passages of the group's shared
  kind only (the others are not labelled).

Artifact questions/{and,or,not}.parquet: qid, type, group, cluster, QUESTION_COLUMNS, operator,
operand_qids (list<string>), operand_texts (list<string>), positives, negatives (list<string>
of pids). Random choices use a generator seeded by (seed, group, operator), so they are stable
as the run grows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from boolbench.constants import TYPES
from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import (
    QUESTION_FIELDS,
    GenerationSettings,
    Item,
    disjunctive_qid,
    generate,
    log_outcomes,
    outcome_columns,
    shorten,
    simple_qid,
)
from boolbench.generation.validation import (
    as_clause,
    check_question,
    content_words,
    strip_question_mark,
)
from boolbench.llm import LLMClient

OPERATORS = TYPES  # the operator of each question type
_LIST = pa.list_(pa.string())
COMPOSED_SCHEMA = pa.schema(
    [("qid", pa.string()), ("type", pa.string()), ("group", pa.int64()), ("cluster", pa.int64()),
     *QUESTION_FIELDS, ("operator", pa.string()), ("operand_qids", _LIST),
     ("operand_texts", _LIST), ("positives", _LIST), ("negatives", _LIST)]
)  # fmt: skip
_OPERATOR_CODE = {"AND": 1, "OR": 2, "NOT": 3}


@dataclass
class Plan:
    """A composed question before its text is written."""

    qid: str
    type: str
    group: int
    cluster: int
    positives: list[str]
    negatives: list[str]
    operand_qids: list[str]
    operand_texts: list[str | None]
    item: Item | None = None  # what to ask the LLM; None: nothing to ask
    rendered: str | None = None  # a question made without the LLM (a template mode)
    reason: str | None = None  # why neither is there (default: an operand was dropped)


def _rng(seed: int, group: int, operator: str) -> np.random.Generator:
    return np.random.default_rng([seed, group, _OPERATOR_CODE[operator]])


def _ok(row) -> bool:
    return row is not None and row["status"] != "dropped"


def keeps_operands(operands: tuple[str, ...], joiner: str, share: float = 0.5):
    """A check that a merged question still says both operands (at least `share` of each
    one's content words) and joins them with `joiner` ("or")."""

    def check(question: str) -> str | None:
        if f" {joiner} " not in f" {question.lower()} ":
            return f"no_{joiner}"
        have = set(content_words(question))
        for operand in operands:
            wanted = set(content_words(operand))
            if wanted and len(wanted & have) < share * len(wanted):
                return "drops_an_operand"
        return None

    return check


def plan_group(
    operator: str,
    group: int,
    candidates: pd.DataFrame,
    simple: dict[int, dict],
    disjunctive: dict | None,
    settings: GenerationSettings,
    mode: str | None = None,
    forms: list[str] | None = None,
) -> Plan:
    """Labels and prompt values of one group's question of type `operator` (`mode`: how the
    prompt set writes it; `forms`: the not_kind templates of NOT's template mode)."""
    cands = candidates.sort_values("slot")
    pids, texts = list(cands["pid"]), list(cands["text"])
    slots = list(cands["slot"])
    rng = _rng(settings.seed, group, operator)
    plan = Plan(
        f"{operator.lower()}-{group:05d}", operator, group, int(cands["cluster"].iloc[0]),
        [], [], [], [],
    )  # fmt: skip
    short = [shorten(t, settings.max_passage_words) for t in texts]
    valid = [s for s in slots if _ok(simple.get(s))]

    if operator == "AND":
        chosen = int(rng.choice(slots))
        i = slots.index(chosen)
        plan.positives = [pids[i]]
        plan.negatives = [p for p in pids if p != pids[i]]
        constraint = simple.get(chosen)
        plan.operand_qids = [disjunctive_qid(group), simple_qid(group, chosen)]
        plan.operand_texts = [
            disjunctive["question"] if _ok(disjunctive) else None,
            constraint["question"] if _ok(constraint) else None,
        ]
        subject = constraint.get("subject") if constraint is not None else None
        if mode == "quiz" and not (isinstance(subject, str) and subject):
            return plan
        if mode != "quiz" and not _ok(disjunctive):
            return plan
        values = {
            "question": disjunctive["question"] if _ok(disjunctive) else "",
            "positive": short[i],
            "positive_paragraphs": f"[positive] {short[i]}",
            "negative_paragraphs": "\n\n".join(
                f"[negative] {t}" for j, t in enumerate(short) if j != i
            ),
            "subject": subject or "",
        }
        fallback = None
        if _ok(constraint) and _ok(disjunctive):
            fallback = {
                "question": strip_question_mark(disjunctive["question"]),
                "constraint": as_clause(constraint["question"]),
            }
        operands = tuple(t for t in plan.operand_texts if t)
        forbidden = (subject,) if mode == "quiz" else ()
        plan.item = Item(plan.qid, values, tuple(texts), fallback, operands, forbidden)
        return plan
    elif operator == "OR":
        if len(valid) < 2:
            plan.operand_qids = [simple_qid(group, s) for s in slots[:2]]
            plan.operand_texts = [None, None]
            return plan
        first, second = (int(s) for s in rng.choice(valid, size=2, replace=False))
        qa, qb = simple[first]["question"], simple[second]["question"]
        chosen = {pids[slots.index(first)], pids[slots.index(second)]}
        plan.positives = [pids[slots.index(first)], pids[slots.index(second)]]
        plan.negatives = [p for p in pids if p not in chosen]
        plan.operand_qids = [simple_qid(group, first), simple_qid(group, second)]
        plan.operand_texts = [qa, qb]
        values = {"expression": f'"{qa}" OR "{qb}"', "first": qa, "second": qb}
        fallback = {"first": strip_question_mark(qa), "second": as_clause(qb)}
        plan.item = Item(
            plan.qid, values, tuple(texts), fallback, (qa, qb),
            extra_checks=(keeps_operands((qa, qb), "or"),),
        )  # fmt: skip
        return plan
    elif operator == "NOT" and mode == "template":
        return _plan_kind_not(plan, rng, cands, simple, disjunctive, forms or [], settings)
    elif operator == "NOT":
        if not _ok(disjunctive) or not valid:
            plan.operand_qids = [disjunctive_qid(group)]
            plan.operand_texts = [disjunctive["question"] if _ok(disjunctive) else None]
            return plan
        excluded = int(rng.choice(valid))
        i = slots.index(excluded)
        dq, eq = disjunctive["question"], simple[excluded]["question"]
        plan.negatives = [pids[i]]
        plan.positives = [p for p in pids if p != pids[i]]
        plan.operand_qids = [disjunctive_qid(group), simple_qid(group, excluded)]
        plan.operand_texts = [dq, eq]
        values = {"expression": f'"{dq}" NOT "{eq}"', "question": dq, "excluded": eq}
        fallback = {"question": strip_question_mark(dq), "excluded": as_clause(eq)}
    else:
        raise ValueError(f"unknown operator {operator!r}")
    operands = tuple(t for t in plan.operand_texts if t)
    plan.item = Item(plan.qid, values, tuple(texts), fallback, operands)
    return plan


def _plan_kind_not(plan, rng, cands, simple, disjunctive, forms, settings) -> Plan:
    """NOT in template mode: exclude one passage of the group's shared kind by its subject."""
    plan.operand_qids = [disjunctive_qid(plan.group)]
    plan.operand_texts = [disjunctive["question"] if _ok(disjunctive) else None]
    members = list(disjunctive["members"]) if _ok(disjunctive) else []
    members = [s for s in members if isinstance((simple.get(s) or {}).get("subject"), str)]
    if len(members) < 2 or not forms:
        plan.reason = "no_shared_kind"
        return plan
    excluded = int(rng.choice(members))
    form = forms[int(rng.integers(len(forms)))]
    by_slot = dict(zip(cands["slot"], cands["pid"], strict=True))
    plan.negatives = [by_slot[excluded]]
    plan.positives = [by_slot[s] for s in sorted(members) if s != excluded]
    plan.operand_qids.append(simple_qid(plan.group, excluded))
    plan.operand_texts.append(simple[excluded]["question"] if _ok(simple[excluded]) else None)
    values = {"kind": disjunctive["kind"], "excluded": simple[excluded]["subject"]}
    plan.rendered = form.format(**values)
    question, invalid = check_question(plan.rendered, list(cands["text"]), settings.max_words)
    plan.rendered, plan.reason = (
        (question, None) if invalid is None else (None, f"template {invalid}")
    )
    return plan


def compose(
    operator: str,
    candidates: pd.DataFrame,
    simple: pd.DataFrame,
    disjunctive: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    template: str | None,
    model: str,
    forms: list[str] | None = None,
) -> pd.DataFrame:
    """The `operator` question of every group, with labels (`forms`: NOT's template mode)."""
    simple_by_group: dict[int, dict[int, dict]] = {}
    for row in simple.to_dict("records"):
        simple_by_group.setdefault(row["group"], {})[row["slot"]] = row
    disj_by_group = {row["group"]: row for row in disjunctive.to_dict("records")}
    plans = [
        plan_group(
            operator,
            group,
            cands,
            simple_by_group.get(group, {}),
            disj_by_group.get(group),
            settings,
            prompt.mode,
            forms,
        )
        for group, cands in candidates.groupby("group", sort=True)
    ]
    items = [p.item for p in plans if p.item is not None]
    outcomes = generate(llm, prompt, items, settings, template) if items else {}
    log_outcomes(operator, outcomes)
    rows = []
    for plan in plans:
        if plan.item is not None:
            columns = outcome_columns(outcomes[plan.qid], prompt, model)
        elif plan.rendered is not None:
            columns = {
                "question": plan.rendered, "source": "template", "status": "ok", "reason": None,
                "attempts": 0, "prompt_hash": prompt.hash, "model": model,
            }  # fmt: skip
        else:
            columns = {
                "question": None, "source": None, "status": "dropped",
                "reason": plan.reason or "operand_dropped", "attempts": 0,
                "prompt_hash": prompt.hash, "model": model,
            }  # fmt: skip
        rows.append(
            {
                "qid": plan.qid,
                "type": plan.type,
                "group": plan.group,
                "cluster": plan.cluster,
                **columns,
                "operator": plan.type,
                "operand_qids": plan.operand_qids,
                "operand_texts": plan.operand_texts,
                "positives": plan.positives,
                "negatives": plan.negatives,
            }
        )
    return pd.DataFrame(rows)
