"""AND / OR / NOT questions with their positive and negative passages (paper section 4.3), built
on a group's kind and its members' simple questions ("Which <kind> <predicate>?").

- AND: the disjunctive question plus a constraint only the positive meets: "Which <kind>
  <predicate of the positive>?". Positive: that member; negatives: the other members, which
  answer the disjunctive part (they are of the kind) but not the constraint.
- OR: two alternatives at the same level in one question: "or" widens the kind over two sorts
  of it, "What are some <sort a> or <sort b> <kind>?" ("What are some Hindu or Christian
  festivals?"; forms vary). Positives: the members of either sort; negatives: the members of
  another sort, where the sorts are proper values or places. Two quiz predicates joined with
  "or" ("Which festival begins the Ten Days of Repentance or is celebrated in Kartika?"), or
  two members named side by side with one thing asked of each ("What is Diwali or Easter
  known for?"), read as two questions to annotators. Groups of one kind (three groups of
  "poets") are one set for OR: a group pairs its sorts with those of the groups of its kind
  before it ("What are some American or Chinese poets?"), and every question is labelled
  from all of them (asked per group alone, "Chinese or French poets" would be labelled from
  one group only).
- NOT: the disjunctive question with an exclusion: "Which <kind> are there besides
  <subject>?" (forms vary). Negative: the excluded member; positives: the other members (of
  every group of its set: the other groups of one kind).
Each group gives up to `per_group` questions of each type (one number, or one per type; another
positive, pair or excluded member each). The question is one of the operator's template forms,
drawn with the group's seed; with compose mode llm the LLM rewrites it (checked like any LLM
output: it must keep what the construction says, and not name an answer), and the form stays
the fallback.

Artifact questions/{and,or,not}.parquet: qid ("and-00012-0": type, group, number), type, group,
cluster, QUESTION_COLUMNS, operator, operand_qids and operand_texts (the recorded Boolean
expression: AND disjunctive and the positive's simple question; OR the kind question of each
sort, "disj-00012/Hindu": "What are some Hindu festivals?"; NOT disjunctive and the excluded
member's simple question), positives, negatives (list<string> of pids), split (every group of
one kind in one). A group that gives no question of a type has one dropped row saying why.
Random choices use a generator seeded by (seed, group, operator), and a group reads only the
groups of its kind before it, so what is asked is stable as the run grows (a later group of
the kind widens the labels only).
"""

from __future__ import annotations

import hashlib
import itertools
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from boolbench.generation.grammar import as_named
from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import (
    PLACE_SORT,
    QUESTION_FIELDS,
    GenerationSettings,
    Item,
    Outcome,
    check_item,
    disjunctive_qid,
    generate,
    log_outcomes,
    outcome_columns,
    shorten,
    sort_kind,
    sort_name,
    sort_qid,
)
from boolbench.generation.stories import is_story
from boolbench.generation.validation import content_words, mentions, names_by_stems, stems, words
from boolbench.llm import LLMClient

_LIST = pa.list_(pa.string())
COMPOSED_SCHEMA = pa.schema(
    [("qid", pa.string()), ("type", pa.string()), ("group", pa.int64()), ("cluster", pa.int64()),
     *QUESTION_FIELDS, ("operator", pa.string()), ("operand_qids", _LIST),
     ("operand_texts", _LIST), ("positives", _LIST), ("negatives", _LIST),
     ("split", pa.string()), ("construction", pa.string())]
)  # fmt: skip
_OPERATOR_CODE = {"AND": 1, "OR": 2, "NOT": 3, "OR place": 4}
SLOT_STRIDE = 1000  # a slot in a set of groups (`merged`): the group's index times this + slot
KEEP_SHARE = 0.5  # of a predicate's content words an LLM rewrite must keep


@dataclass
class Plan:
    """One composed question before its text is settled: its labels, its expression and the
    template's question (`draft`); `item` asks the LLM to rewrite it (compose mode llm)."""

    qid: str
    type: str
    group: int
    cluster: int
    positives: list[str]
    negatives: list[str]
    operand_qids: list[str]
    operand_texts: list[str | None]
    draft: str | None = None
    item: Item | None = None
    reason: str | None = None  # why there is no question (no draft)
    answers: tuple[str, ...] = ()  # subjects the question must not name
    excluded: str | None = None  # NOT: the subject it excludes
    checks: tuple = field(default=())


@dataclass(frozen=True)
class Group:
    """What composition reads of one group (or of a set of groups of one kind, `merged`): its
    candidates (by slot), its kind row and its members' simple questions (by slot)."""

    group: int
    cluster: int
    candidates: pd.DataFrame
    kind: dict | None
    simple: dict[int, dict]
    origin: dict[int, int] | None = None  # a set of groups (`merged`): each slot's group

    def home(self, slot: int) -> int:
        """The group a member comes from."""
        return self.origin[slot] if self.origin else self.group

    @property
    def members(self) -> list[int]:
        """The kind's members, one passage per subject: a second passage of the same thing (two
        paragraphs of one article, both titled by it) is no second member of the set, and as a
        label it would contradict the first (a NOT question's positive about the excluded
        thing, an AND negative that meets the constraint). It is left unlabelled."""
        seen: set[str] = set()
        members = []
        for slot in self._listed():
            key = self.subject(slot).casefold().strip()
            if key not in seen:
                members.append(slot)
            if key:
                seen.add(key)
        return members

    def _listed(self) -> list[int]:
        """The members the kinds job found, in its order (that of `sorts`)."""
        return [int(s) for s in self.kind["members"]] if self.kind else []

    @property
    def story(self) -> bool:
        """A story group (stories.py): its kind is a topic, its members' subjects aspects."""
        return self.kind is not None and is_story(self.kind)

    def no_set(self) -> str | None:
        """Why the group gives no question of its kind, or None: no kind, or members that are
        all one thing (passages of one article)."""
        if self.kind is None:
            return "no_kind"
        return "members_are_one_thing" if len(self.members) < 2 else None

    def pid(self, slot: int) -> str:
        return self.candidates.loc[self.candidates["slot"] == slot, "pid"].iloc[0]

    def asked(self) -> list[int]:
        """Members whose simple question was written (usable as AND/OR operands)."""
        return [s for s in self.members if _ok(self.simple.get(s))]

    def texts(self) -> tuple[str, ...]:
        return tuple(self.candidates["text"])

    def sorts(self) -> dict[int, str]:
        """Each member's sort of the kind ("" where it has none)."""
        return self._of_members("sorts")

    def places(self) -> dict[int, str]:
        """Each member's place ("" where it has none, or the kinds job named none)."""
        return self._of_members("places")

    def _of_members(self, column: str) -> dict[int, str]:
        """A column of the kinds table aligned with its members, by member slot."""
        listed = dict(zip(self._listed(), self._of_listed(column), strict=True))
        return {s: listed[s] for s in self.members}

    def _of_listed(self, column: str) -> list[str]:
        """A column of the kinds table aligned with `_listed` ("" where it is shorter)."""
        values = self.kind.get(column) if self.kind else None
        values = [] if values is None else list(values)
        return [values[i] if i < len(values) else "" for i in range(len(self._listed()))]

    def of_sort(self, sort: str) -> str:
        """The kind question asked of one sort: "What are some Hindu festivals?", "What are
        some cities in Vietnam?"."""
        kind = self.kind["kind"]
        return self.kind["question"].replace(kind, sort_kind(sort, kind), 1)

    def names_either(self, slot: int, *sorts: str) -> bool:
        """True when a member's passage names one of `sorts` by its stems ("an Ottoman
        military leader", "a conifer" for "coniferous"): whether it is of that sort too, only
        a reading can say."""
        text = self.candidates.loc[self.candidates["slot"] == slot, "text"].iloc[0]
        return any(names_by_stems(text, sort_name(sort)) for sort in sorts)

    def subject(self, slot: int) -> str:
        """A member's subject as its simple question names it ("" where it has none)."""
        subject = (self.simple.get(slot) or {}).get("subject")
        return subject if isinstance(subject, str) else ""

    def name(self, slot: int) -> str:
        """A member's subject as a question names it ("the Yellow River", "active transport")."""
        text = self.candidates.loc[self.candidates["slot"] == slot, "text"].iloc[0]
        return as_named(self.simple[slot]["subject"], text)


def _ok(row) -> bool:
    return row is not None and row["status"] != "dropped"


def _rng(seed: int, group: int, operator: str) -> np.random.Generator:
    return np.random.default_rng([seed, group, _OPERATOR_CODE[operator]])


def _form(forms: list[str], rng: np.random.Generator) -> str:
    return forms[int(rng.integers(len(forms)))]


def _none(operator: str, g: Group, reason: str) -> list[Plan]:
    return [Plan(f"{operator.lower()}-{g.group:05d}-0", operator, g.group, g.cluster, [], [], [],
                 [], reason=reason)]  # fmt: skip


def plan_and(g: Group, forms: list[str], settings: GenerationSettings) -> list[Plan]:
    """AND: each chosen member is the positive of "Which <kind> <its predicate>?"; the other
    members are its negatives (of the kind, without the constraint)."""
    if reason := g.no_set():
        return _none("AND", g, reason)
    rng = _rng(settings.seed, g.group, "AND")
    asked = g.asked()
    if not asked:
        return _none("AND", g, "no_simple_question")
    plans = []
    for k, slot in enumerate(rng.permutation(asked)[: settings.cap("AND")]):
        simple = g.simple[int(slot)]
        values = {"kind": g.kind["kind"], "kind_singular": g.kind["kind_singular"],
                  "predicate": simple["predicate"]}  # fmt: skip
        plans.append(
            Plan(
                f"and-{g.group:05d}-{k}", "AND", g.group, g.cluster,
                positives=[g.pid(int(slot))],
                negatives=[g.pid(s) for s in g.members if s != slot],
                operand_qids=[disjunctive_qid(g.group), simple["qid"]],
                operand_texts=[g.kind["question"], simple["question"]],
                draft=_form(forms, rng).format(**values),
                answers=(simple["subject"],),
                checks=(_keeps(simple["predicate"], "drops_the_constraint"),),
            )
        )  # fmt: skip
    return plans


def plan_or(
    g: Group,
    forms: list[str],
    settings: GenerationSettings,
    place_forms: list[str] = (),
    kin: list[Group] = (),
) -> list[Plan]:
    """OR: "or" widens the kind over two of its members' sorts, "What are some Hindu or
    Christian festivals?" (two values of one attribute at the same level, as a person asks;
    naming two members and asking about each reads as two questions). Positives: the members
    of either sort; negatives: the members of another sort, sharing no word (or stem) with
    either (a "Greek" mathematician may well be an "Ancient Greek" one), whose passage names
    neither (none when the group has two sorts only), and only where the two are proper
    values ("Hindu", "Christian"; two places), which exclude one another: two common sorts are
    often two properties ("standardized or tonal languages"), and a member of a third may have
    either unsaid (Burmese, tonal; Malay, standardized: both read as answers by blind
    annotators, docs/results.md). A member without a sort, or of another sort but naming
    one of the two, is left unlabelled (pooling judges it when a model retrieves it). A sort
    that is part of a member's name ("Ptolemaic", "Ptolemaic Kingdom") is no sort of the set;
    only two sorts of one attribute are paired (`_comparable`).
    The sorts stand before the kind ("Which red giant or binary stars are there?"): after it
    ("Which stars are red giant or binary?") a sort that is a noun reads ungrammatical.
    Two places the members are in come first, from `place_forms` ("What are some mountains in
    North America or in Africa?"; the operands' sorts are "in North America", ...): a place
    is checked against the passage's first sentence, a sort is any word or two the LLM chose
    ("vast or rugged mountains").
    `kin`: the groups of `g`'s kind (`same_kind`, by number, `g` among them). Their sorts
    pair across groups ("What are some American or Chinese poets?"), each pair asked by the
    first group that has both of its values: `g` pairs its own sorts with its own and with
    those of the groups before it, so what a group asks does not change as later groups of the
    kind join. Every question is labelled from all of them (asked per group alone, "Chinese
    or French poets" would be labelled from one group only)."""
    if reason := g.no_set():
        return _none("OR", g, reason)
    view, whole, before = g, g, None
    if kin:
        earlier = [k for k in kin if k.group < g.group]
        later = [k for k in kin if k.group > g.group]
        view = merged([g, *earlier]) if earlier else g
        whole = merged([g, *earlier, *later])
        before = merged(earlier) if earlier else None
    plans, reason = _or_plans(view, whole, before, forms, settings, place_forms)
    return plans or _none("OR", g, reason)


def merged(groups: list[Group]) -> Group:
    """Groups of one kind as one group: the first's number, cluster and kind question, every
    group's members (slot: the group's index times SLOT_STRIDE plus its slot), their sorts,
    places and simple questions; `origin` says which group each member comes from."""
    first = groups[0]
    candidates, simple, origin = [], {}, {}
    kind = dict(first.kind, members=[], sorts=[], places=[])
    for i, g in enumerate(groups):
        shift = i * SLOT_STRIDE
        candidates.append(g.candidates.assign(slot=g.candidates["slot"] + shift))
        for column in ("sorts", "places"):
            kind[column] += g._of_listed(column)
        kind["members"] += [int(s) + shift for s in g._listed()]
        simple |= {s + shift: row for s, row in g.simple.items()}
        origin |= {int(s) + shift: g.group for s in g.candidates["slot"]}
    return Group(first.group, first.cluster, pd.concat(candidates, ignore_index=True), kind,
                 simple, origin)  # fmt: skip


def same_kind(
    groups: list[Group], split: dict[int, str] | None = None, sorted_only: bool = False
) -> list[list[Group]]:
    """The sets of two or more groups (by number) whose kinds are the same words ("poets"),
    each group with a set of members (`sorted_only`: and a sort or place named); with `split`
    (group -> its split), of one split only: a question's labelled passages stay within its
    split (split by kind, every group of a kind is in one)."""
    sets: dict[tuple, list[Group]] = {}
    for g in sorted(groups, key=lambda g: g.group):
        named = not sorted_only or any([*g.sorts().values(), *g.places().values()])
        if g.no_set() is None and named:
            key = (_kind_words(g), split[g.group] if split else None)
            sets.setdefault(key, []).append(g)
    return [together for together in sets.values() if len(together) > 1]


def split_key(g: Group, by: str) -> str | int:
    """What decides a group's split (`split.by`): by kind its kind's words ("kind:poets"), so
    that every group of one kind, and a question labelled from all of them, is in one split;
    by group, or for a group without a kind, its number."""
    return f"kind:{_kind_words(g)}" if by == "kind" and g.kind else g.group


def _kind_words(g: Group) -> str:
    """A group's kind as words that groups of one kind share ("Poets " and "poets")."""
    return g.kind["kind"].casefold().strip()


def split_of(key: str | int, seed: int, train_fraction: float) -> str:
    """'train' or 'test' of a split key, stable as the run grows (a new group of a kind joins
    its kind's split)."""
    digest = hashlib.sha256(f"{seed}|split|{key}".encode()).digest()
    return "train" if int.from_bytes(digest[:8], "big") / 2**64 < train_fraction else "test"


def _or_plans(
    view: Group, whole: Group, before: Group | None, forms: list[str],
    settings: GenerationSettings, place_forms: list[str],
) -> tuple[list[Plan], str | None]:  # fmt: skip
    """The OR plans of a group's sort and place pairs, up to `per_group`, drawn with generators
    seeded by its number: pairs of `view` (the group, or it merged with the groups of its kind
    before it; `before`: those, whose pairs they ask), labelled from `whole` (every group of
    its kind). Also why there is none."""
    subjects = tuple(whole.subject(s) for s in whole.members if whole.subject(s))
    kinds = [(Group.sorts, _comparable, forms, "", "OR")]
    if place_forms:  # two places first
        kinds.insert(0, (Group.places, _distinct_places, place_forms, PLACE_SORT, "OR place"))
    choices, reason = [], None
    for values, comparable, templates, prefix, operator in kinds:
        in_view, written, pairs, why = _or_pairs(values(view), subjects, comparable)
        if before is not None:
            asked = set(_or_pairs(values(before), subjects, comparable)[0])
            pairs = [p for p in pairs if not set(p) <= asked]
            why = why or (None if pairs else "pairs_asked_by_an_earlier_group")
        labels = _or_pairs(values(whole), subjects, comparable)[0]
        rng = _rng(settings.seed, view.group, operator)
        # (pair, members by value: of the view, of the whole; values as written, forms,
        # operand prefix, generator)
        choices += [(pairs[int(i)], in_view, labels, written, templates, prefix, rng)
                    for i in rng.permutation(len(pairs))]  # fmt: skip
        reason = why  # the sorts' (the last kind)
    plans = []
    for k, ((a, b), in_view, labels, written, templates, prefix, draw) in enumerate(
        choices[: settings.cap("OR")]
    ):
        first, second = written[a], written[b]
        chosen = set(labels.get(a, [])) | set(labels.get(b, []))
        asked = stems(first) | stems(second)
        exclusive = prefix == PLACE_SORT or _proper(first)
        plans.append(
            Plan(
                f"or-{view.group:05d}-{k}", "OR", view.group, view.cluster,
                positives=[whole.pid(s) for s in whole.members if s in chosen],
                negatives=[whole.pid(s) for value, slots in labels.items()
                           if value not in (a, b) and not stems(value) & asked
                           for s in slots if not whole.names_either(s, first, second)]
                          if exclusive else [],
                operand_qids=[sort_qid(view.home(in_view[a][0]), prefix + first),
                              sort_qid(view.home(in_view[b][0]), prefix + second)],
                operand_texts=[view.of_sort(prefix + first), view.of_sort(prefix + second)],
                draft=_form(templates, draw).format(kind=view.kind["kind"], first=first,
                                                    second=second),
                answers=subjects,  # the question names none of its answers
                checks=(_names(first, "drops_an_alternative"),
                        _names(second, "drops_an_alternative")),
            )
        )  # fmt: skip
    return plans, reason


def _or_pairs(values: dict[int, str], subjects: tuple[str, ...], comparable):
    """(slots by value, each value as written, the comparable pairs, why there is none) of the
    members' sorts or places."""
    by_value: dict[str, list[int]] = {}
    written: dict[str, str] = {}
    for slot, value in values.items():
        # "Ptolemaic" of Cleopatra beside the member "Ptolemaic Kingdom" names that member
        if value and not any(mentions(subject, value) for subject in subjects):
            by_value.setdefault(value.lower(), []).append(slot)
            written.setdefault(value.lower(), value)
    if len(by_value) < 2:
        return by_value, written, [], "fewer_than_two_sorts"
    pairs = [(a, b) for a, b in itertools.combinations(by_value, 2)
             if comparable(written[a], written[b])]  # fmt: skip
    return by_value, written, pairs, None if pairs else "no_comparable_sorts"


def _comparable(first: str, second: str) -> bool:
    """True when two sorts are two values of one attribute, as annotators read them: both
    proper ("Hindu", "Christian") or both common ("deciduous", "evergreen"), sharing no stem
    (`validation.stems`: "evergreen conifer or coniferous trees" overlap), and neither a blend
    of the other's kind (`_blend`). "theoretical or French physicists" mixes a field with a
    nationality; "German-British or German theoretical" overlaps;
    "French or German-British physicists" and "Greek or Greco-Roman mathematicians" pair a
    value with a blend (all four such pairs of the strict OR reading were read as odd by both
    readers, docs/results.md)."""
    return (
        _proper(first) == _proper(second)
        and not stems(first) & stems(second)
        and not _blend(first, second)
        and not _blend(second, first)
    )


def _proper(sort: str) -> bool:
    """True for a proper sort ("Hindu", "French"), False for a common one ("tonal")."""
    return sort[:1].isupper()


_COMPOUND_NAME = re.compile(r"\b[A-Z]\w*(?:[-\u2010-\u2015][A-Z]\w*)+")  # a hyphen or a dash


def _blend(sort: str, other: str) -> bool:
    """True when `sort` joins two names beside `other`: two whole names ("German-American"),
    or a combining form of one of `other`'s ("Greco-Roman" beside "Greek"). A combining form
    alone names one thing: "Tibeto-Burman or Austronesian languages" are two families."""
    others = {w[:3] for w in words(other)}
    for compound in _COMPOUND_NAME.findall(sort):
        parts = re.split(r"[-\u2010-\u2015]", compound)
        if not parts[0].lower().endswith("o") or {p[:3].lower() for p in parts} & others:
            return True
    return False


def _distinct_places(first: str, second: str) -> bool:
    """True when two places share no stem: "Vietnam" and "Thailand"; not "Asia" and
    "Southeast Asia" (one within the other), nor two constellations named in the same words."""
    return not stems(first) & stems(second)


def plan_not(
    g: Group, forms: list[str], settings: GenerationSettings, others: list[tuple] = ()
) -> list[Plan]:
    """NOT: each chosen member is excluded by name from "Which <kind> are there besides
    <subject>?" and is its negative; the other members are its positives, and so are
    `others`, (pid, subject) of the members of the other groups of its set (`same_kind`),
    but for one whose subject names the excluded one ("Fall of the Western Roman Empire"
    beside "Western Roman Empire": part of the excluded thing), which carries no label."""
    if reason := g.no_set():
        return _none("NOT", g, reason)
    rng = _rng(settings.seed, g.group, "NOT")
    named = [s for s in g.members if g.subject(s)]
    if not named:
        return _none("NOT", g, "no_subject")
    plans = []
    for k, slot in enumerate(rng.permutation(named)[: settings.cap("NOT")]):
        excluded = g.simple[int(slot)]
        members = [(g.pid(s), g.subject(s)) for s in g.members if s != slot] + list(others)
        positives = [pid for pid, subject in members
                     if not mentions(subject, excluded["subject"])]  # fmt: skip
        if not positives:  # every other member is part of the excluded thing
            plans.append(Plan(f"not-{g.group:05d}-{k}", "NOT", g.group, g.cluster, [], [], [],
                              [], reason="no_other_member"))  # fmt: skip
            continue
        plans.append(
            Plan(
                f"not-{g.group:05d}-{k}", "NOT", g.group, g.cluster,
                positives=positives,
                negatives=[g.pid(int(slot))],
                operand_qids=[disjunctive_qid(g.group), excluded["qid"]],
                operand_texts=[g.kind["question"], excluded["question"]],
                draft=_form(forms, rng).format(kind=g.kind["kind"], excluded=g.name(int(slot))),
                excluded=excluded["subject"],
                checks=(_names(excluded["subject"], "drops_the_exclusion"),),
            )
        )  # fmt: skip
    return plans


def plan_story(operator: str, g: Group, forms: list[str], settings: GenerationSettings
               ) -> list[Plan]:  # fmt: skip
    """The questions of a story group (stories.py: its kind is the story's topic, its members
    the paragraphs with an aspect of their own, each with a question about the topic that
    names its aspect). AND: the story plus one member's aspect, side by side ("What do
    reports on the drought in Kenya say about maize prices?", `story_and` forms); the member's
    question is its operand, which the judge reads; negatives: the other members, of the story
    without the aspect. OR: two aspects at one level ("What do reports on the drought in Kenya
    say about maize prices or cattle losses?"); positives: the two members, negatives: the
    others. NOT: the story without one aspect ("What is known about the drought in Kenya,
    apart from maize prices?"); negative: that member, positives: the others. A member whose
    question was not written is no operand (the judge reads pooled passages with it) but
    labels the others' questions. Each window is its own story: no sets across groups, even
    of one topic (two windows of one article)."""
    if reason := g.no_set():
        return _none(operator, g, reason)
    asked = [int(s) for s in g.asked()]
    if len(asked) < (2 if operator == "OR" else 1):
        return _none(operator, g, "no_simple_question")
    rng = _rng(settings.seed, g.group, operator)
    if operator == "OR":
        pairs = list(itertools.combinations(asked, 2))
        choices = [pairs[int(i)] for i in rng.permutation(len(pairs))]
    else:
        choices = [(int(s),) for s in rng.permutation(asked)]
    topic, disjunctive = g.kind["kind"], (disjunctive_qid(g.group), g.kind["question"])
    plans = []
    for k, chosen in enumerate(choices[: settings.cap(operator)]):
        simple = [g.simple[s] for s in chosen]
        chosen_pids = [g.pid(s) for s in chosen]
        others = [g.pid(s) for s in g.members if s not in chosen]
        plan = Plan(f"{operator.lower()}-{g.group:05d}-{k}", operator, g.group, g.cluster,
                    positives=chosen_pids if operator != "NOT" else others,
                    negatives=others if operator != "NOT" else chosen_pids,
                    operand_qids=[disjunctive[0], simple[0]["qid"]],
                    operand_texts=[disjunctive[1], simple[0]["question"]])  # fmt: skip
        aspects = [g.subject(s) for s in chosen]
        if operator == "AND":
            plan.draft = _form(forms, rng).format(topic=topic, aspect=aspects[0])
            plan.checks = (_names(aspects[0], "drops_the_constraint"),)
        elif operator == "OR":
            plan.operand_qids = [row["qid"] for row in simple]
            plan.operand_texts = [row["question"] for row in simple]
            plan.draft = _form(forms, rng).format(topic=topic, first=aspects[0],
                                                  second=aspects[1])  # fmt: skip
            plan.checks = tuple(_names(a, "drops_an_alternative") for a in aspects)
        else:
            plan.draft = _form(forms, rng).format(topic=topic, excluded=aspects[0])
            plan.excluded = aspects[0]
            plan.checks = (_names(aspects[0], "drops_the_exclusion"),)
        plans.append(plan)
    return plans


def _keeps(predicate: str, reason: str):
    """A rewrite must keep at least KEEP_SHARE of a predicate's content words."""
    wanted = set(content_words(predicate))

    def check(question: str) -> str | None:
        have = set(content_words(question))
        return reason if wanted and len(wanted & have) < KEEP_SHARE * len(wanted) else None

    return check


def _names(subject: str, reason: str):
    """A question must name its subject: what a NOT question excludes, an OR alternative."""
    return lambda question: None if mentions(question, subject) else reason


def _prompt_values(plan: Plan, g: Group, settings: GenerationSettings) -> dict[str, str]:
    """What the LLM's rewrite prompt of one plan may use (the paper's prompts' fields)."""
    texts = {g.pid(int(s)): shorten(t, settings.max_passage_words)
             for s, t in zip(g.candidates["slot"], g.candidates["text"], strict=True)}  # fmt: skip
    first, second = (plan.operand_texts + [None, None])[:2]
    return {
        "draft": plan.draft,
        "question": g.kind["question"],
        # the group's own labels: those from the other groups of its kind are of the kind
        # too, and a prompt that showed them would change (and be paid again) as groups join
        "positive_paragraphs": "\n\n".join(
            f"[positive] {texts[p]}" for p in plan.positives if p in texts
        ),
        "negative_paragraphs": "\n\n".join(
            f"[negative] {texts[p]}" for p in plan.negatives if p in texts
        ),
        "expression": f'"{first}" {plan.type} "{second}"',
        "first": first or "",
        "second": second or "",
        "excluded": plan.excluded or "",
    }


def compose(
    operator: str,
    candidates: pd.DataFrame,
    simple: pd.DataFrame,
    kinds: pd.DataFrame,
    llm: LLMClient,
    prompt: Prompt,
    settings: GenerationSettings,
    forms: list[str],
    model: str,
    place_forms: list[str] = (),
    planned: set[int] | None = None,
    split_by: str = "kind",
    train_fraction: float = 0.5,
    story_forms: dict[str, list[str]] | None = None,
) -> pd.DataFrame:
    """The `operator` questions of the groups `planned` (None: every group of `candidates`;
    story groups and their kin with `story_forms`, per construction, `plan_story`),
    with labels and split (`train_fraction` of the kinds or groups train, `split_by`,
    `split_key`): the template's question, or (compose mode llm) the LLM's rewrite of it (OR:
    `place_forms` for two places before two sorts). Groups of one kind in one split are one
    set: a group's OR questions pair its sorts with those of the set's groups before it and
    are labelled from all of them, a NOT question's positives are the members of all."""
    simple_by_group: dict[int, dict[int, dict]] = {}
    for row in simple.to_dict("records"):
        simple_by_group.setdefault(int(row["group"]), {})[int(row["slot"])] = row
    kind_by_group = {int(r["group"]): r for r in kinds.to_dict("records") if _ok(r)}
    groups = [
        Group(int(group), int(cands["cluster"].iloc[0]), cands.sort_values("slot"),
              kind_by_group.get(int(group)), simple_by_group.get(int(group), {}))
        for group, cands in candidates.groupby("group", sort=True)
    ]  # fmt: skip
    wanted = {g.group for g in groups} if planned is None else set(planned)
    split = {g.group: split_of(split_key(g, split_by), settings.seed, train_fraction)
             for g in groups}  # fmt: skip
    kin: dict[int, list[Group]] = {}  # OR: the groups of its kind (`plan_or`)
    others: dict[int, list[tuple]] = {}  # NOT: the members of the other groups of its set
    if operator == "OR":
        for together in same_kind(groups, split, sorted_only=True):
            kin |= dict.fromkeys((g.group for g in together), together)
    elif operator == "NOT":
        for together in same_kind(groups, split):
            for g in together:
                others[g.group] = [(o.pid(s), o.subject(s)) for o in together if o is not g
                                   for s in o.members]  # fmt: skip
    planned_by: list[tuple[Plan, Group]] = []
    for g in groups:
        if g.group in wanted:
            if g.story:
                forms_of = (story_forms or {}).get(g.kind["construction"], ())
                plans = plan_story(operator, g, list(forms_of), settings)
            elif operator == "OR":
                plans = plan_or(g, forms, settings, place_forms, kin.get(g.group, []))
            elif operator == "NOT":
                plans = plan_not(g, forms, settings, others.get(g.group, []))
            else:
                plans = plan_and(g, forms, settings)
            planned_by += [(plan, g) for plan in plans]
    for plan, g in planned_by:
        if plan.draft is not None:
            _settle_draft(plan, g, settings)
            if plan.draft is not None and prompt.mode == "llm":
                # an operand of a dropped simple question is null (NaN in a frame)
                operands = tuple(t for t in plan.operand_texts if isinstance(t, str))
                plan.item = Item(plan.qid, _prompt_values(plan, g, settings), g.texts(),
                                 {"draft": plan.draft}, operands, plan.answers,
                                 plan.checks)  # fmt: skip
    plans = [plan for plan, _ in planned_by]
    items = [p.item for p in plans if p.item is not None]
    outcomes = generate(llm, prompt, items, settings, "{draft}") if items else {}
    log_outcomes(operator, outcomes)
    construction = _constructions(candidates, kind_by_group)
    copies = _copies(candidates)
    rows = []
    for plan in plans:
        if plan.item is not None:
            outcome = outcomes[plan.qid]
        elif plan.draft is not None:
            outcome = Outcome(plan.draft, "template", "ok", None, 0)
        else:
            outcome = Outcome(None, None, "dropped", plan.reason, 0)
        rows.append(
            {"qid": plan.qid, "type": plan.type, "group": plan.group, "cluster": plan.cluster,
             **outcome_columns(outcome, prompt, model), "operator": plan.type,
             "operand_qids": plan.operand_qids, "operand_texts": plan.operand_texts,
             "positives": _with_copies(plan.positives, copies),
             "negatives": _with_copies(plan.negatives, copies),
             "split": split[plan.group], "construction": construction[plan.group]}
        )  # fmt: skip
    return pd.DataFrame(rows, columns=COMPOSED_SCHEMA.names)


def _constructions(candidates: pd.DataFrame, kind_by_group: dict[int, dict]) -> dict[int, str]:
    """Each group's construction: its kinds row's, else its candidates' (kind without one)."""
    given = (candidates.groupby("group")["construction"].first().to_dict()
             if "construction" in candidates else {})  # fmt: skip
    return {int(g): kind_by_group.get(int(g), {}).get("construction") or given.get(g, "kind")
            for g in candidates["group"].unique()}  # fmt: skip


def _copies(candidates: pd.DataFrame) -> dict[str, list[str]]:
    """Each candidate's copies in the corpus (candidates.py), where it has some."""
    if "copies" not in candidates:
        return {}
    return {p: list(c) for p, c in zip(candidates["pid"], candidates["copies"], strict=True)
            if c is not None and len(c)}  # fmt: skip


def _with_copies(pids: list[str], copies: dict[str, list[str]]) -> list[str]:
    """`pids` and their copies: a copy of a labelled passage carries its label (a model that
    returns it is not scored as failing, nor as finding a negative less)."""
    return list(pids) + [c for p in pids for c in copies.get(p, []) if c not in pids]


def _settle_draft(plan: Plan, g: Group, settings: GenerationSettings) -> None:
    """The template's question passes the checks of any question (else no question, and why)."""
    probe = Item(plan.qid, {}, g.texts(), forbidden=plan.answers, extra_checks=plan.checks)
    question, reason = check_item(probe, plan.draft, settings.max_words)
    if reason is None:
        plan.draft = question
    else:
        plan.draft, plan.reason = None, f"template {reason}"
