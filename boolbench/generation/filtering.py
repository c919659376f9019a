"""Cyclic-consistency filtering (paper section 4.4) and the answerer check.

The answerer reads a question with one passage at a time and says whether the passage answers
it, in one of two ways (`filter.method`):
- judge: a yes/no judgement read from the probabilities of the first answer token
  (P(yes) / (P(yes) + P(no)) >= `threshold` counts as answered). One output token per pair,
  and a graded score that discriminates where a small model's free answers do not.
- answer: the paper's answerer, a brief free answer or "Cannot answer".

Prompts put the passage before the question and requests are sent passage by passage, so the
server reuses the passage's tokens (its prompt cache) for every question asked of it.

What the answerer reads, per question type (`filter.scope`):
- question (the paper): the composed question itself, with each labelled passage;
- expression: the operands of its recorded Boolean expression, each a simple question, with
  each passage, combined by the operator: AND: disjunctive and constraint; OR: either operand;
  NOT: disjunctive and not the excluded question. The disjunctive operand is the group's kind
  (kinds mode) or the disjunctive question read with the passage. Small answerers read simple
  questions far better than composed ones (an OR question is "not answered" by a passage that
  answers one half).
Every simple question is read with its own passage, every other candidate of its group and a
candidate of another cluster: that is the answerer check, and the expression scope's operands.

Artifacts:
- questions/answers.parquet: ANSWERS_SCHEMA, one row per (composed question, labelled passage):
  qid, type, pid, role (positive | negative), scope, answer (the reply, question scope),
  answered (does the passage answer the question, as the answerer reads it; null when a call
  failed), p_yes (question scope, method judge), prompt_hash, model.
- questions/answerer_check.parquet: CHECK_SCHEMA, one row per (simple question, passage):
  relation own (the passage it was written from), sibling (another candidate of its group)
  or other (a candidate of another cluster), and the verdict columns.

Verdicts: a question passes (default mode) when every positive is answered; `strict` also
requires every negative to be refused.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import shorten
from boolbench.generation.validation import is_refusal
from boolbench.llm import ChatRequest, ChatResult, LLMClient
from boolbench.llm.until_valid import ask_until_valid

log = logging.getLogger(__name__)
FILTER_MODES = ("default", "strict")
METHODS = ("judge", "answer")
_VERDICT_FIELDS = [
    ("answer", pa.string()), ("answered", pa.bool_()), ("p_yes", pa.float64()),
    ("prompt_hash", pa.string()), ("model", pa.string()),
]  # fmt: skip
ANSWERS_SCHEMA = pa.schema(
    [("qid", pa.string()), ("type", pa.string()), ("pid", pa.string()), ("role", pa.string()),
     ("scope", pa.string()), *_VERDICT_FIELDS]
)  # fmt: skip
SCOPES = ("question", "expression")
CHECK_SCHEMA = pa.schema(
    [("qid", pa.string()), ("group", pa.int64()), ("pid", pa.string()),
     ("relation", pa.string()), *_VERDICT_FIELDS]
)  # fmt: skip
RELATIONS = ("own", "sibling", "other")
TOP_LOGPROBS = 10  # alternatives of the first token read for a yes/no judgement


@dataclass(frozen=True)
class AnswererSettings:
    """The `filter` section of the config (without its `llm` override)."""

    method: str = "judge"
    threshold: float = 0.4
    scope: dict = field(default_factory=lambda: {"and": "question", "or": "expression",
                                                 "not": "expression"})  # fmt: skip
    answer_max_tokens: int = 96
    temperature: float = 0.0
    max_passage_words: int = 300
    seed: int = 13

    @classmethod
    def from_config(cls, section: dict, max_passage_words: int, seed: int) -> AnswererSettings:
        keys = cls.__dataclass_fields__
        values = {k: v for k, v in section.items() if k in keys}
        return cls(**values, max_passage_words=max_passage_words, seed=seed)


@dataclass(frozen=True)
class Pair:
    """One question asked of one passage; `key` identifies the row it fills."""

    key: tuple
    question: str
    pid: str


def p_yes(result: ChatResult) -> float | None:
    """P(yes) / (P(yes) + P(no)) from the first token's alternatives ("Yes", " yes", "YES"
    all count); without alternatives, 1.0 or 0.0 from the reply's text; None if neither."""
    if result.top_logprobs:
        yes = no = 0.0
        for token, logprob in result.top_logprobs.items():
            word = token.strip().lower()
            if word == "yes":
                yes += math.exp(logprob)
            elif word == "no":
                no += math.exp(logprob)
        if yes + no > 0:
            return yes / (yes + no)
    word = (result.content or "").strip().lower().rstrip(".!")
    return {"yes": 1.0, "no": 0.0}.get(word)


def ask(
    pairs: list[Pair],
    passages: dict[str, str],
    llm: LLMClient,
    prompt: Prompt,
    settings: AnswererSettings,
) -> list[dict]:
    """The verdict columns of every pair, asked passage by passage (prompt-cache friendly).
    One attempt each: a verdict is never invalid, and a failed call leaves `answered` null."""
    judge = settings.method == "judge"

    def request(i: int, attempt: int) -> ChatRequest:
        passage = shorten(passages[pairs[i].pid], settings.max_passage_words)
        return ChatRequest(
            f"{i}",
            # judge prompts name the passage {paragraph}, the paper's answerer {paragraphs}
            prompt.messages(question=pairs[i].question, paragraph=passage, paragraphs=passage),
            seed=settings.seed,
            max_tokens=1 if judge else settings.answer_max_tokens,
            temperature=settings.temperature,
            top_logprobs=TOP_LOGPROBS if judge else None,
        )

    def check(i: int, result: ChatResult) -> tuple[dict, None]:
        return _verdict(result, settings, prompt, llm.model_name), None

    order = sorted(range(len(pairs)), key=lambda i: (pairs[i].pid, i))
    answers = ask_until_valid(llm, order, request, check) if pairs else {}
    failed = _verdict(None, settings, prompt, llm.model_name)
    return [answers[i].value or failed for i in range(len(pairs))]


def _verdict(result: ChatResult | None, settings: AnswererSettings, prompt: Prompt, model: str):
    """The verdict columns of one reply (None: the call failed, nothing is known)."""
    columns = {"answer": None, "answered": None, "p_yes": None,
               "prompt_hash": prompt.hash, "model": model}  # fmt: skip
    if result is None:
        return columns
    columns["answer"] = result.content
    if settings.method == "judge":
        probability = p_yes(result)
        columns["p_yes"] = probability
        columns["answered"] = None if probability is None else probability >= settings.threshold
    else:
        columns["answered"] = not is_refusal(result.content)
    return columns


def check_pairs(simple: pd.DataFrame, candidates: pd.DataFrame, seed: int) -> list[Pair]:
    """For every simple question not dropped: its own passage, every sibling of its group and
    one candidate of another cluster, from the nearest earlier group of another cluster (else
    the nearest later one) and drawn with a generator seeded by (seed, group, slot): groups are
    numbered in the order they were drawn, so the pairs stay the same as the run grows."""
    by_group = {int(g): part for g, part in candidates.groupby("group")}
    order = sorted(by_group)
    pairs = []
    for row in simple[simple["status"] != "dropped"].itertuples():
        rng = np.random.default_rng([seed, 5, int(row.group), int(row.slot)])
        for pid in sorted(by_group[row.group]["pid"]):
            relation = "own" if pid == row.pid else "sibling"
            pairs.append(Pair(("check", row.qid, row.group, pid, relation), row.question, pid))
        earlier = [g for g in reversed(order) if g < row.group]
        later = [g for g in order if g > row.group]
        pool = next(
            (by_group[g] for g in [*earlier, *later]
             if (by_group[g]["cluster"] != row.cluster).all()), None
        )  # fmt: skip
        if pool is not None:
            other = sorted(pool["pid"])[int(rng.integers(len(pool)))]
            pairs.append(Pair(("check", row.qid, row.group, other, "other"), row.question, other))
    return pairs


def filter_and_check(
    composed: pd.DataFrame,
    simple: pd.DataFrame,
    disjunctive: pd.DataFrame,
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: AnswererSettings,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(answers, check): the answerer's reading of every labelled pair of the composed
    questions (in each type's scope), and its check on the simple questions. One batch, so the
    questions asked of one passage share its cached prompt."""
    written = composed[composed["status"] != "dropped"]
    scope_of = {kind: settings.scope[kind.lower()] for kind in written["type"].unique()}
    pairs = check_pairs(simple, candidates, settings.seed)
    for row in written.itertuples():
        if scope_of[row.type] == "question":
            pairs += [Pair(("question", row.qid, p), row.question, p)
                      for p in [*row.positives, *row.negatives]]  # fmt: skip
    needs_disjunctive = set(written.loc[written["type"].map(scope_of) == "expression", "group"])
    for row in disjunctive.itertuples():
        if row.group in needs_disjunctive and row.status != "dropped" and row.kinds is None:
            group = candidates[candidates["group"] == row.group]
            pairs += [Pair(("disj", row.group, p), row.question, p) for p in group["pid"]]
    passages = dict(zip(candidates["pid"], candidates["text"], strict=True))
    verdicts = dict(zip((p.key for p in pairs), ask(pairs, passages, llm, prompt, settings),
                        strict=True))  # fmt: skip
    check = pd.DataFrame(
        [dict(zip(("qid", "group", "pid", "relation"), key[1:], strict=True)) | verdict
         for key, verdict in verdicts.items() if key[0] == "check"],
        columns=CHECK_SCHEMA.names,
    )  # fmt: skip
    reads = Operands(verdicts, simple, disjunctive, candidates)
    rows = []
    for row in written.itertuples():
        for role, pids in (("positive", row.positives), ("negative", row.negatives)):
            for pid in pids:
                base = {"qid": row.qid, "type": row.type, "pid": pid, "role": role,
                        "scope": scope_of[row.type]}  # fmt: skip
                if scope_of[row.type] == "question":
                    rows.append(base | verdicts[("question", row.qid, pid)])
                else:
                    answered = reads.expression(row, pid)
                    rows.append(
                        base
                        | {
                            "answer": None,
                            "answered": answered,
                            "p_yes": None,
                            "prompt_hash": prompt.hash,
                            "model": llm.model_name,
                        }
                    )
    answers = pd.DataFrame(rows, columns=ANSWERS_SCHEMA.names)
    if len(answers):
        rates = answers.groupby("role")["answered"].mean()
        log.info(
            "answered: %.0f%% of positive pairs, %.0f%% of negative pairs",
            100 * rates.get("positive", float("nan")),
            100 * rates.get("negative", float("nan")),
        )
    log.info("answerer check: %s", check_rates(check))
    return answers, check


class Operands:
    """The answerer's reading of a composed question's operands with one passage."""

    def __init__(self, verdicts: dict, simple: pd.DataFrame, disjunctive: pd.DataFrame,
                 candidates: pd.DataFrame):  # fmt: skip
        self.verdicts = verdicts
        self.group_of = dict(zip(simple["qid"], simple["group"], strict=True))
        self.slot_of = dict(zip(candidates["pid"], candidates["slot"], strict=True))
        self.disjunctive = {row.qid: row for row in disjunctive.itertuples()}

    def simple(self, qid: str, pid: str) -> bool | None:
        """Does `pid` answer simple question `qid`? (None: not read, or the call failed)"""
        group = self.group_of.get(qid)
        for relation in ("own", "sibling"):
            verdict = self.verdicts.get(("check", qid, group, pid, relation))
            if verdict is not None:
                return verdict["answered"]
        return None

    def disjunctive_holds(self, qid: str, pid: str) -> bool | None:
        """Does `pid` answer the disjunctive question (kinds mode: is it of the kind)?"""
        row = self.disjunctive.get(qid)
        if row is None or row.status == "dropped":
            return None
        if row.kinds is not None:
            return int(self.slot_of[pid]) in set(int(s) for s in row.members)
        verdict = self.verdicts.get(("disj", row.group, pid))
        return None if verdict is None else verdict["answered"]

    def expression(self, question, pid: str) -> bool | None:
        """The composed question's operands with `pid`, combined by its operator."""
        qids = list(question.operand_qids)
        if question.type == "OR":
            reads = [self.simple(q, pid) for q in qids]
            if any(r is True for r in reads):
                return True
            return None if any(r is None for r in reads) else False
        first = self.disjunctive_holds(qids[0], pid)
        if question.type == "NOT" and question.source == "template" and question.status == "ok":
            # template mode names the excluded passage's subject: that exclusion holds by
            # construction (and with kinds, so does membership: such a question always passes)
            second = pid not in set(question.negatives)
        elif question.type == "NOT":
            second = self.simple(qids[1], pid)
            second = None if second is None else not second
        else:
            second = self.simple(qids[1], pid)
        if first is False or second is False:
            return False
        return None if first is None or second is None else True


def check_rates(check: pd.DataFrame) -> dict:
    """accept_own, reject_other, reject_sibling (shares of the pairs with a verdict) and the
    number of pairs behind each (`n_own`, ...); NaN where there is none."""
    rates: dict = {}
    for relation, name in (("own", "accept_own"), ("other", "reject_other"),
                           ("sibling", "reject_sibling")):  # fmt: skip
        verdicts = check.loc[check["relation"] == relation, "answered"].dropna().astype(bool)
        share = verdicts.mean() if relation == "own" else (~verdicts).mean()
        rates[name] = float(share) if len(verdicts) else float("nan")
        rates[f"n_{relation}"] = int(len(verdicts))
    return rates


def verdicts(answers: pd.DataFrame) -> pd.DataFrame:
    """Per qid: passes_default, passes_strict and filter_reason (why it fails strict, if so)."""
    rows = []
    for qid, pairs in answers.groupby("qid", sort=True):
        positives = pairs[pairs["role"] == "positive"]["answered"]
        negatives = pairs[pairs["role"] == "negative"]["answered"]
        passes_default = False
        if positives.isna().any():
            reason = "answerer_failed"
        elif not positives.all():
            reason = "positive_unanswered"
        else:
            passes_default = True
            if negatives.isna().any():
                reason = "answerer_failed"
            elif negatives.any():
                reason = "negative_answered"
            else:
                reason = None
        rows.append((qid, passes_default, reason is None, reason))
    return pd.DataFrame(rows, columns=["qid", "passes_default", "passes_strict", "filter_reason"])
