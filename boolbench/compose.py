"""AND / OR / NOT questions with their positive and negative passages (paper section 4.3).

- AND: the disjunctive question plus constraints, so that only one randomly chosen candidate
  answers it. Positive: that passage; negatives: the other candidates. The recorded expression
  is (disjunctive AND the positive's simple question), the constraint's source.
- OR: two randomly chosen simple questions joined with OR and paraphrased. Positives: their two
  passages; negatives: the other candidates.
- NOT: the disjunctive question NOT one randomly chosen simple question, paraphrased. Negative:
  that question's passage; positives: the other candidates.

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

from boolbench.generation import (
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
from boolbench.llm import LLMClient
from boolbench.prompts import Prompt
from boolbench.validation import as_clause, strip_question_mark

OPERATORS = ("AND", "OR", "NOT")
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
    item: Item | None  # None: an operand was dropped, nothing to write


def _rng(seed: int, group: int, operator: str) -> np.random.Generator:
    return np.random.default_rng([seed, group, _OPERATOR_CODE[operator]])


def _ok(row) -> bool:
    return row is not None and row["status"] != "dropped"


def plan_group(
    operator: str,
    group: int,
    candidates: pd.DataFrame,
    simple: dict[int, dict],
    disjunctive: dict | None,
    settings: GenerationSettings,
) -> Plan:
    """Labels and prompt values of one group's question of type `operator`."""
    cands = candidates.sort_values("slot")
    pids, texts = list(cands["pid"]), list(cands["text"])
    slots = list(cands["slot"])
    rng = _rng(settings.seed, group, operator)
    plan = Plan(
        f"{operator.lower()}-{group:05d}",
        operator,
        group,
        int(cands["cluster"].iloc[0]),
        [],
        [],
        [],
        [],
        None,
    )
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
        if not _ok(disjunctive):
            return plan
        values = {
            "question": disjunctive["question"],
            "positive": short[i],
            "positive_paragraphs": f"[positive] {short[i]}",
            "negative_paragraphs": "\n\n".join(
                f"[negative] {t}" for j, t in enumerate(short) if j != i
            ),
        }
        fallback = None
        if _ok(constraint):
            fallback = {
                "question": strip_question_mark(disjunctive["question"]),
                "constraint": as_clause(constraint["question"]),
            }
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
) -> pd.DataFrame:
    """The `operator` question of every group, with labels."""
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
        )
        for group, cands in candidates.groupby("group", sort=True)
    ]
    items = [p.item for p in plans if p.item is not None]
    outcomes = generate(llm, prompt, items, settings, template) if items else {}
    log_outcomes(operator, outcomes)
    rows = []
    for plan in plans:
        if plan.item is None:
            columns = {
                "question": None, "source": None, "status": "dropped",
                "reason": "operand_dropped", "attempts": 0, "prompt_hash": prompt.hash,
                "model": model,
            }  # fmt: skip
        else:
            columns = outcome_columns(outcomes[plan.qid], prompt, model)
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
