"""The judge: cyclic-consistency filtering (paper section 4.4), the answerer check, and the
judging of pooled passages that completes each kept question's labels.

The answerer reads a question with one passage at a time and says whether the passage answers
it, in one of two ways (`filter.method`):
- judge: a yes/no judgement read from the probabilities of the first answer token
  (P(yes) / (P(yes) + P(no)) >= `threshold` counts as answered). One output token per pair.
- answer: the paper's answerer, a brief free answer or "Cannot answer".
Prompts put the passage before the question and requests are sent passage by passage, so the
server reuses the passage's tokens (its prompt cache) for every question asked of it.

What it reads (`filter.scope`, per type):
- expression (default): the construction's operands, each a short question: whether a passage
  is of the group's kind (the `membership` template, read with the passage's title and first
  `pooling.lead_words` words), and the members' simple questions. AND: of the kind and the
  positive's simple question; OR: of the kind and of either sort (the membership template of
  each sort the passage names, "Hindu festivals", read with the whole passage; one that names
  neither is of neither, unread); NOT: of the kind (the exclusion names the excluded member, so
  it holds by construction). Small answerers read these far better than composed questions.
- question (the paper): the composed question itself.
Story groups (`grouping: document`, stories.py) read the `about` template with the whole
passage after its title ("Is this paragraph about the floods in Hereford?", at the membership
threshold) where kinds read membership, and
the aspects' questions as simple questions (AND: the positive's; OR: either of two).
Filter verdicts (`filter.mode`): default: every positive answers (the paper); strict: also
every negative refuses, and (expression scope) AND and NOT negatives are of the kind, so that
an AND negative meets the disjunctive part and a NOT negative is a member of the set.

Pooling (TREC style): for each kept question, the union of every pooled model's top
`pooling.depth` passages that are not labelled yet is judged: NOT: of the kind and not about
the excluded subject; AND: a passage that names none of the answers' subjects cannot state
that they meet the constraint (judged not relevant, method name_gate), one that names one is
read with the answer's simple question; OR: a passage that names neither sort cannot state it
is of either (name_gate), one that names one is read as the labelled passages are and, where
the members were named by their titles, by its title's name as of the kind (`named`). A story's
(method story): about the story, and AND: answering the aspect's question; OR: either one's;
NOT: not the excluded aspect's.

Artifacts:
- questions/answers.parquet: ANSWERS_SCHEMA, one row per (written composed question, labelled
  passage): qid, type, pid, role (positive | negative), scope, answer (question scope, method
  answer), answered (does the passage answer the question; null when a call failed), member
  (is it of the group's kind; null when not read), p_yes (question scope), prompt_hash, model.
- questions/answerer_check.parquet: CHECK_SCHEMA, one row per (simple question, passage):
  relation own (the passage it was written from), sibling (another candidate of its group) or
  other (a candidate of another cluster), and the verdict columns.
- questions/pooled.parquet: POOLED_SCHEMA, one row per (kept question, pooled passage): qid,
  type, pid, rank (its best rank over the pooled models), relevant (null when a call failed),
  method (membership | read | name_gate | excluded | story), p_yes, prompt_hash, model.
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from boolbench.constants import OPERATORS, TYPES
from boolbench.generation.grammar import as_named, with_article
from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import (
    shorten,
    sort_kind,
    sort_name,
    sorts_of,
    subject_of_title,
    usable_titles,
)
from boolbench.generation.stories import is_story
from boolbench.generation.validation import is_refusal, names_by_stems, words
from boolbench.llm import ChatRequest, ChatResult, LLMClient
from boolbench.llm.until_valid import ask_until_valid

log = logging.getLogger(__name__)
_VERDICT_FIELDS = [
    ("answer", pa.string()), ("answered", pa.bool_()), ("p_yes", pa.float64()),
    ("prompt_hash", pa.string()), ("model", pa.string()),
]  # fmt: skip
ANSWERS_SCHEMA = pa.schema(
    [("qid", pa.string()), ("type", pa.string()), ("pid", pa.string()), ("role", pa.string()),
     ("scope", pa.string()), ("answer", pa.string()), ("answered", pa.bool_()),
     ("member", pa.bool_()), ("p_yes", pa.float64()), ("prompt_hash", pa.string()),
     ("model", pa.string())]
)  # fmt: skip
CHECK_SCHEMA = pa.schema(
    [("qid", pa.string()), ("group", pa.int64()), ("pid", pa.string()),
     ("relation", pa.string()), *_VERDICT_FIELDS]
)  # fmt: skip
POOLED_SCHEMA = pa.schema(
    [("qid", pa.string()), ("type", pa.string()), ("pid", pa.string()), ("rank", pa.int32()),
     ("relevant", pa.bool_()), ("method", pa.string()), ("p_yes", pa.float64()),
     ("prompt_hash", pa.string()), ("model", pa.string())]
)  # fmt: skip
TOP_LOGPROBS = 10  # alternatives of the first token read for a yes/no judgement


@dataclass(frozen=True)
class AnswererSettings:
    """The `filter` section of the config (without its `llm` override)."""

    method: str = "judge"
    threshold: float = 0.4
    membership_threshold: float = 0.6  # of a membership read of a passage's lead (Reads.member)
    scope: dict = field(default_factory=lambda: dict.fromkeys(OPERATORS, "expression"))
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
class PoolSettings:
    """The `pooling` section: how deep each model's run is pooled, which models, and how much
    of a passage a membership read shows."""

    depth: int = 10
    models: tuple[str, ...] = ()
    lead_words: int = 12

    @classmethod
    def from_config(cls, section: dict) -> PoolSettings:
        """From the `pooling` section with `models` resolved to the corpus's model names."""
        return cls(section["depth"], tuple(section["models"]), section["lead_words"])


@dataclass(frozen=True)
class Pair:
    """One question asked of one passage; `key` identifies the row it fills. A judge's P(yes)
    counts as answered at `threshold` (None: the settings' `threshold`)."""

    key: tuple
    question: str
    pid: str
    threshold: float | None = None


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
        return _verdict(result, settings, prompt, llm.model_name, pairs[i].threshold), None

    order = sorted(range(len(pairs)), key=lambda i: (pairs[i].pid, i))
    answers = ask_until_valid(llm, order, request, check) if pairs else {}
    failed = _verdict(None, settings, prompt, llm.model_name)
    return [answers[i].value or failed for i in range(len(pairs))]


def _verdict(result: ChatResult | None, settings: AnswererSettings, prompt: Prompt, model: str,
             threshold: float | None = None):  # fmt: skip
    """The verdict columns of one reply (None: the call failed, nothing is known); a judge's
    P(yes) counts at `threshold` (None: the settings')."""
    columns = {"answer": None, "answered": None, "p_yes": None,
               "prompt_hash": prompt.hash, "model": model}  # fmt: skip
    if result is None:
        return columns
    columns["answer"] = result.content
    if settings.method == "judge":
        probability = p_yes(result)
        columns["p_yes"] = probability
        threshold = settings.threshold if threshold is None else threshold
        columns["answered"] = None if probability is None else probability >= threshold
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


def _and(*values: bool | None) -> bool | None:
    """Three-valued AND: False if any is False, else None if any is unknown."""
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def _not(value: bool | None) -> bool | None:
    return None if value is None else not value


def _or(*values: bool | None) -> bool | None:
    """Three-valued OR: True if any is True, else None if any is unknown."""
    if any(v is True for v in values):
        return True
    return None if any(v is None for v in values) else False


class Reads:
    """The judge's reads of one job, each asked once: a question with a passage (`read`),
    whether a passage is of a kind (`member`, with the passage's title and first words) and
    whether its subject's name is (`named`, with the same lead or the whole passage). Keys are
    registered first, then asked in one batch ordered by passage (`run`)."""

    def __init__(self, texts: dict[str, str], titles: dict[str, str | None],
                 membership: str, settings: AnswererSettings, lead_words: int,
                 named: str | None = None, about: str | None = None):  # fmt: skip
        self.texts, self.titles = texts, titles
        self.membership, self.settings, self.lead_words = membership, settings, lead_words
        self.named_template, self.about_template = named, about
        self.pairs: dict[tuple, Pair] = {}
        self.passages: dict[str, str] = {}
        self.verdicts: dict[tuple, dict] = {}

    def read(self, question: str, pid: str) -> tuple:
        key = ("read", question, pid)
        if key not in self.verdicts and key not in self.pairs:
            self.passages[pid] = self.texts[pid]
            self.pairs[key] = Pair(key, question, pid)
        return key

    def member(self, kind: str, pid: str) -> tuple:
        key = ("member", kind, pid)
        if key not in self.verdicts and key not in self.pairs:
            # Stricter than the judge's other reads: at its threshold the 1.5B takes what is
            # related to a kind for one of it ("Dracula" among novelists, "Enzyme" among
            # biological processes).
            self.pairs[key] = Pair(key, self.membership.format(kind=kind), self._lead(pid),
                                   self.settings.membership_threshold)  # fmt: skip
        return key

    def named(self, subject: str, kind_singular: str, pid: str, whole: bool = False) -> tuple:
        """Is the passage's subject, by its name, of the kind ("Is Cleopatra a kingdom?"),
        read with its lead (`whole`: with the whole passage): a passage about a kind's world
        (a queen of a kingdom, a poet of literary works, one paragraph of a news story about a
        drought) reads as about one of the kind, its subject does not. As strict as a
        membership read."""
        key = ("named", subject, kind_singular, pid, whole)
        if key not in self.verdicts and key not in self.pairs:
            question = self.named_template.format(
                subject=as_named(subject, self.texts[pid]),
                a_kind_singular=with_article(kind_singular),
            )
            if whole:
                self.passages[pid] = self.texts[pid]
            self.pairs[key] = Pair(key, question, pid if whole else self._lead(pid),
                                   self.settings.membership_threshold)  # fmt: skip
        return key

    def about(self, topic: str, pid: str) -> tuple:
        """Is the whole passage, with its title, about a story's topic ("Is this paragraph
        about the drought in Kenya?"): a story's paragraphs do not say so in their first
        words, and many not at all ("The coach praised his players"), which the title (the
        headline of the article they are part of) tells. As strict as a membership read: with
        the title the 1.5B's P(yes) runs high (docs/results.md, "Story groups on a second
        held-out news collection")."""
        key = ("about", topic, pid)
        if key not in self.verdicts and key not in self.pairs:
            self.pairs[key] = Pair(key, self.about_template.format(topic=topic),
                                   self._titled(pid, self.texts[pid], "titled"),
                                   self.settings.membership_threshold)  # fmt: skip
        return key

    def _lead(self, pid: str) -> str:
        """The key of a passage's title and first words: what the passage is about."""
        return self._titled(pid, shorten(self.texts[pid], self.lead_words), "lead")

    def _titled(self, pid: str, text: str, name: str) -> str:
        """The key of `text` of a passage after its title (when it has one)."""
        key, title = f"{name}|{pid}", self.titles.get(pid)
        self.passages[key] = f"{title}: {text}" if isinstance(title, str) and title else text
        return key

    def run(self, llm: LLMClient, prompt: Prompt) -> None:
        """Ask every registered pair not asked yet."""
        pairs = list(self.pairs.values())
        verdicts = ask(pairs, self.passages, llm, prompt, self.settings) if pairs else []
        self.verdicts |= {pair.key: verdict for pair, verdict in zip(pairs, verdicts, strict=True)}
        self.pairs = {}

    def answered(self, key: tuple) -> bool | None:
        return self.verdicts[key]["answered"]

    def verdict(self, key: tuple) -> dict:
        return self.verdicts[key]


def member_judge(params: dict | None, seed: int) -> dict | None:
    """The judge of a kinds job's membership reads, from its params (None: not verified)."""
    if params is None:
        return None
    settings = AnswererSettings.from_config(params["answerer"], params["max_passage_words"],
                                            seed)  # fmt: skip
    return {"prompt": params["prompt"], "answerer": settings,
            "membership": params["membership"], "named": params["named"],
            "lead_words": params["lead_words"], "about": params.get("about")}  # fmt: skip


def verify_members(
    kinds: pd.DataFrame,
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: AnswererSettings,
    membership: str,
    lead_words: int,
    named: str | None = None,
    subjects: dict[str, str | None] | None = None,
) -> pd.DataFrame:
    """The kinds with the members the judge reads as of the kind: every candidate of a group
    with a kind is asked (a membership read, as the judge asks it later, so its answer is
    cached), then, with `named` and `subjects` (pid -> its subject), whether each one read so
    is, by its name, one of the kind ("Is D. H. Lawrence a literary work?"); a kind keeps its
    question with at least two members, else it is dropped
    (fewer_than_two_members_of_the_kind). The LLM that names a kind often counts in passages
    that are not of it ("constellations" for a star); every question built on them would fail."""
    kinds = kinds.copy()
    texts = dict(zip(candidates["pid"], candidates["text"], strict=True))
    titles = dict(zip(candidates["pid"], candidates["title"], strict=True))
    reads = Reads(texts, titles, membership, settings, lead_words, named)
    asked = {}
    for i, row in kinds.iterrows():
        if row["status"] != "dropped":
            group = candidates[candidates["group"] == row["group"]]
            asked[i] = [(int(s), pid, reads.member(row["kind"], pid))
                        for s, pid in zip(group["slot"], group["pid"], strict=True)]  # fmt: skip
    reads.run(llm, prompt)
    by_name = {}
    if named is not None and subjects is not None:
        for i, keys in asked.items():
            singular = kinds.at[i, "kind_singular"]
            for _, pid, key in keys:
                if reads.answered(key) is True and subjects.get(pid):
                    by_name[pid] = reads.named(subjects[pid], singular, pid)
        reads.run(llm, prompt)
    for i, keys in asked.items():
        members = [slot for slot, pid, key in keys if reads.answered(key) is True
                   and (pid not in by_name or reads.answered(by_name[pid]) is True)]  # fmt: skip
        kinds.at[i, "members"] = members
        kinds.at[i, "sorts"] = [""] * len(members)  # named later (member_sorts)
        kinds.at[i, "places"] = [""] * len(members)
        if len(members) < 2:
            kinds.loc[i, ["question", "source", "status", "reason"]] = [
                None,
                None,
                "dropped",
                "fewer_than_two_members_of_the_kind",
            ]
    log.info(
        "kinds: %d of %d groups keep at least two members the judge reads as of the kind "
        "(%d of %d names read as of it)",
        int((kinds["status"] != "dropped").sum()),
        len(kinds),
        sum(reads.answered(key) is True for key in by_name.values()),
        len(by_name),
    )
    return kinds


def verify_story_members(
    kinds: pd.DataFrame,
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: AnswererSettings,
    about: str,
) -> pd.DataFrame:
    """Story groups (stories.py) with the members the judge reads as about the story (the
    `about` read, as the judge asks it later, so its answer is cached); a story keeps at least
    two (else fewer_than_two_about_the_story). A paragraph the judge does not read as about
    the story even with its headline (a background paragraph, a detail of another story)
    answers no question about it, and as a NOT positive it fails the filter."""
    kinds = kinds.copy()
    texts = dict(zip(candidates["pid"], candidates["text"], strict=True))
    titles = dict(zip(candidates["pid"], candidates["title"], strict=True))
    reads = Reads(texts, titles, "", settings, 0, about=about)
    asked = {}
    for i, row in kinds.iterrows():
        if row["status"] != "dropped":
            pid = candidates[candidates["group"] == row["group"]].set_index("slot")["pid"]
            members = zip(row["members"], row["subjects"], strict=True)
            asked[i] = [(int(s), subject, reads.about(row["kind"], pid[int(s)]))
                        for s, subject in members]  # fmt: skip
    reads.run(llm, prompt)
    for i, keys in asked.items():
        kept = [(slot, subject) for slot, subject, key in keys if reads.answered(key) is True]
        kinds.at[i, "members"] = [slot for slot, _ in kept]
        kinds.at[i, "subjects"] = [subject for _, subject in kept]
        kinds.at[i, "sorts"] = kinds.at[i, "places"] = [""] * len(kept)
        if len(kept) < 2:
            kinds.loc[i, ["question", "source", "status", "reason"]] = [
                None, None, "dropped", "fewer_than_two_about_the_story"]  # fmt: skip
    log.info(
        "stories: %d of %d groups keep at least two members the judge reads as about the "
        "story (%d of %d members)",
        int((kinds["status"] != "dropped").sum()), len(kinds),
        sum(reads.answered(k) is True for keys in asked.values() for *_, k in keys),
        sum(len(keys) for keys in asked.values()),
    )  # fmt: skip
    return kinds


@dataclass(frozen=True)
class Construction:
    """What the judge knows of the written questions: simple questions by qid, each group's
    kind, each passage's title, and the groups whose members are named by their titles."""

    simple: dict[str, dict]
    kinds: dict[int, dict]
    titles: dict[str, str | None]
    titled: frozenset[int] = frozenset()

    def or_kinds(self, question, text: str) -> list[str]:
        """The sorts of an OR question (its operands) that `text` names, by their stems
        ("a conifer" names "coniferous"), each as a kind ("Hindu festivals"): what a passage
        is read with. A passage that names neither sort cannot state that it is of either.
        None for another type."""
        if question.type != "OR":
            return []
        sorts = sorts_of(question.operand_qids)
        return [sort_kind(sort, self.kind(question)) for sort in sorts
                if names_by_stems(text, sort_name(sort))]  # fmt: skip

    def kind(self, question) -> str | None:
        row = self.kinds.get(int(question.group))
        return row["kind"] if row else None

    def topic(self, question) -> str | None:
        """The topic of a story group's question (stories.py), else None."""
        row = self.kinds.get(int(question.group))
        return row["kind"] if row and is_story(row) else None

    def story_operands(self, question) -> list[dict]:
        """The members' questions a story question is read with: AND's and NOT's member (the
        aspect asked for or excluded), OR's two."""
        first = 0 if question.type == "OR" else 1
        return [s for i in range(first, len(question.operand_qids))
                if (s := self.operand(question, i))]  # fmt: skip

    def kind_singular(self, question) -> str | None:
        row = self.kinds.get(int(question.group))
        return row["kind_singular"] if row else None

    def title_name(self, question, title: str | None) -> str | None:
        """A passage's subject as its `title` names it, where the question's group named its
        members by their titles; None where titles name pages or stories, not things."""
        if int(question.group) in self.titled and isinstance(title, str):
            return subject_of_title(title)
        return None

    def operand(self, question, i: int) -> dict | None:
        qids = list(question.operand_qids)
        return self.simple.get(qids[i]) if i < len(qids) else None

    def answers(self, question) -> list[dict]:
        """The simple questions whose answers answer the question (AND: the positive's)."""
        if question.type == "AND":
            return [s for s in [self.operand(question, 1)] if s]
        return []


def _labelled_reads(question, pid: str, role: str, c: Construction, reads: Reads,
                    scope: str) -> dict:  # fmt: skip
    """Register what the judge reads of one labelled pair; gives the keys by name."""
    if scope == "question":
        return {"question": reads.read(question.question, pid)}
    if topic := c.topic(question):  # the story, and (AND, OR) the aspects asked for
        keys = {"member": reads.about(topic, pid)}
        if question.type != "NOT":
            for i, simple in enumerate(c.story_operands(question)):
                keys[f"simple{i}"] = reads.read(simple["question"], pid)
        return keys
    kind = c.kind(question)
    keys = {"member": reads.member(kind, pid)} if kind else {}
    for i, kind_of_sort in enumerate(c.or_kinds(question, reads.texts[pid])):
        keys[f"sort{i}"] = reads.read(reads.membership.format(kind=kind_of_sort), pid)
    for i, simple in enumerate(c.answers(question)):
        keys[f"simple{i}"] = reads.read(simple["question"], pid)
    return keys


def _labelled_row(question, pid: str, role: str, keys: dict, reads: Reads, scope: str,
                  prompt: Prompt, model: str) -> dict:  # fmt: skip
    """A row of answers.parquet: the pair's verdict under the question's construction."""
    row = {"qid": question.qid, "type": question.type, "pid": pid, "role": role, "scope": scope,
           "answer": None, "answered": None, "member": None, "p_yes": None,
           "prompt_hash": prompt.hash, "model": model}  # fmt: skip
    if scope == "question":
        verdict = reads.verdict(keys["question"])
        return row | {k: verdict[k] for k in ("answer", "answered", "p_yes")}
    member = reads.answered(keys["member"]) if "member" in keys else None
    parts = [reads.answered(k) for name, k in keys.items() if name != "member"]
    if "member" in keys and member is None:
        answered = None  # the call failed: nothing is known of this pair
    elif question.type == "NOT":
        answered = _and(member, pid not in set(question.negatives))
    elif question.type == "OR":  # of either sort; naming neither, of neither
        answered = _and(member, _or(*parts))
    else:  # AND: the positive's simple question
        answered = _and(member, _or(*parts)) if parts else None
    return row | {"answered": answered, "member": member}


def filter_and_check(
    written: pd.DataFrame,
    simple: pd.DataFrame,
    kinds: pd.DataFrame,
    candidates: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: AnswererSettings,
    reads: Reads,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(answers, check): the judge's reading of every labelled pair of the written questions,
    and its check on the simple questions, in one batch (a passage's prompt is cached for
    all the questions asked of it)."""
    c = construction(simple, kinds, candidates)
    scope_of = {kind: settings.scope[kind.lower()] for kind in TYPES}
    check = check_pairs(simple, candidates, settings.seed)
    check_keys = [(pair.key, reads.read(pair.question, pair.pid)) for pair in check]
    pairs = []
    for row in written.itertuples():
        for role, pids in (("positive", row.positives), ("negative", row.negatives)):
            for pid in pids:
                keys = _labelled_reads(row, pid, role, c, reads, scope_of[row.type])
                pairs.append((row, pid, role, keys))
    reads.run(llm, prompt)
    check_frame = pd.DataFrame(
        [dict(zip(("qid", "group", "pid", "relation"), key[1:], strict=True))
         | {k: reads.verdict(read)[k] for k in ("answer", "answered", "p_yes", "prompt_hash",
                                                 "model")}
         for key, read in check_keys],
        columns=CHECK_SCHEMA.names,
    )  # fmt: skip
    answers = pd.DataFrame(
        [_labelled_row(row, pid, role, keys, reads, scope_of[row.type], prompt, llm.model_name)
         for row, pid, role, keys in pairs],
        columns=ANSWERS_SCHEMA.names,
    )  # fmt: skip
    if len(answers):
        rates = answers.groupby("role")["answered"].mean()
        log.info(
            "answered: %.0f%% of positive pairs, %.0f%% of negative pairs",
            100 * rates.get("positive", float("nan")),
            100 * rates.get("negative", float("nan")),
        )
    log.info("answerer check: %s", check_rates(check_frame))
    return answers, check_frame


def construction(simple: pd.DataFrame, kinds: pd.DataFrame, candidates: pd.DataFrame):
    """The Construction of a job's groups."""
    return Construction(
        {r["qid"]: r for r in simple.to_dict("records") if r["status"] != "dropped"},
        {int(r["group"]): r for r in kinds.to_dict("records") if r["status"] != "dropped"},
        dict(zip(candidates["pid"], candidates["title"], strict=True)),
        frozenset(int(g) for g, group in candidates.groupby("group") if usable_titles(group)),
    )


# ---------------------------------------------------------------------------------------------
# Pooling: judging what the models retrieve beyond the group's labels


def pools(questions: pd.DataFrame, runs: dict[str, pd.DataFrame], depth: int) -> pd.DataFrame:
    """(qid, pid, rank): every pooled model's top `depth` passages of each question that are
    not labelled already, with their best rank."""
    labelled = {(q, p) for q, ps, ns in zip(questions["qid"], questions["positives"],
                                             questions["negatives"], strict=True)
                for p in [*ps, *ns]}  # fmt: skip
    wanted = set(questions["qid"])
    tops = [run[run["qid"].isin(wanted) & (run["rank"] <= depth)][["qid", "pid", "rank"]]
            for run in runs.values()]  # fmt: skip
    if not tops or depth == 0:
        return pd.DataFrame({"qid": pd.Series(dtype=str), "pid": pd.Series(dtype=str),
                             "rank": pd.Series(dtype="int32")})  # fmt: skip
    pooled = pd.concat(tops).groupby(["qid", "pid"], as_index=False)["rank"].min()
    # a boolean array: an empty list would select no columns
    keep = np.array([(q, p) not in labelled for q, p in zip(pooled["qid"], pooled["pid"],
                                                            strict=True)], dtype=bool)  # fmt: skip
    return pooled[keep].sort_values(["qid", "rank", "pid"]).reset_index(drop=True)


def names_one_of(text: str, subjects: list[str]) -> bool:
    """True when `text` names one of `subjects` by its last name word (the last capitalised
    word of three letters or more: "Shelley" names "Percy Bysshe Shelley"; "Percy" does not),
    or, without one, by all its words."""
    have = words(text)
    for subject in subjects:
        if not subject:
            continue
        names = re.findall(r"\b[A-Z][\w'-]{2,}", subject)
        wanted = words(names[-1]) if names else words(subject)
        n = len(wanted)
        if n and any(have[i : i + n] == wanted for i in range(len(have) - n + 1)):
            return True
    return False


def same_subject(title: str | None, subject: str) -> bool:
    """True when a passage's title names `subject` (a NOT question's excluded thing)."""
    if not isinstance(title, str):
        return False
    return words(subject_of_title(title)) == words(subject)


def judge_pools(
    kept: pd.DataFrame,
    pooled: pd.DataFrame,
    c: Construction,
    reads: Reads,
    llm: LLMClient,
    prompt: Prompt,
    settings: AnswererSettings,
) -> pd.DataFrame:
    """The pooled passages of the kept questions, judged (POOLED_SCHEMA)."""
    by_qid = {row.qid: row for row in kept.itertuples()}
    plans, named_by = [], {}
    for qid, pid, rank in pooled[["qid", "pid", "rank"]].itertuples(index=False):
        question = by_qid[qid]
        scope = settings.scope[question.type.lower()]
        if scope == "question":
            plans.append((question, pid, rank, "read", [reads.read(question.question, pid)]))
        elif topic := c.topic(question):  # about the story, and of an aspect asked for
            keys = [reads.about(topic, pid)]
            keys += [reads.read(s["question"], pid) for s in c.story_operands(question)]
            plans.append((question, pid, rank, "story", keys))
        elif question.type == "NOT":
            excluded = c.operand(question, 1) or {}
            if same_subject(reads.titles.get(pid), excluded.get("subject") or ""):
                plans.append((question, pid, rank, "excluded", []))
            else:
                plans.append((question, pid, rank, "membership",
                              [reads.member(c.kind(question), pid)]))  # fmt: skip
        elif question.type == "OR":
            keys = [reads.read(reads.membership.format(kind=kind), pid)
                    for kind in c.or_kinds(question, reads.texts[pid])]  # fmt: skip
            plans.append((question, pid, rank, "read" if keys else "name_gate", keys))
            # ... and by its name one of the kind ("Is the Magellan expedition an explorer?",
            # "Is Grigori Rasputin an emperor?"), read after the sorts with the same passage
            name = c.title_name(question, reads.titles.get(pid)) if keys else None
            if name and reads.named_template:
                named_by[(question.qid, pid)] = reads.named(name, c.kind_singular(question), pid,
                                                            whole=True)  # fmt: skip
        else:
            named = [s for s in c.answers(question)
                     if names_one_of(reads.texts[pid], [s["subject"]])]  # fmt: skip
            keys = [reads.read(s["question"], pid) for s in named]
            plans.append((question, pid, rank, "read" if keys else "name_gate", keys))
    reads.run(llm, prompt)
    rows = []
    for question, pid, rank, method, keys in plans:
        verdicts = [reads.verdict(k) for k in keys]
        relevant = _or(*(reads.answered(k) for k in keys)) if keys else False
        if method == "story":
            about, *aspects = (reads.answered(k) for k in keys)
            # NOT: about the story, not of the excluded aspect; AND, OR: of one asked for
            of_aspect = _or(*aspects) if aspects else None
            relevant = _and(about, _not(of_aspect) if question.type == "NOT" else of_aspect)
        if (question.qid, pid) in named_by:
            relevant = _and(relevant, reads.answered(named_by[(question.qid, pid)]))
        scores = [v["p_yes"] for v in verdicts if v["p_yes"] is not None]
        rows.append(
            {"qid": question.qid, "type": question.type, "pid": pid, "rank": int(rank),
             "relevant": relevant, "method": method, "p_yes": max(scores) if scores else None,
             "prompt_hash": prompt.hash, "model": llm.model_name}
        )  # fmt: skip
    frame = pd.DataFrame(rows, columns=POOLED_SCHEMA.names)
    log.info(
        "pooled: %d passages of %d questions, %d judged relevant (%s)",
        len(frame), frame["qid"].nunique(), int(frame["relevant"].fillna(False).sum()),
        {m: int(n) for m, n in frame["method"].value_counts().items()},
    )  # fmt: skip
    return frame


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


def outside_kind(answers: pd.DataFrame) -> pd.Series:
    """The labelled pairs the judge read as not of the group's kind where the construction can
    do without them: NOT positives (not members of the set) and AND negatives (they would meet
    neither condition). They leave the group labels, judged not relevant, instead of failing
    their question."""
    removable = ((answers["type"] == "NOT") & (answers["role"] == "positive")) | (
        (answers["type"] == "AND") & (answers["role"] == "negative")
    )
    return answers["member"].eq(False) & removable


def met_constraint(answers: pd.DataFrame) -> pd.Series:
    """The AND negatives (of the kind) the judge read as meeting the constraint too, in the
    questions where they are no more than the negatives it refused. They leave the group
    labels unjudged, and the question stays: its constraint still singles the positive out of
    most of its set. The judge and the construction disagree on such a passage and, read by
    hand, the construction is mostly right ("Which sultan ruled the Ottoman Empire twice ...?"
    read as answered by Mehmed IV's passage), so it is not labelled relevant either; it is
    not pooled (pooling would ask the same read again). Where they outnumber the refused ones,
    or none is refused, the constraint is not one only the positive meets and the question
    fails (`negative_answered`). Failing the question at one such read, as before, lost a
    third of the AND questions, mostly to one sibling read as answering."""
    negatives = (
        (answers["type"] == "AND") & (answers["role"] == "negative") & ~outside_kind(answers)
    )
    met = negatives & answers["answered"].eq(True)
    refused = negatives & answers["answered"].eq(False)
    n_met = met.groupby(answers["qid"]).transform("sum")
    n_refused = refused.groupby(answers["qid"]).transform("sum")
    return met & (n_refused > 0) & (n_met <= n_refused)


def verdicts(answers: pd.DataFrame) -> pd.DataFrame:
    """Per qid: passes_default, passes_strict and filter_reason (why it fails strict, if so),
    over the pairs that stay labelled (outside_kind, met_constraint). Strict also needs every
    negative refused and a NOT question's excluded passage of the kind (it excludes a member of
    its set)."""
    kept = answers[~outside_kind(answers) & ~met_constraint(answers)]
    rows = []
    for qid, pairs in answers.groupby("qid", sort=True):
        positives = kept[(kept["qid"] == qid) & (kept["role"] == "positive")]
        negatives = kept[(kept["qid"] == qid) & (kept["role"] == "negative")]
        passes_default = False
        if positives.empty:
            reason = "no_member_of_the_kind"
        elif positives["answered"].isna().any():
            reason = "answerer_failed"
        elif not positives["answered"].all():
            reason = "positive_unanswered"
        else:
            passes_default = True
            if negatives["answered"].isna().any():
                reason = "answerer_failed"
            elif negatives["member"].eq(False).any() and pairs["type"].iloc[0] == "NOT":
                reason = "excluded_not_of_kind"
            elif negatives["answered"].any():
                reason = "negative_answered"
            else:
                reason = None
        rows.append((qid, passes_default, reason is None, reason))
    return pd.DataFrame(rows, columns=["qid", "passes_default", "passes_strict", "filter_reason"])
