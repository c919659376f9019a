"""Question generation (kinds, simple questions, AND/OR/NOT), the judge (filter, answerer check,
pooling) and the dataset, against a scripted LLM."""

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from boolbench.generation import dataset
from boolbench.generation.compose import compose
from boolbench.generation.filtering import (
    PoolSettings,
    Reads,
    check_rates,
    construction,
    filter_and_check,
    judge_pools,
    met_constraint,
    outside_kind,
    p_yes,
    pools,
    verdicts,
    verify_members,
    verify_story_members,
)
from boolbench.generation.grammar import kind_forms
from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import (
    Kind,
    check_subject,
    kind_questions,
    member_sorts,
    name_subjects,
    parse_kind,
    parse_place,
    parse_sort,
    simple_questions,
    sorts_of,
    with_subjects,
)
from boolbench.generation.steps import judge_step, written_step
from boolbench.generation.stories import parse_aspect, parse_topic, story_kinds, story_questions
from boolbench.generation.validation import check_question
from boolbench.io import write_table_atomic
from boolbench.llm.client import ChatResult
from boolbench.llm.fake_server import FakeOpenAIServer
from tests.scripted_llm import (
    BASE_SEED,
    GROUPS,
    LEAD_WORDS,
    MEMBERSHIP_TEMPLATE,
    NAMED_TEMPLATE,
    TEMPLATES,
    TEST_PROMPTS,
    answerer,
    candidates,
    decomposition,
    keyword,
    prompt,
    scripted,
    scripted_client,
    settings,
    sort_of,
)


@pytest.fixture
def llm(tmp_path):
    with FakeOpenAIServer(responder=scripted) as server:
        yield scripted_client(server, tmp_path)


def compose_prompt(op: str, mode: str) -> Prompt:
    return Prompt(**TEST_PROMPTS[op.lower()], mode=mode)


def generate_all(llm, cands, gen=None, verify=True, mode="template"):
    """(kinds, simple, {operator: composed}) of `cands`; `verify`: the judge confirms members."""
    gen = gen or settings()
    kinds = kind_questions(cands, llm, prompt("kinds"), gen, TEMPLATES["disjunctive"], "m")
    subjects = name_subjects(cands, llm, prompt("subject"), gen)
    if verify:
        kinds = verify_members(kinds, cands, llm, prompt("judge"), answerer(),
                               MEMBERSHIP_TEMPLATE, LEAD_WORDS, NAMED_TEMPLATE,
                               subjects)  # fmt: skip
    kinds = member_sorts(with_subjects(kinds, cands, subjects), cands, llm, prompt("sort"), gen)
    kinds = member_sorts(kinds, cands, llm, prompt("place"), gen, "places")
    simple = simple_questions(cands, kinds, llm, prompt("simple"), gen, "m")
    composed = {
        op: compose(
            op,
            cands,
            simple,
            kinds,
            llm,
            compose_prompt(op, mode),
            gen,
            TEMPLATES[op.lower()],
            "m",
            TEMPLATES["or_place"] if op == "OR" else (),
        )  # fmt: skip
        for op in ("AND", "OR", "NOT")
    }
    return kinds, simple, composed


# ---------------------------------------------------------------------------------------------
# Kinds and simple questions


def test_kinds_and_simple_questions(llm):
    kinds, simple, _ = generate_all(llm, candidates())
    kind = kinds.set_index("group")
    assert (kind.loc[0, "qid"], kind.loc[0, "question"]) == ("disj-00000", "What are some records?")
    assert (kind.loc[0, "kind"], kind.loc[0, "kind_singular"]) == ("records", "record")
    assert list(kind.loc[0, "members"]) == [0, 1, 2]
    # Mute: named a member, but the judge reads it as not of the kind
    assert list(kind.loc[4, "members"]) == [0, 2] and kind.loc[4, "status"] == "ok"
    # Oddity is never of the kind: one member only, under every seed
    assert (kind.loc[5, "status"], kind.loc[5, "reason"], kind.loc[5, "attempts"]) == (
        "dropped", "fewer_than_two_members", 3,
    )  # fmt: skip
    by_pid = simple.set_index("pid")
    alpha = by_pid.loc["p-Alpha"]
    assert (alpha["qid"], alpha["question"]) == ("simple-00000-0", "Which record is coded ahpla?")
    assert (alpha["subject"], alpha["predicate"]) == ("Alpha", "is coded ahpla")
    # Flaky: invalid under the first seed, valid under the second.
    flaky = by_pid.loc["p-Flaky"]
    assert (flaky["status"], flaky["attempts"], flaky["question"]) == (
        "ok", 2, "Which record is coded ykalf?",
    )  # fmt: skip
    # Bad: invalid under every seed; a simple question has no template: dropped.
    bad = by_pid.loc["p-Bad"]
    assert (bad["status"], bad["reason"], bad["attempts"]) == ("dropped", "no_question_mark", 3)
    assert pd.isna(bad["question"]) and bad["subject"] == "Bad"
    assert by_pid.loc["p-Mute", "reason"] == "not_a_member"
    assert by_pid.loc["p-Nu", "reason"] == "no_kind"


def test_subjects_are_named_by_the_llm_where_titles_cannot_tell_passages_apart(llm):
    cands = candidates(GROUPS[:2])
    cands.loc[cands["group"] == 0, "title"] = "Letters"  # one page's passages
    cands.loc[cands["group"] == 1, "title"] = None
    _, simple, _ = generate_all(llm, cands)
    assert simple["subject"].tolist() == ["Alpha", "Beta", "Gamma", "Delta", "Epsilon"]
    assert simple["question"].tolist()[0] == "Which record is coded ahpla?"


def test_paragraphs_of_one_story_are_one_thing(llm):
    # Untitled paragraphs (one news story): Alpha's name is in Beta's paragraph too, so both
    # are about Alpha; one member is left, and the kind gives no question.
    cands = candidates([["Alpha is a thing.", "Beta is a thing near Alpha.", "Gamma is a thing."],
                        ["Delta is a thing.", "Epsilon is a thing near Zeta."]])  # fmt: skip
    cands["title"] = None
    kinds, simple, _ = generate_all(llm, cands)
    kind = kinds.set_index("group")
    assert list(kind.loc[0, "members"]) == [1, 2] and kind.loc[0, "status"] == "ok"
    assert list(kind.loc[0, "subjects"]) == ["Beta", "Gamma"]
    assert list(kind.loc[1, "subjects"]) == ["Delta", "Epsilon"]
    cands.loc[4, "text"] = "Epsilon is a thing near Delta."
    kinds, _, _ = generate_all(llm, cands)
    kind = kinds.set_index("group")
    assert (kind.loc[1, "status"], kind.loc[1, "reason"]) == ("dropped", "members_are_one_thing")
    # a paragraph named by the kind itself is no member ("besides offshore wind farm")
    cands = candidates([["Record is a thing.", "Beta is a thing.", "Gamma is a thing."]])
    cands["title"] = None
    kinds, _, _ = generate_all(llm, cands)
    assert list(kinds.loc[0, "subjects"]) == ["Beta", "Gamma"]


@pytest.mark.parametrize(
    ("reply", "paragraph", "expected"),
    [("Berwick Deep", "The Berwick Deep project comprises 84 turbines.", ("Berwick Deep", None)),
     ("Cloud market issues", "Britain's competition regulator has found that ...",
      (None, "not_in_the_passage")),
     ("Offshore wind farm", "A 1.2-gigawatt offshore wind farm in the North Sea ...",
      (None, "not_in_the_passage")),  # a common noun, not a name
     ("Alpha.", "", ("Alpha", None))],  # no paragraph to check against
)  # fmt: skip
def test_a_named_subject_is_named_in_its_paragraph(reply, paragraph, expected):
    assert check_subject(reply, paragraph) == expected


def test_member_verification_drops_kinds_with_fewer_than_two_members(tmp_path):
    # The LLM names Mute a member; the judge does not: one member is left.
    cands = candidates([["Mute is a thing.", "Omicron is a thing."], GROUPS[0]])
    with FakeOpenAIServer(responder=scripted) as server:
        llm = scripted_client(server, tmp_path)
        named = kind_questions(cands, llm, prompt("kinds"), settings(),
                               TEMPLATES["disjunctive"], "m")  # fmt: skip
        assert [list(m) for m in named["members"]] == [[0, 1], [0, 1, 2]]
        kinds = verify_members(
            named, cands, llm, prompt("judge"), answerer(), MEMBERSHIP_TEMPLATE, LEAD_WORDS
        ).set_index("group")
        asked = server.total_requests()
        # The judge's membership reads are the same requests: answered from the cache.
        reads = Reads(dict(zip(cands["pid"], cands["text"], strict=True)),
                      dict(zip(cands["pid"], cands["title"], strict=True)), MEMBERSHIP_TEMPLATE,
                      answerer(), LEAD_WORDS)  # fmt: skip
        key = reads.member("records", "p-Mute")
        reads.run(llm, prompt("judge"))
        assert reads.answered(key) is False and server.total_requests() == asked
    assert (kinds.loc[0, "status"], kinds.loc[0, "reason"]) == (
        "dropped", "fewer_than_two_members_of_the_kind",
    )  # fmt: skip
    assert pd.isna(kinds.loc[0, "question"]) and list(kinds.loc[0, "members"]) == [1]
    assert kinds.loc[1, "status"] == "ok" and list(kinds.loc[1, "members"]) == [0, 1, 2]


def test_a_member_whose_name_is_not_of_the_kind_is_no_member(tmp_path):
    # Stray's passage reads as about one of the records (its lead), its name does not
    # ("Is Stray a record?": no), as a queen's passage reads as about a kingdom.
    cands = candidates([["Stray is a thing.", "Omicron is a thing.", "Pi is a thing."]])
    with FakeOpenAIServer(responder=scripted) as server:
        llm = scripted_client(server, tmp_path)
        named = kind_questions(cands, llm, prompt("kinds"), settings(),
                               TEMPLATES["disjunctive"], "m")  # fmt: skip
        subjects = name_subjects(cands, llm, prompt("subject"), settings())
        kinds = verify_members(named, cands, llm, prompt("judge"), answerer(),
                               MEMBERSHIP_TEMPLATE, LEAD_WORDS, NAMED_TEMPLATE,
                               subjects)  # fmt: skip
        users = [json.loads(p)[-1]["content"] for p in server.requests]
    assert list(kinds.loc[0, "members"]) == [1, 2] and kinds.loc[0, "status"] == "ok"
    asked = [u.split("|")[1] for u in users if u.startswith("JUDGE|")]
    assert sorted(q for q in asked if q.endswith(" a record?")) == [
        "Is Omicron a record?", "Is Pi a record?", "Is Stray a record?",
    ]  # fmt: skip
    kinds = with_subjects(kinds, cands, subjects)
    assert list(kinds.loc[0, "subjects"]) == ["Omicron", "Pi"]


def reply(kind, members) -> str:
    return json.dumps({"kind": kind, "members": members})


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (reply("things", [1, 2]), "vague_kind"),
        (reply("famous people", [1, 2]), "vague_kind"),
        (reply("historical events", [1, 2]), "vague_kind"),
        (reply("poets and scholars", [1, 2]), "two_kinds"),
        (reply("poets, scholars", [1, 2]), "two_kinds"),
        (reply("cities or towns", [1, 2]), "two_kinds"),
        (reply("very old stone bridges of northern Italy", [1, 2]), "not_a_kind"),
        (reply("lakes", [1, 2]), "kind_is_a_subject"),  # the title "Lake"
        (reply("physics", [1, 2]), "field_not_a_kind"),
        (reply("Economics of Asia", [1, 2]), "field_not_a_kind"),
        (reply("records", [2]), "fewer_than_two_members"),
        (reply("records", [1, 1]), "fewer_than_two_members"),
        (reply("records", ["1", "2"]), "no_members"),
        (json.dumps({"members": [1, 2]}), "no_kind"),
        ("records: 1, 2", "not_json"),
    ],
)
def test_kinds_that_say_nothing_or_two_things_are_rejected(text, reason):
    assert parse_kind(text, ["Lake", "Poet", "Baikal"], [4, 5, 6]) == (None, reason)


def test_a_kind_gets_both_numbers_and_the_members_slots():
    kind, reason = parse_kind(reply(" English Romantic Poets. ", [3, 1, 9]), ["A", "B", "C"],
                              [4, 5, 6])  # fmt: skip
    assert reason is None
    assert kind == Kind("English Romantic poets", "English Romantic poet", (4, 6))
    kind, _ = parse_kind(reply("lake in China", [1, 2]), ["A", "B"], [0, 1])
    assert (kind.plural, kind.singular) == ("lakes in China", "lake in China")


# ---------------------------------------------------------------------------------------------
# AND / OR / NOT


def test_labels_follow_section_4_3(llm):
    cands = candidates()
    kinds, simple, composed = generate_all(llm, cands)
    members = {int(g): [f"p-{GROUPS[g][s].split()[0]}" for s in m]
               for g, m in zip(kinds["group"], kinds["members"], strict=True)}  # fmt: skip
    # every group is of one kind ("records"), one set: an OR question is labelled from every
    # group with a sort; a NOT question's positives are the members of all
    with_sort = [f"p-{GROUPS[g][s].split()[0]}"
                 for g, m, sorts in zip(kinds["group"], kinds["members"], kinds["sorts"],
                                        strict=True)
                 for s, sort in zip(m, sorts, strict=True) if sort]  # fmt: skip
    every = [pid for g in sorted(members) for pid in members[g]]
    simple_qid = dict(zip(simple["pid"], simple["qid"], strict=True))
    text = dict(zip(cands["pid"], cands["text"], strict=True))
    for op, table in composed.items():
        for row in table[table["status"] != "dropped"].itertuples():
            group = {"AND": members[row.group], "OR": with_sort, "NOT": every}[op]
            numbered = f"{op.lower()}-{row.group:05d}-"
            assert row.qid.startswith(numbered) and row.operator == op
            assert sorted(row.positives + row.negatives) == sorted(group)
            assert not set(row.positives) & set(row.negatives)
            assert row.question.endswith("?") and row.source == "template"
            if op == "AND":
                # the positive meets both; the other members answer the disjunctive part
                (positive,) = row.positives
                assert list(row.operand_qids) == [f"disj-{row.group:05d}", simple_qid[positive]]
                assert row.operand_texts[0] == "What are some records?"
                assert f"coded {positive[2:][::-1].lower()}" in row.question
            elif op == "OR":
                # two sorts of the kind: their members are the positives, another sort's the
                # negatives; no member is named
                sorts = [q.split("/")[1] for q in row.operand_qids]
                assert f"{sorts[0]} or {sorts[1]}" in row.question and "records" in row.question
                assert row.operand_texts == [f"What are some {s} records?" for s in sorts]
                assert {sort_of(text[p]) for p in row.positives} == set(sorts)
                assert not {sort_of(text[n]) for n in row.negatives} & set(sorts)
                assert not any(p[2:] in row.question for p in row.positives)
            else:
                # the excluded member is the negative; the other members are positives
                (negative,) = row.negatives
                assert list(row.operand_qids) == [f"disj-{row.group:05d}", simple_qid[negative]]
                assert negative[2:] in row.question and "records" in row.question
                assert not any(p[2:] in row.question for p in row.positives)
    # group 0: 3 members -> 3 questions of each type (per_group), each its own positive/pair
    # (OR: three pairs of its sorts)
    for op, table in composed.items():
        part = table[table["group"] == 0]
        assert part["qid"].tolist() == [f"{op.lower()}-00000-{k}" for k in range(3)]
        key = "negatives" if op == "NOT" else "positives"
        assert len({tuple(sorted(p)) for p in part[key]}) == 3


def test_per_group_caps_the_questions_of_each_type(llm):
    cands = candidates(GROUPS[:1])
    composed = generate_all(llm, cands, settings(per_group=1))[2]
    assert [len(t) for t in composed.values()] == [1, 1, 1]
    assert composed["AND"]["qid"].tolist() == ["and-00000-0"]
    # ... or one cap per type
    composed = generate_all(llm, cands, settings(per_group={"and": 1, "or": 2, "not": 3}))[2]
    assert [len(t) for t in composed.values()] == [1, 2, 3]


def test_random_choices_are_stable_as_groups_are_added(llm):
    few = generate_all(llm, candidates(GROUPS[:3]))[2]
    more = generate_all(llm, candidates())[2]
    columns = ["qid", "positives", "negatives", "question"]
    for op in ("AND", "NOT"):
        head = more[op][more[op]["group"] < 3].reset_index(drop=True)
        # (a NOT question's positives grow with its set: the new groups' members)
        shown = [c for c in columns if op == "AND" or c != "positives"]
        assert head[shown].equals(few[op][shown])
    # every group here is of one kind ("records"): a group's OR questions pair its sorts with
    # those of the groups before it, so new groups of the kind keep them (and widen their
    # labels); a group of its own kind keeps its own
    head = more["OR"][more["OR"]["group"] < 3].reset_index(drop=True)
    assert head[["qid", "question", "operand_qids"]].equals(
        few["OR"][["qid", "question", "operand_qids"]]
    )
    assert len(head) > 3 and (head["positives"].map(len) >= few["OR"]["positives"].map(len)).all()
    assert (head["positives"].map(len) > few["OR"]["positives"].map(len)).any()
    assert more["OR"].loc[more["OR"]["qid"] == "or-00001-0", "reason"].item() == (
        "fewer_than_two_sorts"
    )
    # ... and every form of a template is drawn somewhere (not always the first)
    assert more["NOT"]["question"].str.startswith("Which records are there besides").sum() < len(
        more["NOT"].dropna(subset=["question"])
    )


def test_missing_operands_propagate_with_reasons(llm):
    _, _, composed = generate_all(llm, candidates())
    by = {op: t.set_index("qid") for op, t in composed.items()}
    # group 3: Bad has no simple question; AND on Iota only, NOT may exclude Bad, OR asks for
    # sorts (no simple question needed)
    assert by["AND"].loc["and-00003-0", "positives"] == ["p-Iota"]
    assert "and-00003-1" not in by["AND"].index
    nordic_or_celtic = by["OR"][by["OR"]["question"].str.contains("Nordic or Celtic")]
    assert {"p-Bad", "p-Iota"} <= set(nordic_or_celtic["positives"].item())
    # group 1's members are all of one sort ("a thing": too vague to be one)
    or1 = by["OR"].loc["or-00001-0"]
    assert (or1["status"], or1["reason"]) == ("dropped", "fewer_than_two_sorts")
    assert sorted(n for ns in by["NOT"].loc[["not-00003-0", "not-00003-1"], "negatives"]
                  for n in ns) == ["p-Bad", "p-Iota"]  # fmt: skip
    # group 5 has no kind: one dropped row per type
    for op, table in by.items():
        row = table.loc[f"{op.lower()}-00005-0"]
        assert (row["status"], row["reason"], row["positives"]) == ("dropped", "no_kind", [])


def test_compose_mode_llm_rewrites_the_draft(llm):
    cands = candidates(GROUPS[:1])
    template = generate_all(llm, cands)[2]
    rewritten = generate_all(llm, cands, mode="llm")[2]
    for op in template:
        t, r = template[op].iloc[0], rewritten[op].iloc[0]
        assert (r["source"], r["status"], r["attempts"]) == ("llm", "ok", 1)
        assert r["question"] == t["question"].replace("Which ", "What ", 1)
        assert r["positives"] == t["positives"] and r["negatives"] == t["negatives"]


def test_compose_falls_back_to_the_template_or_drops(tmp_path):
    def never_valid_and(body):
        user = body["messages"][-1]["content"]
        return "No." if user.startswith("AND|") else scripted(body)

    cands = candidates(GROUPS[:1])
    with FakeOpenAIServer(responder=never_valid_and) as server:
        llm = scripted_client(server, tmp_path)
        drafts = generate_all(llm, cands)[2]["AND"]
        fallback = generate_all(llm, cands, mode="llm")[2]["AND"]
        dropped = generate_all(llm, cands, settings(fallback="drop"), mode="llm")[2]["AND"]
    row = fallback.iloc[0]
    assert (row.status, row.source, row.reason, row.attempts) == (
        "fallback", "template", "no_question_mark", 3,
    )  # fmt: skip
    assert row.question == drafts.iloc[0]["question"]
    row = dropped.iloc[0]
    assert (row.status, row.reason, row.attempts) == ("dropped", "no_question_mark", 3)
    assert pd.isna(row.question) and row.positives == drafts.iloc[0]["positives"]


def test_a_composition_that_repeats_its_operand_is_invalid(tmp_path):
    # Small models often return the kind question unchanged as the AND question.
    def lazy_and(body):
        user = body["messages"][-1]["content"]
        return "What are some records?" if user.startswith("AND|") else scripted(body)

    with FakeOpenAIServer(responder=lazy_and) as server:
        llm = scripted_client(server, tmp_path)
        row = generate_all(llm, candidates(GROUPS[:1]), mode="llm")[2]["AND"].iloc[0]
    assert (row.status, row.reason, row.attempts) == ("fallback", "repeats_operand", 3)


def test_glued_and_disagreeing_rewrites_are_rejected(tmp_path):
    def sloppy(body):
        user = body["messages"][-1]["content"]
        if user.startswith("OR|"):
            return user.split("|")[1].rstrip("?") + " and who made it?"
        if user.startswith("NOT|"):  # the excluded member, with a singular verb's noun
            excluded = next(w for w in ("Alpha", "Beta", "Gamma") if w in user)
            return f"What record are there besides {excluded}?"
        return scripted(body)

    with FakeOpenAIServer(responder=sloppy) as server:
        llm = scripted_client(server, tmp_path)
        composed = generate_all(llm, candidates(GROUPS[:1]), mode="llm")[2]
    assert set(composed["OR"]["reason"]) == {"glued_questions"}
    assert set(composed["NOT"]["reason"]) == {"broken_agreement"}
    for op in ("OR", "NOT"):
        assert set(composed[op]["status"]) == {"fallback"}  # the rendered question stays


@pytest.mark.parametrize("kind", ["records", "lake in China", "English Romantic Poets", "city"])
def test_every_template_form_agrees_in_number(kind):
    plural, singular = kind_forms(kind)
    values = {"kind": plural, "kind_singular": singular, "predicate": "is coded ahpla",
              "first": "Alpha", "second": "the Beta",
              "excluded": "Gamma"}  # fmt: skip
    for op in ("and", "or", "not"):
        for form in TEMPLATES[op]:
            question = form.format(**values)
            assert check_question(question, []) == (question, None), question
    assert check_question(TEMPLATES["disjunctive"].format(kind=plural), [])[1] is None
    # the wrong number where the forms want the plural is caught
    form = next(f for f in TEMPLATES["not"] if f.startswith("What are some {kind},"))
    wrong = form.format(kind=singular, excluded="Gamma")
    assert check_question(wrong, [])[1] == "broken_agreement"


@pytest.mark.parametrize(
    ("question", "reason"),
    [
        ("Which record is coded ahpla and who made it?", "glued_questions"),
        ("Which lake is in China or what river is?", "glued_questions"),
        ("What lake are there besides Baikal?", "broken_agreement"),
        ("What are some lake, excluding Baikal?", "broken_agreement"),
        ("Which lakes is the deepest?", "broken_agreement"),
        ("What are some lakes, excluding Baikal?", None),
    ],
)
def test_validation_rejects_glued_questions_and_broken_agreement(question, reason):
    assert check_question(question, [])[1] == reason


@pytest.mark.parametrize("form", TEMPLATES["not"])
def test_the_scripted_decomposition_splits_every_not_form(form):
    question = form.format(kind="records", excluded="Gamma Ray")
    parts = decomposition(question)
    assert parts["operator"] == "NOT"
    asked, excluded = parts["questions"]
    assert excluded == "What is Gamma Ray?"
    assert "records" in asked and "Gamma" not in asked and asked.endswith("?")
    assert asked[0].isupper() and " other " not in f" {asked.lower()} "
    assert not asked.lower().startswith(("besides", "apart", "excluding"))


# ---------------------------------------------------------------------------------------------
# The judge


def judged(llm, cands, generated, **scope):
    """(composed questions, answers, check) of the scripted judge (expression scope unless
    `scope` says otherwise per type)."""
    kinds, simple, composed = generated
    questions = pd.concat(composed.values(), ignore_index=True)
    written = questions[questions["status"] != "dropped"]
    settings = answerer(**scope)
    reads = Reads(dict(zip(cands["pid"], cands["text"], strict=True)),
                  dict(zip(cands["pid"], cands["title"], strict=True)), MEMBERSHIP_TEMPLATE,
                  settings, LEAD_WORDS)  # fmt: skip
    answers, check = filter_and_check(
        written, simple, kinds, cands, llm, prompt("judge"), settings, reads
    )
    return questions, answers, check


def test_expression_scope_reads_membership_and_the_operands(llm):
    cands = candidates()
    generated = generate_all(llm, cands)
    questions, answers, _ = judged(llm, cands, generated)
    assert (answers["scope"] == "expression").all() and answers["member"].all()
    labelled = questions[questions["status"] != "dropped"]
    pairs = labelled["positives"].map(len) + labelled["negatives"].map(len)
    assert len(answers) == pairs.sum()
    # every positive answers (of the kind, and its simple question), no negative does
    assert answers["answered"].tolist() == (answers["role"] == "positive").tolist()
    verdict = verdicts(answers)
    assert verdict["passes_strict"].all() and verdict["filter_reason"].isna().all()


def test_the_judge_reads_or_passages_as_of_either_sort(llm):
    # "What are some Nordic or Celtic records?": a passage answers when it is of either sort (a
    # read of the membership template per sort it names, with the whole passage); a passage
    # that names neither is of neither, unread.
    cands = candidates(GROUPS[:1])  # Alpha Nordic, Beta Celtic, Gamma Gothic
    kinds, simple, composed = generate_all(llm, cands)
    written = composed["OR"][composed["OR"]["status"] != "dropped"]
    row = next(r for r in written.itertuples() if r.negatives == ["p-Gamma"])
    assert sorted(row.positives) == ["p-Alpha", "p-Beta"]
    settings = answerer()

    def verdicts_with(gamma_text: str) -> dict:
        texts = dict(zip(cands["pid"], cands["text"], strict=True)) | {"p-Gamma": gamma_text}
        reads = Reads(texts, dict(zip(cands["pid"], cands["title"], strict=True)),
                      MEMBERSHIP_TEMPLATE, settings, LEAD_WORDS)  # fmt: skip
        answers, _ = filter_and_check(written[written["qid"] == row.qid], simple, kinds, cands,
                                      llm, prompt("judge"), settings, reads)  # fmt: skip
        return dict(zip(answers["pid"], answers["answered"], strict=True))

    assert verdicts_with("Gamma is a Gothic thing.") == {
        "p-Alpha": True, "p-Beta": True, "p-Gamma": False,
    }  # fmt: skip
    # a negative that is of one of the sorts after all answers (strict mode drops the question)
    assert verdicts_with("Gamma is a Nordic thing.")["p-Gamma"] is True
    asked = [q for q in llm.server.requests if "Gamma" in q]
    assert sum("the Nordic records" in q for q in asked) == 1  # the sort it names, read
    assert not any("the Celtic records" in q for q in asked)  # not the other


def test_places_make_or_questions_the_judge_reads_by_place(llm):
    # Records without a sort, each in a land its passage names: "What are some records in
    # Norland or in Sudland?" (the members in either land its positives, the one in Westland
    # its negative); the judge reads "... one of the records in Norland?" of each.
    cands = candidates([["Rho is a thing in Norland.", "Sigma is a thing in Sudland.",
                         "Tau is a thing in Westland."]])  # fmt: skip
    kinds, simple, composed = generate_all(llm, cands)
    assert list(kinds["places"].iloc[0]) == ["Norland", "Sudland", "Westland"]
    assert list(kinds["sorts"].iloc[0]) == ["", "", ""]
    written = composed["OR"][composed["OR"]["status"] != "dropped"]
    row = next(
        r for r in written.itertuples() if "Norland" in r.question and "Sudland" in r.question
    )
    assert (sorted(row.positives), row.negatives) == (["p-Rho", "p-Sigma"], ["p-Tau"])
    reads = Reads(dict(zip(cands["pid"], cands["text"], strict=True)),
                  dict(zip(cands["pid"], cands["title"], strict=True)), MEMBERSHIP_TEMPLATE,
                  answerer(), LEAD_WORDS)  # fmt: skip
    answers, _ = filter_and_check(written[written["qid"] == row.qid], simple, kinds, cands, llm,
                                  prompt("judge"), answerer(), reads)  # fmt: skip
    assert dict(zip(answers["pid"], answers["answered"], strict=True)) == {
        "p-Rho": True, "p-Sigma": True, "p-Tau": False,
    }  # fmt: skip
    assert any("one of the records in Norland?" in q for q in llm.server.requests)


def test_cyclic_consistency_in_both_modes_and_its_reasons(llm):
    cands = candidates()
    generated = generate_all(llm, cands, verify=False)  # Mute stays a member of group 4
    questions, answers, _ = judged(llm, cands, generated)
    verdict = verdicts(answers).set_index("qid")
    by_qid = questions.set_index("qid")
    for qid, row in verdict.iterrows():
        q = by_qid.loc[qid]
        if "p-Mute" in q["positives"] and q["type"] != "NOT":
            expected = (False, False, "positive_unanswered")
        elif "p-Mute" in q["negatives"] and q["type"] == "NOT":
            expected = (True, False, "excluded_not_of_kind")
        else:  # a NOT positive or AND negative outside the kind leaves the labels
            expected = (True, True, None)
        got = (row["passes_default"], row["passes_strict"], row["filter_reason"])
        assert got[:2] == expected[:2] and (None if pd.isna(got[2]) else got[2]) == expected[2]
    assert set(verdict["filter_reason"].dropna()) == {"positive_unanswered",
                                                      "excluded_not_of_kind"}  # fmt: skip
    # Mute as a NOT positive or an AND negative: outside the kind, not a failure
    outside = answers[outside_kind(answers)]
    assert set(outside["pid"]) == {"p-Mute"}
    assert {(t, r) for t, r in zip(outside["type"], outside["role"], strict=True)} <= {
        ("NOT", "positive"), ("AND", "negative")
    }  # fmt: skip
    assert len(outside) > 0


def test_question_scope_reads_the_composed_question(llm):
    cands = candidates(GROUPS[:1])
    _, answers, _ = judged(llm, cands, generate_all(llm, cands), **{"and": "question",
                                                                   "not": "question"})  # fmt: skip
    assert set(answers.loc[answers["type"] == "AND", "scope"]) == {"question"}
    assert set(answers.loc[answers["type"] == "OR", "scope"]) == {"expression"}
    part = answers[answers["scope"] == "question"]
    assert part["p_yes"].round(6).isin([0.9, 0.1]).all() and part["member"].isna().all()
    # the scripted judge answers a question that names the passage's code or keyword: the AND
    # question's positive does; a NOT question names only its excluded member, so its
    # positives fail (the small answerer's trouble the expression scope avoids)
    ands = answers[answers["type"] == "AND"]
    assert ands["answered"].tolist() == (ands["role"] == "positive").tolist()
    verdict = verdicts(answers).set_index("qid")
    nots = verdict[verdict.index.str.startswith("not-")]
    assert set(nots["filter_reason"]) == {"positive_unanswered"}


def test_the_answerer_check_reads_own_sibling_and_other_passages(llm):
    cands = candidates()
    generated = generate_all(llm, cands, verify=False)
    simple = generated[1]
    _, _, check = judged(llm, cands, generated)
    written = simple[simple["status"] != "dropped"]
    # own + every sibling + one passage of another cluster, per simple question
    sizes = cands.groupby("group").size()
    assert len(check) == sum(sizes[g] + 1 for g in written["group"])
    other = check[check["relation"] == "other"].merge(cands[["pid", "cluster"]], on="pid")
    own_cluster = dict(zip(written["qid"], 100 + written["group"], strict=True))
    assert all(c != own_cluster[q] for q, c in zip(other["qid"], other["cluster"], strict=True))
    rates = check_rates(check)
    # "Which record is coded ahpla?" is answered by Alpha's passage only; Mute's is never.
    own = check[check["relation"] == "own"]
    assert rates["n_own"] == len(own) == len(written)
    assert rates["accept_own"] == (len(own) - 1) / len(own)
    assert rates["reject_other"] == rates["reject_sibling"] == 1.0
    assert rates["n_sibling"] == int((check["relation"] == "sibling").sum())


def test_p_yes_reads_the_first_token_alternatives():
    def result(**fields):
        return ChatResult(id="x", **fields)

    assert p_yes(result(content="Yes", top_logprobs={"Yes": -0.1, " no": -2.4, "The": -3})) == (
        pytest.approx(0.9090, abs=1e-3)
    )
    assert p_yes(result(content="no", top_logprobs={"No": -0.5, "no": -0.7})) == 0.0
    assert p_yes(result(content="yes.")) == 1.0  # an endpoint without logprobs
    assert p_yes(result(content="Maybe")) is None


def test_strict_mode_rejects_answered_negatives_and_excluded_passages_outside_the_kind():
    answers = pd.DataFrame(
        [
            ("q1", "AND", "a", "positive", True, True),
            ("q1", "AND", "b", "negative", True, True),
            ("q2", "AND", "c", "positive", True, True),
            ("q2", "AND", "d", "negative", False, True),
            ("q2", "AND", "e", "negative", False, False),  # outside the kind: leaves
            ("q3", "OR", "f", "positive", False, True),
            ("q4", "OR", "g", "positive", None, None),
            ("q5", "NOT", "h", "positive", True, True),
            ("q5", "NOT", "i", "negative", False, False),  # excluded, not of the kind
            ("q6", "NOT", "j", "positive", False, False),  # the only positive, outside
            ("q6", "NOT", "k", "negative", False, True),
            ("q7", "AND", "l", "positive", True, True),
            ("q7", "AND", "m", "negative", None, None),
            # one of two negatives meets the constraint too: it leaves, the question stays
            ("q8", "AND", "n", "positive", True, True),
            ("q8", "AND", "o", "negative", True, True),
            ("q8", "AND", "p", "negative", False, True),
            # two of three do: the constraint is not one only the positive meets
            ("q9", "AND", "q", "positive", True, True),
            ("q9", "AND", "r", "negative", True, True),
            ("q9", "AND", "s", "negative", True, True),
            ("q9", "AND", "t", "negative", False, True),
        ],
        columns=["qid", "type", "pid", "role", "answered", "member"],
    )
    assert outside_kind(answers).tolist() == [i in (4, 9) for i in range(len(answers))]
    assert answers.loc[met_constraint(answers), "pid"].tolist() == ["o"]
    table = verdicts(answers).set_index("qid")
    assert table.loc["q1"].tolist() == [True, False, "negative_answered"]
    assert table.loc["q2"].tolist()[:2] == [True, True] and pd.isna(table.loc["q2"].iloc[2])
    assert table.loc["q3"].tolist() == [False, False, "positive_unanswered"]
    assert table.loc["q4"].tolist() == [False, False, "answerer_failed"]
    assert table.loc["q5"].tolist() == [True, False, "excluded_not_of_kind"]
    assert table.loc["q6"].tolist() == [False, False, "no_member_of_the_kind"]
    assert table.loc["q7"].tolist() == [True, False, "answerer_failed"]
    assert table.loc["q8"].tolist()[:2] == [True, True] and pd.isna(table.loc["q8"].iloc[2])
    assert table.loc["q9"].tolist() == [True, False, "negative_answered"]


# ---------------------------------------------------------------------------------------------
# Pooling


def test_pools_hold_each_models_unlabelled_top_depth_once_at_its_best_rank():
    questions = pd.DataFrame({"qid": ["q1", "q2"], "positives": [["a"], ["b"]],
                              "negatives": [["b"], []]})  # fmt: skip
    runs = {
        "m1": pd.DataFrame({"qid": ["q1", "q1", "q1", "q1", "q2", "q3"],
                            "pid": ["a", "x", "y", "z", "a", "w"], "rank": [1, 2, 3, 4, 1, 1]}),
        "m2": pd.DataFrame({"qid": ["q1", "q1", "q2"], "pid": ["y", "b", "b"],
                            "rank": [1, 2, 3]}),
    }  # fmt: skip
    pooled = pools(questions, runs, depth=3)
    assert list(map(tuple, pooled[["qid", "pid", "rank"]].values.tolist())) == [
        ("q1", "y", 1),
        ("q1", "x", 2),
        ("q2", "a", 1),
    ]  # fmt: skip  (labelled a, b out; z below depth; q3 is not a question)
    assert pools(questions, runs, depth=0).empty and pools(questions, {}, depth=3).empty


POOL_PASSAGES = {  # pid: (title, text)
    "p-Ahpla": ("Ahpla", "Ahpla is a code of Alpha."),  # names Alpha, and answers its question
    "p-Rho": ("Rho", "Rho is about Alpha too."),  # names Alpha, does not answer
    "p-Sigma": ("Sigma", "Sigma is a thing."),  # names no answer
    "p-Oddball": ("Oddball", "Oddball is a thing."),  # not of the kind
    "p-Alpha2": ("Alpha (letter)", "Alpha is the first letter."),  # about Alpha
    "p-Ruby": ("Ruby", "Ruby is a Nordic thing."),  # of the sort Nordic
    "p-Scarlet": ("Scarlet", "Scarlet is not Nordic, but a Baltic thing."),  # names Nordic, is not
    "p-Stray": ("Stray", "Stray is a Nordic thing."),  # of the sort Nordic, its name not a record
}


def test_judge_pools_records_pooled_labels_with_their_methods(llm):
    cands = candidates(GROUPS[:1])
    kinds, simple, composed = generate_all(llm, cands, settings(per_group=3))
    questions = pd.concat(composed.values(), ignore_index=True)
    texts = dict(zip(cands["pid"], cands["text"], strict=True))
    titles = dict(zip(cands["pid"], cands["title"], strict=True))
    for pid, (title, text) in POOL_PASSAGES.items():
        texts[pid], titles[pid] = text, title
    ranked = ["p-Beta", *POOL_PASSAGES]
    run = pd.DataFrame([(q, p, r) for q in questions["qid"] for r, p in enumerate(ranked, 1)],
                       columns=["qid", "pid", "rank"])  # fmt: skip
    pooled = pools(questions, {"m": run}, depth=10)
    reads = Reads(texts, titles, MEMBERSHIP_TEMPLATE, answerer(), LEAD_WORDS, NAMED_TEMPLATE)
    frame = judge_pools(questions, pooled, construction(simple, kinds, cands), reads, llm,
                        prompt("judge"), answerer())  # fmt: skip
    got = {(q, p): (m, r) for q, p, m, r in
           frame[["qid", "pid", "method", "relevant"]].itertuples(index=False)}  # fmt: skip
    for row in questions.itertuples():
        answers = {simple.set_index("pid").loc[p, "subject"] for p in row.positives}
        for pid in POOL_PASSAGES:
            if row.type == "NOT":
                excluded = row.negatives[0][2:]
                expected = (("excluded", False) if excluded == "Alpha" and pid == "p-Alpha2"
                            else ("membership", pid != "p-Oddball"))  # fmt: skip
            elif row.type == "OR":  # a passage that names neither sort is not read
                nordic = "Nordic" in [q.split("/")[1] for q in row.operand_qids]
                # of the sort Nordic and, by its name, a record: Ruby; not Stray ("Is Stray a
                # record?" no), whose passage is read as of Nordic records
                expected = (("read", pid == "p-Ruby")
                            if nordic and pid in ("p-Ruby", "p-Scarlet", "p-Stray")
                            else ("name_gate", False))  # fmt: skip
            elif "Alpha" in answers and pid in ("p-Ahpla", "p-Rho", "p-Alpha2"):
                expected = ("read", pid != "p-Rho")
            else:
                expected = ("name_gate", False)
            assert got[(row.qid, pid)] == expected, (row.qid, pid)
        # a labelled passage is not pooled
        assert ((row.qid, "p-Beta") in got) == ("p-Beta" not in row.positives + row.negatives)
    assert set(frame["method"]) == {"excluded", "membership", "read", "name_gate"}
    read = frame["method"].isin(["membership", "read"])
    assert frame.loc[read, "p_yes"].round(6).isin([0.9, 0.1]).all()
    assert frame.loc[~read, "p_yes"].isna().all()  # nothing read


def test_a_pooled_title_names_a_thing_where_the_members_titles_did(llm):
    cands = candidates(GROUPS[:1])
    kinds, simple, composed = generate_all(llm, cands, settings(per_group=3))
    question = composed["OR"].iloc[0]
    assert construction(simple, kinds, cands).title_name(question, "Ruby (gem)") == "Ruby"
    # one page's passages, named by the LLM: a pooled passage's title names no thing
    paged = cands.assign(title="Letters")
    kinds, simple, composed = generate_all(llm, paged, settings(per_group=3))
    question = composed["OR"].iloc[0]
    assert construction(simple, kinds, paged).title_name(question, "Ruby") is None


def test_the_judge_step_filters_then_pools_and_the_dataset_carries_both(llm, tmp_path):
    """Files in, files out: the outside-kind NOT positive moves to pooled_negatives."""
    cands = candidates([GROUPS[4]])  # Kappa, Mute, Lambda; Mute is not of the kind
    kinds, simple, composed = generate_all(llm, cands, verify=False)
    paths = {name: tmp_path / f"{name}.parquet" for name in
             ("cands", "corpus", "kinds", "simple", "written", "run", "answers", "check",
              "pooled")}  # fmt: skip
    cands.to_parquet(paths["cands"])
    corpus = pd.concat([cands[["pid", "title", "text"]],
                        pd.DataFrame([(p, t, x) for p, (t, x) in POOL_PASSAGES.items()],
                                     columns=["pid", "title", "text"])])  # fmt: skip
    corpus.to_parquet(paths["corpus"])
    kinds.to_parquet(paths["kinds"])
    simple.to_parquet(paths["simple"])
    composed_paths = []
    for op, table in composed.items():
        composed_paths.append(tmp_path / f"{op}.parquet")
        table.to_parquet(composed_paths[-1])
    written_step(composed_paths, paths["written"])
    written = pd.read_parquet(paths["written"])
    run = pd.DataFrame([(q, p, r) for q in written["qid"]
                        for r, p in enumerate(["p-Sigma", "p-Oddball"], 1)],
                       columns=["qid", "pid", "rank"])  # fmt: skip
    run.to_parquet(paths["run"])
    out = {k: paths[k] for k in ("answers", "check", "pooled")}
    judge_step(paths["written"], paths["simple"], paths["kinds"], paths["cands"],
               paths["corpus"], {"m": paths["run"]}, out, llm, TEST_PROMPTS["judge"],
               answerer(), PoolSettings(depth=10), MEMBERSHIP_TEMPLATE, "strict")  # fmt: skip
    answers, pooled = pd.read_parquet(out["answers"]), pd.read_parquet(out["pooled"])
    assert len(pd.read_parquet(out["check"])) > 0
    passed = verdicts(answers).set_index("qid")
    kept = set(passed.index[passed["passes_strict"]])
    assert set(pooled["qid"]) == kept  # pooled for the kept questions only
    composed_all = pd.concat(composed.values(), ignore_index=True)
    table, kept_table = dataset.assemble(composed_all, answers, pooled, "strict")
    by = table.set_index("qid")
    for row in composed_all.itertuples():
        if row.type == "NOT" and "p-Mute" in row.positives:
            # judged outside the kind: out of the labels, into pooled_negatives
            assert by.loc[row.qid, "kept"] and "p-Mute" not in by.loc[row.qid, "positives"]
            assert by.loc[row.qid, "pooled_negatives"][0] == "p-Mute"
            assert by.loc[row.qid, "pooled_positives"] == ["p-Sigma"]  # of the kind
            assert "p-Oddball" in by.loc[row.qid, "pooled_negatives"]
        elif row.type == "NOT":  # Mute excluded: not a member of the set
            assert by.loc[row.qid, "reject_reason"] == "filter: excluded_not_of_kind"
    assert len(kept_table) == len(kept) and kept_table["pooled_negatives"].map(len).min() > 0


# ---------------------------------------------------------------------------------------------
# The dataset


def test_split_is_by_kind_stable_and_near_the_fraction():
    from boolbench.generation.compose import split_key, split_of

    splits = [split_of(f"kind:k{i}", 7, 0.3) for i in range(2000)]
    assert splits == [split_of(f"kind:k{i}", 7, 0.3) for i in range(2000)]
    assert 0.27 < splits.count("train") / 2000 < 0.33
    assert split_of(5, 7, 0.0) == "test" and split_of(5, 7, 1.0) == "train"
    # every group of one kind has its kind's key (the same words, whatever their case); a
    # group without a kind its number
    poets = [river_group(["A", "B"], group=g) for g in (3, 8, 21)]
    for g, kind in zip(poets, ("poets", "Poets ", "poets"), strict=True):
        g.kind["kind"] = kind
    assert {split_key(g, "kind") for g in poets} == {"kind:poets"}
    assert split_key(dataclasses.replace(river_group(["A", "B"], group=4), kind=None), "kind") == 4
    # split by group (a corpus of nearly one kind): each group by itself
    assert [split_key(g, "group") for g in poets] == [3, 8, 21]


QUESTION_COLUMNS = ["qid", "type", "group", "cluster", "question", "source", "status", "reason",
                    "attempts", "positives", "negatives"]  # fmt: skip


def small_questions() -> pd.DataFrame:
    """A hand-made set: 2 AND (1 kept in default mode), 1 OR (kept), 2 NOT (one dropped, one
    kept with a positive outside the kind)."""
    questions = pd.DataFrame(
        [
            ("and-00000-0", "AND", 0, 1, "Q1?", "llm", "ok", None, 1, ["a"], ["b", "c"]),
            ("and-00001-0", "AND", 1, 2, "Q2?", "template", "fallback", "meta_text", 3, ["d"],
             ["e"]),
            ("or-00000-0", "OR", 0, 1, "Q3?", "llm", "ok", None, 1, ["a", "b"], ["c"]),
            ("not-00000-0", "NOT", 0, 1, None, None, "dropped", "no_kind", 0, [], []),
            ("not-00001-0", "NOT", 1, 2, "Q5?", "llm", "ok", None, 1, ["d", "f"], ["e"]),
        ],
        columns=QUESTION_COLUMNS,
    )  # fmt: skip
    questions["operator"] = questions["type"]
    questions["operand_qids"] = [["x"]] * len(questions)
    questions["operand_texts"] = [["X?"]] * len(questions)
    questions["prompt_hash"], questions["model"] = "h", "m"
    questions["split"] = ["train" if g == 0 else "test" for g in questions["group"]]
    return questions


SMALL_ANSWERS = pd.DataFrame(
    [
        ("and-00000-0", "AND", "a", "positive", True, True),
        ("and-00000-0", "AND", "b", "negative", False, True),
        ("and-00000-0", "AND", "c", "negative", True, True),
        ("and-00001-0", "AND", "d", "positive", False, True),
        ("and-00001-0", "AND", "e", "negative", False, True),
        ("or-00000-0", "OR", "a", "positive", True, True),
        ("or-00000-0", "OR", "b", "positive", True, True),
        ("or-00000-0", "OR", "c", "negative", False, True),
        ("not-00001-0", "NOT", "d", "positive", True, True),
        ("not-00001-0", "NOT", "f", "positive", False, False),
        ("not-00001-0", "NOT", "e", "negative", False, True),
    ],
    columns=["qid", "type", "pid", "role", "answered", "member"],
)
SMALL_POOLED = pd.DataFrame(
    [
        ("and-00000-0", "x", 1, True),
        ("and-00000-0", "y", 2, False),
        ("and-00000-0", "z", 3, None),  # the judge failed: unjudged
        ("or-00000-0", "w", 1, False),
        ("not-00001-0", "v", 2, True),
        ("not-00001-0", "u", 1, True),
    ],
    columns=["qid", "pid", "rank", "relevant"],
)


def small_dataset(mode="default"):
    return dataset.assemble(small_questions(), SMALL_ANSWERS, SMALL_POOLED, mode)


def test_assemble_labels_pooled_passages_and_the_outside_kind():
    all_questions, kept = small_dataset()
    assert kept["qid"].tolist() == ["and-00000-0", "or-00000-0", "not-00001-0"]
    assert kept.columns.tolist() == dataset.DATASET_COLUMNS
    labels = kept.set_index("qid")[["positives", "negatives", "pooled_positives",
                                    "pooled_negatives"]].to_dict("index")  # fmt: skip
    assert labels == {
        # c meets the constraint too (the judge's read): no negative, unjudged
        "and-00000-0": {"positives": ["a"], "negatives": ["b"],
                        "pooled_positives": ["x"], "pooled_negatives": ["y"]},
        "or-00000-0": {"positives": ["a", "b"], "negatives": ["c"], "pooled_positives": [],
                       "pooled_negatives": ["w"]},
        "not-00001-0": {"positives": ["d"], "negatives": ["e"], "pooled_positives": ["u", "v"],
                        "pooled_negatives": ["f"]},
    }  # fmt: skip
    reasons = all_questions.set_index("qid")["reject_reason"]
    assert reasons["and-00001-0"] == "filter: positive_unanswered"
    assert reasons["not-00000-0"] == "dropped: no_kind"
    assert pd.isna(reasons["or-00000-0"])
    _, strict = small_dataset("strict")
    assert strict["qid"].tolist() == ["and-00000-0", "or-00000-0", "not-00001-0"]


def test_table1_on_a_hand_checked_case(tmp_path):
    all_questions, _ = small_dataset()
    table = dataset.table1(all_questions).set_index("type")
    columns = ["questions", "avg_pos", "avg_neg", "avg_pooled_pos", "avg_pooled_neg"]
    assert table.loc["ALL", columns].tolist() == pytest.approx([3, 4 / 3, 1.0, 1.0, 1.0])
    assert table.loc["AND", columns].tolist() == [1, 1.0, 1.0, 1.0, 1.0]
    assert table.loc["OR", columns].tolist() == [1, 2.0, 1.0, 0.0, 1.0]
    assert table.loc["NOT", columns].tolist() == [1, 1.0, 1.0, 2.0, 1.0]
    counts = ["generated", "llm", "fallback", "dropped", "filtered_out"]
    assert table.loc["ALL", counts].tolist() == [5, 3, 1, 1, 1]
    assert table.loc["NOT", counts].tolist() == [2, 1, 0, 1, 0]
    assert table.loc["AND", "pass_rate"] == 0.5
    assert table.loc["AND", "pass_rate_strict"] == 0.5  # and-00000-0: c leaves the labels
    steps = {"disjunctive": pd.DataFrame({"status": ["ok", "dropped", "dropped"],
                                          "reason": [None, "two_kinds", "vague_kind"]}),
             "simple": pd.DataFrame({"status": ["dropped", "ok"],
                                     "reason": ["not_a_member", None]})}  # fmt: skip
    rejected = dataset.rejections(steps, all_questions).set_index("reason")
    assert rejected.columns.tolist() == ["disjunctive", "simple", "AND", "OR", "NOT"]
    assert rejected.to_dict("index") == {
        "dropped: no_kind": {"disjunctive": 0, "simple": 0, "AND": 0, "OR": 0, "NOT": 1},
        "filter: positive_unanswered": {"disjunctive": 0, "simple": 0, "AND": 1, "OR": 0,
                                        "NOT": 0},
        "not_a_member": {"disjunctive": 0, "simple": 1, "AND": 0, "OR": 0, "NOT": 0},
        "two_kinds": {"disjunctive": 1, "simple": 0, "AND": 0, "OR": 0, "NOT": 0},
        "vague_kind": {"disjunctive": 1, "simple": 0, "AND": 0, "OR": 0, "NOT": 0},
    }  # fmt: skip
    out = [tmp_path / f"t1.{ext}" for ext in ("csv", "md", "html")]
    dataset.write_table1(dataset.table1(all_questions), *out, None, rejected.reset_index())
    md = out[1].read_text()
    assert "Rejected, by reason" in md and "| filter: positive_unanswered | 0 | 0 | 1 |" in md
    assert "avg_pooled_pos" in out[0].read_text().splitlines()[0]
    assert "Rejected, by reason" in out[2].read_text()


def test_beir_export_matches_the_dataset(tmp_path):
    from boolbench.corpus.sources import CORPUS_SCHEMA

    _, kept = small_dataset()
    kept["split"] = ["test", "train", "train"]
    pids = list("abcdefuvwxyz")
    corpus = pd.DataFrame(
        {
            "pid": pids,
            "text": [f"text {c}" for c in pids],
            "title": [None, "B", *[None] * (len(pids) - 2)],
            "doc_id": None,
            "position": 0,
        }
    )
    write_table_atomic(pa.Table.from_pandas(corpus, schema=CORPUS_SCHEMA), tmp_path / "c.pq")
    names = ["corpus", "queries"] + [
        f"{split}{suffix}" for split in ("test", "train") for suffix in ("", "_group", "_negatives")
    ]
    out = {n: str(tmp_path / "beir" / f"{n}.x") for n in names}
    dataset.export_beir(kept, tmp_path / "c.pq", out)

    def lines(name):
        return [json.loads(line) for line in Path(out[name]).read_text().splitlines()]

    docs = lines("corpus")
    assert docs[1] == {"_id": "b", "title": "B", "text": "text b"} and len(docs) == len(pids)
    queries = {q["_id"]: q for q in lines("queries")}
    assert queries["and-00000-0"]["text"] == "Q1?"
    assert queries["or-00000-0"]["metadata"] == {"type": "OR", "split": "train"}

    def qrels(name):
        frame = pd.read_csv(out[name], sep="\t", dtype=str)
        return sorted(map(tuple, frame.values.tolist()))

    # Completed labels: positives and pooled positives 1, negatives and pooled negatives 0
    # (z: the judge failed, and c, a negative read as meeting the constraint too: unjudged).
    assert qrels("test") == [
        ("and-00000-0", "a", "1"), ("and-00000-0", "b", "0"),
        ("and-00000-0", "x", "1"), ("and-00000-0", "y", "0"),
    ]  # fmt: skip
    assert qrels("test_group") == [("and-00000-0", "a", "1"), ("and-00000-0", "b", "0")]
    assert qrels("test_negatives") == [("and-00000-0", "b", "1")]
    assert qrels("train") == [
        ("not-00001-0", "d", "1"), ("not-00001-0", "e", "0"), ("not-00001-0", "f", "0"),
        ("not-00001-0", "u", "1"), ("not-00001-0", "v", "1"),
        ("or-00000-0", "a", "1"), ("or-00000-0", "b", "1"), ("or-00000-0", "c", "0"),
        ("or-00000-0", "w", "0"),
    ]  # fmt: skip
    assert qrels("train_group") == [
        ("not-00001-0", "d", "1"), ("not-00001-0", "e", "0"),
        ("or-00000-0", "a", "1"), ("or-00000-0", "b", "1"), ("or-00000-0", "c", "0"),
    ]  # fmt: skip
    assert qrels("train_negatives") == [("not-00001-0", "e", "1"), ("or-00000-0", "c", "1")]


def test_cache_makes_a_rerun_free(llm):
    cands = candidates()
    generate_all(llm, cands, mode="llm")
    asked = llm.server.total_requests()
    llm.accounting = type(llm.accounting)()
    generate_all(llm, cands, mode="llm")
    assert llm.server.total_requests() == asked
    assert llm.accounting.api_calls == 0 and llm.accounting.cache_hits > 0


def test_generation_report_counts_every_step_by_reason():
    all_questions, _ = small_dataset()
    steps = {
        "simple": pd.DataFrame(
            {"status": ["ok", "fallback", "dropped"], "reason": [None, "too_long", "no_subject"],
             "attempts": [1, 3, 0]}
        )
    }  # fmt: skip
    report = dataset.generation_report(steps, all_questions)
    assert report["simple"]["fallback_reasons"] == {"too_long": 1}
    assert report["simple"]["drop_reasons"] == {"no_subject": 1}
    assert report["simple"]["attempts"] == {1: 1, 3: 1, 0: 1}
    assert report["AND"]["fallback_reasons"] == {"meta_text": 1}
    assert report["NOT"]["drop_reasons"] == {"no_kind": 1}
    assert report["NOT"]["status"] == {"dropped": 1, "ok": 1}
    assert report["filter"]["AND"] == {"filter: positive_unanswered": 1}
    assert report["filter"]["NOT"] == {"dropped: no_kind": 1}


def river_group(subjects: list[str], group: int = 0, texts: list[str] | None = None,
                sorts: list[str] | None = None, places: list[str] | None = None):  # fmt: skip
    """A group of rivers (pids a, b, c, ...) with these subjects, passages, sorts and places."""
    from boolbench.generation.compose import Group

    slots = list(range(len(subjects)))
    cands = pd.DataFrame({"slot": slots, "pid": [chr(97 + s) for s in slots],
                          "text": texts or [f"{s} is a river." for s in subjects]})  # fmt: skip
    simple = {s: {"status": "ok", "qid": f"simple-00000-{s}", "slot": s, "subject": subject,
                  "predicate": f"is river {s}", "question": f"Which river is river {s}?"}
              for s, subject in enumerate(subjects)}  # fmt: skip
    kind = {"status": "ok", "kind": "rivers", "kind_singular": "river", "members": slots,
            "question": "What are some rivers?", "sorts": sorts or [""] * len(slots),
            "places": places or [""] * len(slots)}  # fmt: skip
    return Group(group, 0, cands, kind, simple)


OR_FORM = "What are some {first} or {second} {kind}?"


def test_members_are_distinct_things():
    # Two passages of one thing (two paragraphs of the Volga's article) are one member: the
    # second carries no label. A NOT question excluding the Volga must not count the other
    # Volga paragraph a right answer, nor an AND question its other paragraph a negative.
    from boolbench.generation.compose import plan_and, plan_not, plan_or

    g = river_group(["Volga", "Thames", "volga"], sorts=["Russian", "English", "Russian"])
    assert g.members == [0, 1]
    assert g.sorts() == {0: "Russian", 1: "English"}
    nots = plan_not(g, ["Which {kind} are there besides {excluded}?"], settings(per_group=3))
    assert sorted((p.positives, p.negatives) for p in nots) == [(["a"], ["b"]), (["b"], ["a"])]
    ands = plan_and(g, ["Which {kind_singular} {predicate}?"], settings(per_group=3))
    assert all("c" not in p.positives + p.negatives for p in ands)
    # a member whose subject names the excluded one is part of it: no positive of the NOT
    g = river_group(["Western Roman Empire", "Fall of the Western Roman Empire", "Roman Republic"])
    nots = plan_not(g, ["Which {kind} are there besides {excluded}?"], settings(per_group=3))
    by_negative = {p.negatives[0]: p.positives for p in nots}
    assert by_negative == {"a": ["c"], "b": ["a", "c"], "c": ["a", "b"]}
    # ... and where that leaves none, no NOT question excludes it (none without a positive)
    g = river_group(["Western Roman Empire", "Fall of the Western Roman Empire"])
    nots = plan_not(g, ["Which {kind} are there besides {excluded}?"], settings(per_group=3))
    assert sorted((p.negatives, p.positives, p.reason) for p in nots) == [
        ([], [], "no_other_member"), (["b"], ["a"], None),
    ]  # fmt: skip
    # all one thing (passages of one article): no question
    one = river_group(["Drought of 2022", "Drought of 2022", "Drought of 2022"])
    for plan in (plan_and, plan_or, plan_not):
        (none,) = plan(one, [OR_FORM], settings())
        assert none.reason == "members_are_one_thing"


def test_or_widens_the_kind_over_two_sorts():
    # "What are some Chinese or Russian rivers?": the members of either sort are the
    # positives, those of another sort the negatives, one without a sort is left unlabelled.
    from boolbench.generation.compose import plan_or

    g = river_group(["Yellow River", "Songhua", "Volga", "Thames", "Amur"],
                    sorts=["Chinese", "Chinese", "Russian", "English", ""])  # fmt: skip
    plans = plan_or(g, [OR_FORM], settings(per_group=3))
    assert len(plans) == 3
    by_draft = {p.draft: p for p in plans}
    plan = by_draft.get("What are some Chinese or Russian rivers?")
    assert plan is not None, list(by_draft)
    assert (plan.positives, plan.negatives) == (["a", "b", "c"], ["d"])
    assert plan.operand_texts == ["What are some Chinese rivers?", "What are some Russian rivers?"]
    assert plan.operand_qids == ["disj-00000/Chinese", "disj-00000/Russian"]
    # what the judge reads back: the two sorts (none of an imported question's operands)
    assert sorts_of(plan.operand_qids) == ["Chinese", "Russian"]
    assert sorts_of(["q12", "q13"]) == []
    # a rewrite (compose mode llm) must keep both sorts and may not name a member
    assert all(check(plan.draft) is None for check in plan.checks)
    assert [check("What are some Chinese rivers?") for check in plan.checks][1] == (
        "drops_an_alternative"
    )
    assert "Amur" in plan.answers


def test_or_pairs_two_sorts_of_one_attribute():
    from boolbench.generation.compose import plan_or

    # two values of one attribute: both proper ("German", "French") or both common; sorts that
    # share a word ("German", "German-American") or mix a nationality with a field
    # ("theoretical or French") are not paired, nor a blend of two names ("German-American",
    # with a hyphen or a dash) with anything, nor a combining form with its own name ("Greek",
    # "Greco-Roman")
    g = river_group(["A", "B", "C", "D", "E"],
                    sorts=["German", "German-American", "French", "theoretical",
                           "Italian\u2013British"])  # fmt: skip
    drafts = sorted(p.draft for p in plan_or(g, [OR_FORM], settings(per_group=6)))
    assert drafts == ["What are some German or French rivers?"]
    g = river_group(["A", "B", "C"], sorts=["Greek", "Greco-Roman", "Persian"])
    drafts = sorted(p.draft for p in plan_or(g, [OR_FORM], settings(per_group=6)))
    assert drafts == ["What are some Greco-Roman or Persian rivers?",
                      "What are some Greek or Persian rivers?"]  # fmt: skip
    # words of one stem overlap: "evergreen conifer or coniferous"
    g = river_group(["A", "B", "C"], sorts=["evergreen conifer", "coniferous", "deciduous"])
    drafts = sorted(p.draft for p in plan_or(g, [OR_FORM], settings(per_group=6)))
    assert drafts == ["What are some coniferous or deciduous rivers?",
                      "What are some evergreen conifer or deciduous rivers?"]  # fmt: skip
    # a member of a sort sharing a stem with one of the two is no negative
    g = river_group(["A", "B", "C", "D"], sorts=["Persian", "Roman", "Persians", "Greek"])
    negatives = {p.draft: p.negatives for p in plan_or(g, [OR_FORM], settings(per_group=6))}
    assert negatives["What are some Persian or Roman rivers?"] == ["d"]
    # two common sorts are often two properties ("standardized or tonal languages"): a member
    # of a third may have either unsaid, so none is a negative; two proper values exclude
    g = river_group(["A", "B", "C"], sorts=["standardized", "tonal", "agglutinative"])
    plans = plan_or(g, [OR_FORM], settings(per_group=3))
    assert len(plans) == 3 and all(p.positives and not p.negatives for p in plans)
    g = river_group(["A", "B", "C"], places=["Africa", "Asia", "Europe"])
    assert all(p.negatives for p in plan_or(g, [OR_FORM], settings(per_group=3),
                                            place_forms=[OR_FORM]))  # fmt: skip
    # a combining form alone names one thing: two language families pair
    g = river_group(["A", "B"], sorts=["Tibeto-Burman", "Austronesian"])
    assert plan_or(g, [OR_FORM], settings())[0].draft == (
        "What are some Tibeto-Burman or Austronesian rivers?"
    )
    # a member of another sort whose passage names one of the two is no negative: whether it
    # is of that sort too, only a reading can say (pooling, when a model retrieves it)
    texts = ["A is a Chinese river.", "B is a Russian river.",
             "C is an English river named by Russian traders."]  # fmt: skip
    g = river_group(["A", "B", "C"], texts=texts, sorts=["Chinese", "Russian", "English"])
    negatives = {p.draft: p.negatives for p in plan_or(g, [OR_FORM], settings(per_group=3))}
    assert negatives["What are some Chinese or Russian rivers?"] == []
    assert negatives["What are some Chinese or English rivers?"] == ["b"]
    # a member of a sort sharing a word with one of the two is no negative either: a "Greek"
    # mathematician may well be an "Ancient Greek" one
    g = river_group(["A", "B", "C", "D"], sorts=["Ancient Greek", "Roman", "Greek", "Persian"])
    negatives = {p.draft: p.negatives for p in plan_or(g, [OR_FORM], settings(per_group=6))}
    assert negatives["What are some Ancient Greek or Roman rivers?"] == ["d"]
    assert negatives["What are some Roman or Persian rivers?"] == ["a", "c"]
    # a sort that is part of a member's name names that member, not a sort of the set
    g = river_group(["Cleopatra", "Ptolemaic Kingdom", "Odrysian kingdom"],
                    sorts=["Ptolemaic", "Hellenistic", "Thracian"])  # fmt: skip
    drafts = [p.draft for p in plan_or(g, [OR_FORM], settings(per_group=3))]
    assert drafts == ["What are some Hellenistic or Thracian rivers?"]
    # two sorts only: one question, without negatives
    (plan,) = plan_or(river_group(["A", "B"], sorts=["Chinese", "Russian"]), [OR_FORM],
                      settings())  # fmt: skip
    assert (plan.positives, plan.negatives) == (["a", "b"], [])
    (none,) = plan_or(river_group(["A", "B"], sorts=["Chinese", ""]), [OR_FORM], settings())
    assert none.reason == "fewer_than_two_sorts"
    (none,) = plan_or(river_group(["A", "B"], sorts=["German", "German-American"]), [OR_FORM],
                      settings())  # fmt: skip
    assert none.reason == "no_comparable_sorts"


def test_groups_of_one_kind_are_one_set():
    # Groups of one kind are one set: a group pairs its sorts with those of the groups of its
    # kind before it ("What are some English or Chinese rivers?"), and every question is
    # labelled from all of them ("Chinese or Russian" takes the Russian river of the later
    # group too)
    from boolbench.generation.compose import (
        compose,
        merged,
        plan_or,
        same_kind,
        split_key,
        split_of,  # fmt: skip
    )

    a = river_group(["Yellow River", "Volga", "Songhua"], group=3,
                    sorts=["Chinese", "Russian", "Chinese"])  # fmt: skip
    b = river_group(["Thames", "Ob", "Selenga"], group=8,
                    sorts=["English", "Russian", "Mongolian"])  # fmt: skip
    b.candidates["pid"] = ["d", "e", "f"]
    lakes = river_group(["Baikal", "Ladoga"], group=5)
    lakes.kind["kind"] = "lakes"
    assert [[g.group for g in s] for s in same_kind([b, lakes, a])] == [[3, 8]]
    g = merged([a, b])
    assert g.home(1) == 3 and g.home(1001) == 8
    # the first group asks what it would alone, labelled from the set
    alone = plan_or(a, [OR_FORM], settings(per_group=5))
    (first,) = plan_or(a, [OR_FORM], settings(per_group=5), kin=[a, b])
    assert (
        [(p.qid, p.draft) for p in alone]
        == [(first.qid, first.draft)]
        == [("or-00003-0", "What are some Chinese or Russian rivers?")]
    )
    assert (sorted(first.positives), sorted(first.negatives)) == (["a", "b", "c", "e"], ["d", "f"])
    assert "Selenga" in first.answers  # names no member of any group of the set
    # the later group pairs its sorts with its own and the earlier group's, but not the pair
    # the earlier group has both values of
    later = {p.draft: p for p in plan_or(b, [OR_FORM], settings(per_group=6), kin=[a, b])}
    assert len(later) == 5 and "What are some Russian or Chinese rivers?" not in later
    assert all(p.group == 8 and p.qid.startswith("or-00008-") for p in later.values())
    plan = later["What are some English or Chinese rivers?"]
    assert (sorted(plan.positives), sorted(plan.negatives)) == (["a", "c", "d"], ["b", "e", "f"])
    assert plan.operand_qids == ["disj-00008/English", "disj-00003/Chinese"]
    # a group of the kind joining later changes what neither asks, only their labels
    c = river_group(["Rhine", "Danube"], group=12, sorts=["German", "Chinese"])
    c.candidates["pid"] = ["g", "h"]
    for group, old in ((a, {first.draft: first}), (b, later)):
        plans = plan_or(group, [OR_FORM], settings(per_group=6), kin=[a, b, c])
        assert {p.draft: p.qid for p in plans} == {d: p.qid for d, p in old.items()}
    wider = plan_or(a, [OR_FORM], settings(per_group=5), kin=[a, b, c])[0]
    assert sorted(wider.positives) == ["a", "b", "c", "e", "h"]
    # compose plans each group's own (the shard of that group)
    cands = pd.concat([x.candidates.assign(group=x.group, cluster=x.group, title=None)
                       for x in (a, b)])  # fmt: skip
    simple = pd.DataFrame([row | {"group": x.group} for x in (a, b) for row in x.simple.values()])
    kinds = pd.DataFrame([x.kind | {"group": x.group} for x in (a, b)])
    prompt = Prompt("S", "{draft}", mode="template")
    composed = compose("OR", cands, simple, kinds, None, prompt, settings(per_group=1),
                       [OR_FORM], "m")  # fmt: skip
    assert list(composed["qid"]) == ["or-00003-0", "or-00008-0"]
    assert list(compose("OR", cands, simple, kinds, None, prompt, settings(per_group=1),
                        [OR_FORM], "m", planned={8})["qid"]) == ["or-00008-0"]  # fmt: skip
    # a NOT question's positives are the members of every group of the set
    nots = compose("NOT", cands, simple, kinds, None, prompt, settings(per_group=3),
                   ["Which {kind} are there besides {excluded}?"], "m", planned={8})  # fmt: skip
    by_negative = excluding(nots)
    assert by_negative["d"] == ["a", "b", "c", "e", "f"]
    # ... and every group of the set, its questions and their labels are in one split
    assert nots["split"].nunique() == 1
    forms = {"OR": OR_FORM, "AND": TEMPLATES["and"][0]}
    for fraction in (0.0, 1.0, 0.5):
        splits = pd.concat([compose(op, cands, simple, kinds, None, prompt, settings(), [form],
                                    "m", train_fraction=fraction)["split"]
                            for op, form in forms.items()])  # fmt: skip
        assert splits.nunique() == 1
    assert set(splits) == {split_of(split_key(a, "kind"), BASE_SEED, 0.5)}
    # split by group: each group by itself; groups of one kind in two splits are no set
    assert same_kind([a, b], split={3: "train", 8: "test"}) == []
    for fraction in (0.3, 0.7):
        ands = compose("AND", cands, simple, kinds, None, prompt, settings(), [forms["AND"]], "m",
                       split_by="group", train_fraction=fraction)  # fmt: skip
        assert dict(zip(ands["group"], ands["split"], strict=False)) == {
            g: split_of(g, BASE_SEED, fraction) for g in (3, 8)
        }


def excluding(nots: pd.DataFrame) -> dict[str, list[str]]:
    """A NOT question's positives by the passage it excludes."""
    return {n[0]: sorted(p) for n, p in zip(nots["negatives"], nots["positives"], strict=True)}


PLACE_FORM = "What are some {kind} in {first} or in {second}?"


def test_or_asks_for_two_places_the_members_are_in():
    # "What are some rivers in China or in Russia?": two places the members' passages put
    # them in (before two sorts); a member in another place is a negative
    from boolbench.generation.compose import plan_or

    texts = ["A is a river in China.", "B is a river in Russia.", "C is a river in England.",
             "D is a river in Russia, near China."]  # fmt: skip
    g = river_group(["A", "B", "C", "D"], texts=texts, sorts=["Chinese", "", "", ""],
                    places=["China", "Russia", "England", "Russia"])  # fmt: skip
    plans = {p.draft: p for p in plan_or(g, [OR_FORM], settings(per_group=3), [PLACE_FORM])}
    assert sorted(plans) == ["What are some rivers in China or in England?",
                             "What are some rivers in China or in Russia?",
                             "What are some rivers in Russia or in England?"]  # fmt: skip
    plan = plans["What are some rivers in China or in Russia?"]
    assert (plan.positives, plan.negatives) == (["a", "b", "d"], ["c"])
    assert plan.operand_qids == ["disj-00000/in China", "disj-00000/in Russia"]
    assert plan.operand_texts == ["What are some rivers in China?",
                                  "What are some rivers in Russia?"]  # fmt: skip
    # D names China though it is in Russia: no negative of "in China or in England"
    assert plans["What are some rivers in China or in England?"].negatives == ["b"]
    assert all(check(plan.draft) is None for check in plan.checks)
    # two places come first, then two sorts (up to per_group)
    g = river_group(["A", "B"], sorts=["Chinese", "Russian"], places=["China", "Russia"])
    drafts = [p.draft for p in plan_or(g, [OR_FORM], settings(per_group=3), [PLACE_FORM])]
    assert drafts == ["What are some rivers in China or in Russia?",
                      "What are some Chinese or Russian rivers?"]  # fmt: skip
    (plan,) = plan_or(g, [OR_FORM], settings(per_group=1), [PLACE_FORM])
    assert plan.draft == "What are some rivers in China or in Russia?"
    # one place within the other ("Asia", "Southeast Asia") is no pair; without place forms
    # (an older config) no place is asked for
    g = river_group(["A", "B"], places=["Asia", "Southeast Asia"])
    assert plan_or(g, [OR_FORM], settings(), [PLACE_FORM])[0].reason == "fewer_than_two_sorts"
    g = river_group(["A", "B"], places=["China", "Russia"])
    assert plan_or(g, [OR_FORM], settings())[0].reason == "fewer_than_two_sorts"


def test_a_place_is_where_the_passages_first_sentence_puts_the_member():
    haiphong = "Haiphong is the third-largest city in Vietnam, with an area of 3,194 km2. It is."
    assert parse_place("Haiphong is a city in Vietnam.", haiphong, "Haiphong", "cities",
                       "city") == ("Vietnam", None)  # fmt: skip
    cyprus = "Cyprus is an island country in the eastern Mediterranean Sea, south of Turkey."
    assert parse_place("the eastern Mediterranean Sea", cyprus, "Cyprus", "island countries",
                       "island country") == ("the eastern Mediterranean Sea", None)  # fmt: skip
    chiang_mai = "Chiang Mai is the largest city in northern Thailand. It is old."
    assert parse_place("Thailand", chiang_mai, "Chiang Mai", "cities", "city") == (
        "Thailand", None,
    )  # fmt: skip
    # a place named elsewhere than where the first sentence puts it, or a part of a name
    vespucci = ("Amerigo Vespucci was an Italian explorer from Florence after whom the "
                "continent of America is named. He sailed in the Atlantic.")  # fmt: skip
    assert parse_place("America", vespucci, "Amerigo Vespucci", "explorers", "explorer")[1] == (
        "not_where_it_is"
    )
    assert parse_place("the Atlantic", vespucci, "Amerigo Vespucci", "explorers",
                       "explorer")[1] == "not_where_it_is"  # fmt: skip
    sirius = "Sirius is the brightest star in the constellation of Canis Major. It is."
    assert parse_place("Canis", sirius, "Sirius", "stars", "star")[1] == "not_where_it_is"
    # the name, not its description: two constellations' descriptions share a word
    vega = "Vega is the brightest star in the northern constellation of Lyra. It is."
    assert parse_place("Vega is a star in the northern constellation of Lyra", vega, "Vega",
                       "stars", "star") == ("Lyra", None)  # fmt: skip
    assert parse_place("the constellation of Canis Major.", sirius, "Sirius", "stars",
                       "star") == ("Canis Major", None)  # fmt: skip
    river = "The Yellow River is the second-longest river in China. It flows."
    assert parse_place("China", river, "Yellow River", "rivers in China", "river in China")[1] == (
        "names_the_kind_or_subject"
    )
    game = "Blackjack is the most widely played casino banking game in the world."
    assert parse_place("the world", game, "Blackjack", "games", "game")[1] == "not_a_place_name"
    assert parse_place("the World", game, "Blackjack", "games", "game")[1] == "vague_place"


def test_a_sort_is_a_word_or_two_of_the_passage_that_sorts_the_kind():
    text = "Diwali is the Hindu festival of lights, the most popular festival of India."
    assert parse_sort("Hindu", text, "Diwali", "festivals", "festival") == ("Hindu", None)
    assert parse_sort("Diwali is a hindu festival.", text, "Diwali", "festivals",
                      "festival") == ("Hindu", None)  # fmt: skip
    assert parse_sort("popular", text, "Diwali", "festivals", "festival")[1] == "vague_sort"
    assert parse_sort("Jewish", text, "Diwali", "festivals", "festival")[1] == (
        "not_in_the_passage"
    )
    assert parse_sort("festival of lights", text, "Diwali", "festivals", "festival")[1] == (
        "no_sort"
    )
    fiji = "Fiji is an overseas collectivity of France, a territory of islands."
    for noun in ("overseas collectivity", "territory"):
        assert parse_sort(noun, fiji, "Fiji", "countries", "country")[1] == "not_a_modifier"
    clothes = ("Underwear, undergarments, or underclothes are items of clothing; a dryer is a "
               "household appliance.")  # fmt: skip
    for noun in ("undergarments", "household appliance"):
        assert parse_sort(noun, clothes, "Underwear", "clothing", "clothing")[1] == (
            "not_a_modifier"
        )
    renaissance = "Titian was an Italian Renaissance painter; Swiss and igneous too."
    for sort in ("Renaissance", "Swiss", "igneous"):
        assert parse_sort(sort, renaissance, "Titian", "painters", "painter") == (sort, None)
    star = "Arcturus is a red giant star in the northern constellation of Bootes."
    assert parse_sort("red giant star", star, "Arcturus", "stars", "star") == ("red giant", None)
    assert parse_sort("brightest", star, "Arcturus", "stars", "star")[1] == "vague_sort"
    assert parse_sort("Arcturus", star, "Arcturus", "stars", "star")[1] == (
        "names_the_kind_or_subject"
    )
    assert parse_sort("red giant northern", star, "Arcturus", "stars", "star")[1] == (
        "not_one_sort"
    )


def test_a_simple_question_true_of_another_member_is_asked_again():
    from boolbench.generation.questions import quiz_check

    sibling = "Han Yu was a Chinese essayist, poet and politician of the Tang dynasty."
    check = quiz_check("poet", (sibling,))
    assert check("Which poet was a Chinese politician of the Tang dynasty?") == "true_of_a_sibling"
    assert check("Which poet wrote the Autumn Meditations in Kuizhou?") is None
    assert quiz_check("poet")("Which poet was a Chinese politician of the Tang dynasty?") is None
    assert check("Which poet was a famous poet?") == "not_specific"
    assert check("Which poet is known as the __ of Tang?") == "copies_the_mask"


def test_a_simple_question_a_person_would_not_ask_is_asked_again():
    # Quoted from blind-audited AND questions that annotators read as unnatural: the answer
    # identified by a name, no verb, a reference to the passage the question came from.
    from boolbench.generation.questions import quiz_check

    novelist, country = quiz_check("novelist"), quiz_check("island country")
    assert novelist("Which novelist was Bram Stoker?") == "names_by_name"
    assert country("Which island country is Dili in Timor?") == "names_by_name"
    assert quiz_check("country")("Which country is the Principality of Austria?") == (
        "names_by_name"
    )
    assert (
        quiz_check("clothing")(
            "Which clothing underclothing serves to provide concealment or support?"
        )
        == "no_verb"
    )
    assert (
        quiz_check("biological process")(
            "Which biological process requires cellular energy to achieve this movement?"
        )
        == "refers_to_passage"
    )
    # a catalogue designation is a name of the answer (a4cd559, after two_conditions below)
    assert (
        quiz_check("star")(
            "Which star is designated as α Carinae, the second-brightest star in the night sky?"
        )
        == "names_by_name"
    )
    assert quiz_check("city")("Which city was designated a UNESCO City of Music?") is None
    # what annotators read as natural passes: a possessive, a phrase before the verb, "known as"
    assert country("Which island country is Portugal's southernmost region?") is None
    tree = quiz_check("tree")
    assert tree("Which tree in the genus Alnus is known for its large size?") is None
    assert quiz_check("river")("Which river is known as Huanghe?") is None
    assert quiz_check("sultan")("Which sultan came to the throne at the age of six?") is None
    assert quiz_check("sultan")("Which sultan was the Ottoman sultan from 1520 to 1566?") is None
    region = quiz_check("geographical region")
    assert region("Which geographical region is Malaysia part of?") is None  # asks for the whole
    # read against the member's own passage (grammar.misstated)
    timor = ("Timor-Leste, also known as East Timor, is a country in Southeast Asia. Dili, on "
             "the north coast of Timor, is its capital and largest city.")  # fmt: skip
    own = quiz_check("island country", passage=timor)
    assert own("Which island country is the capital of Dili?") == "inverted_relation"
    assert own("Which island country is also known as East Timor?") is None
    assert own("Which island country is officially known as Gabon?") == "alias_not_in_passage"


def test_a_simple_question_with_a_second_condition_is_asked_again():
    # As an AND question's constraint it would ask for three conditions or mix in an OR;
    # quoted from the simple questions of the default run at a4cd559.
    from boolbench.generation.questions import quiz_check

    economist = quiz_check("economist")
    assert (
        quiz_check("kingdom")(
            "Which kingdom was founded in 305 BC by Ptolemy I Soter and ruled by the Macedonian "
            "Greek dynasty until the death of Cleopatra in 30 BC?"
        )
        == "two_conditions"
    )
    assert (
        economist(
            'Which economist is seen as the "father of economics" or the "father of capitalism"?'
        )
        == "two_conditions"
    )
    assert (
        quiz_check("philosophy")(
            "Which philosophy does not hold that all genuine knowledge is either true by "
            "definition or positive?"
        )
        == "two_conditions"
    )
    assert (
        quiz_check("emperor")(
            "Which emperor fled from Bulgaria and settled in the Rus' principalities?"
        )
        == "two_conditions"
    )
    # "and" inside a name or between nouns is one condition
    assert (
        economist(
            "Which economist co-authored The Communist Manifesto with Friedrich Engels and Karl "
            "Kautsky?"
        )
        is None
    )
    assert quiz_check("physicist")("Which physicist taught physics and mathematics?") is None
    assert quiz_check("poet")("Which poet wrote Pride and Prejudice?") is None


def test_a_simple_question_in_another_form_is_put_in_the_asked_one():
    # the 1.5B writes "Who was the <kind> who ...?" and "What <kind> ...?" for about one
    # request in seven; the question is the same
    from boolbench.generation.questions import as_which

    assert as_which("sultan")("Who was the sultan who came to the throne at six?") == (
        "Which sultan came to the throne at six?"
    )
    assert as_which("geographical region")("What geographical region is Malaysia part of?") == (
        "Which geographical region is Malaysia part of?"
    )
    assert as_which("river in China")("What is the river in China that flows 1,897 km?") == (
        "Which river in China flows 1,897 km?"
    )
    kept = "Who was the poet whose greatest ambition was to serve?"  # no safe rewrite
    assert as_which("poet")(kept) == kept


def test_a_simple_question_may_not_name_its_answer_by_another_name():
    # "Which sultan did Mehmed Talât serve as the de facto leader ...?" (the 1.5B; the passage
    # is Talaat Pasha's): the names a passage opens with are hidden and forbidden, as the
    # title is.
    from boolbench.generation.questions import answer_names, masked, opening_names
    from boolbench.generation.validation import mentions

    talaat = (
        "Mehmed Talât Pasha, commonly known as Talaat Pasha or Talat Pasha, was a Turkish "
        "politician who served as the de facto leader of the Ottoman Empire."
    )
    names = opening_names(talaat)
    assert {"Mehmed Talât Pasha", "Talaat Pasha", "Talat Pasha", "Mehmed Talât"} <= set(names)
    assert any(mentions("Which sultan did Mehmed Talât serve as leader?", n) for n in names)
    assert masked(talaat, "Talaat Pasha").startswith("___, commonly known as ___ or ___, was")
    assert "Ottoman Empire" in masked(talaat, "Talaat Pasha")  # not a name of the subject
    timor = (
        "Timor-Leste, also known as East Timor, officially the Democratic Republic of "
        "Timor-Leste, is a country in Southeast Asia."
    )
    assert {"East Timor", "Democratic Republic of Timor-Leste"} <= set(opening_names(timor))
    assert opening_names("In physics, the Schrödinger equation is a linear equation.") == []
    assert opening_names("A granary is a storehouse for grain.") == []
    # a word of the subject's name that singles it out gives it away; one of the kind does not
    names = answer_names("Erwin Schrödinger", "Erwin Schrödinger was a physicist.", "physicists")
    assert any(mentions("Which physicist developed the Schrödinger equation?", n) for n in names)
    names = answer_names("Yellow River", "The Yellow River or Huang He is a river.", "rivers")
    assert "Huang He" in names and "River" not in names
    assert not any(mentions("Which river is the second-longest in China?", n) for n in names)


def test_a_membership_read_holds_at_the_stricter_membership_threshold(tmp_path):
    # P(yes) 0.5 to both: a read of the question holds at the judge's threshold (0.4); a
    # membership read of a lead does not (0.6): the 1.5B takes what is related to a kind for
    # one of it
    reads = Reads({"p": "Dracula is an 1897 Gothic horror novel."}, {"p": "Dracula"},
                  MEMBERSHIP_TEMPLATE, answerer(), LEAD_WORDS)  # fmt: skip
    member, read = reads.member("novelists", "p"), reads.read("Which novel ...?", "p")
    with FakeOpenAIServer(responder=lambda body: ("yes", {"yes": 0.5, "no": 0.5})) as server:
        reads.run(scripted_client(server, tmp_path), prompt("judge"))
    assert reads.verdict(member)["p_yes"] == reads.verdict(read)["p_yes"] == 0.5
    assert (reads.answered(member), reads.answered(read)) == (False, True)


def test_simple_questions_hide_and_forbid_other_names_and_take_other_forms(tmp_path):
    # Through simple_questions and the server: the passage's other name is hidden in the
    # prompt and refused in the reply (asked again), and "What/Who was the <kind> that" replies
    # are put in the asked form.
    paragraphs = []

    def responder(body):
        user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        if user.startswith("SIMPLE|record|Alpha|"):
            paragraphs.append(user)
            if body.get("seed") == BASE_SEED:
                return "Which record is also called Omega?"
            return "What record is coded ahpla?"
        if user.startswith("SIMPLE|record|Beta|"):
            return "Who was the record that is coded ateb?"
        return scripted(body)

    cands = candidates(GROUPS[:1])
    cands.loc[cands["pid"] == "p-Alpha", "text"] = "Alpha, also known as Omega, is a Nordic thing."
    with FakeOpenAIServer(responder=responder) as server:
        _, simple, _ = generate_all(scripted_client(server, tmp_path), cands, verify=False)
    by_pid = simple.set_index("pid")
    alpha, beta = by_pid.loc["p-Alpha"], by_pid.loc["p-Beta"]
    assert (alpha["question"], alpha["attempts"]) == ("Which record is coded ahpla?", 2)
    assert (beta["question"], beta["attempts"]) == ("Which record is coded ateb?", 1)
    assert paragraphs and all("Omega" not in p for p in paragraphs)


def test_place_replies_may_run_longer_than_sorts(llm, monkeypatch):
    # A place reply often repeats the sentence ("Vega is a star in the northern constellation
    # of Boötes"): asked with the sorts' 12 tokens it was cut before the name ("... of Bo").
    from boolbench.generation.questions import PLACE_MAX_TOKENS, SORT_MAX_TOKENS

    cands = candidates([["Rho is a thing in Norland.", "Sigma is a thing in Sudland."]])
    kinds, _, _ = generate_all(llm, cands)
    sent = []
    run = llm.run
    monkeypatch.setattr(llm, "run", lambda requests: sent.extend(requests) or run(requests))
    member_sorts(kinds, cands, llm, prompt("place"), settings(), "places")
    member_sorts(kinds, cands, llm, prompt("sort"), settings())
    limits = {r.id.split("|")[0]: r.max_tokens for r in sent}
    assert limits == {"places": PLACE_MAX_TOKENS, "sorts": SORT_MAX_TOKENS}
    assert PLACE_MAX_TOKENS >= 20 > SORT_MAX_TOKENS


# ---------------------------------------------------------------------------------------------
# Story groups (grouping: document): a window of one document's paragraphs


STORY = [
    ["Harbour walls fell in the storm at Norland.", "Ferries stopped during the storm at Norland.",
     "Schools closed after the storm at Norland.", "Mayors met about the storm; Ferries again."],
]  # fmt: skip


def story_all(llm, cands, gen=None):
    """(kinds, simple, {operator: composed}) of story groups."""
    gen = gen or settings()
    kinds = story_kinds(cands, llm, prompt("topic"), prompt("aspect"), gen,
                        TEMPLATES["story_disjunctive"], "m")  # fmt: skip
    simple = story_questions(cands, kinds, llm, prompt("story"), gen, "m")
    composed = {op: compose(op, cands, simple, kinds, llm, compose_prompt(op, "template"), gen,
                            TEMPLATES[op.lower()], "m",
                            story_forms={"story": TEMPLATES[f"story_{op.lower()}"]})
                for op in ("AND", "OR", "NOT")}  # fmt: skip
    return kinds, simple, composed


def test_a_story_asks_about_its_paragraphs_aspects(llm):
    cands = candidates(STORY)
    cands["title"] = "Storm hits Norland"  # one page: its title names no paragraph
    kinds, simple, composed = story_all(llm, cands)
    kind = kinds.iloc[0]
    assert (kind["kind"], kind["construction"], kind["question"]) == (
        "the storm", "story", "What is known about the storm?")  # fmt: skip
    # "Ferries" is written in the Mayors paragraph too: it tells no paragraph apart
    assert list(kind["members"]) == [0, 2, 3]
    assert list(kind["subjects"]) == ["harbour", "schools", "mayors"]
    assert simple.loc[0, "question"] == "What about the storm concerns harbour?"
    assert simple.loc[1, "reason"] == "not_a_member"
    pid = dict(zip(cands["slot"], cands["pid"], strict=True))
    ands = composed["AND"].set_index("qid")
    for row in ands.itertuples():  # the story and one aspect; the other members are negatives
        assert len(row.positives) == 1 and len(row.negatives) == 2
        assert "the storm" in row.question and row.operand_texts[1] in set(simple["question"])
        slot = int(cands.set_index("pid").loc[row.positives[0], "slot"])
        assert kind["subjects"][list(kind["members"]).index(slot)] in row.question
    ors = composed["OR"]
    assert len(ors) == 3 and ors["question"].str.contains(" or ").all()
    first = ors.iloc[0]
    assert len(first["positives"]) == 2 and len(first["negatives"]) == 1
    assert list(first["operand_qids"])[0].startswith("simple-")
    nots = composed["NOT"]
    assert len(nots) == 3
    excluded = nots.iloc[0]
    assert list(excluded["negatives"]) in ([pid[0]], [pid[2]], [pid[3]])
    assert len(excluded["positives"]) == 2 and pid[1] not in excluded["positives"]
    assert "the storm" in excluded["question"]
    # Story groups form no sets and split by topic
    assert composed["NOT"]["split"].nunique() == 1

    # The judge reads a labelled passage as about the story, and (AND, OR) of the aspects
    # asked for; every positive passes, no negative does.
    questions = pd.concat(composed.values(), ignore_index=True)
    written = questions[questions["status"] != "dropped"]
    reads = Reads(dict(zip(cands["pid"], cands["text"], strict=True)),
                  dict(zip(cands["pid"], cands["title"], strict=True)), MEMBERSHIP_TEMPLATE,
                  answerer(), LEAD_WORDS, about=TEMPLATES["about"])  # fmt: skip
    answers, _ = filter_and_check(written, simple, kinds, cands, llm, prompt("judge"),
                                  answerer(), reads)  # fmt: skip
    assert answers["answered"].tolist() == (answers["role"] == "positive").tolist()
    assert verdicts(answers)["passes_strict"].all()

    # Pooled passages: another paragraph about the storm answers NOT (not of the excluded
    # aspect) and no AND; one about something else answers nothing.
    texts = {"x-storm": "Power failed in the storm at Norland.", "x-other": "Prices rose."}
    reads.texts |= texts
    reads.titles |= dict.fromkeys(texts)
    pooled = pd.DataFrame([(q, p, 1) for q in written["qid"] for p in texts],
                          columns=["qid", "pid", "rank"])  # fmt: skip
    judged = judge_pools(written, pooled, construction(simple, kinds, cands), reads, llm,
                         prompt("judge"), answerer())  # fmt: skip
    relevant = judged.groupby(["type", "pid"])["relevant"].agg(lambda v: set(v.tolist()))
    assert relevant[("NOT", "x-storm")] == {True} and relevant[("NOT", "x-other")] == {False}
    assert relevant[("AND", "x-storm")] == {False} and relevant[("OR", "x-storm")] == {False}
    assert (judged["method"] == "story").all()


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("The storm", ("the storm", None)), ("Harbour walls", (None, "topic_of_one_passage")),
     ("the article", (None, "vague_topic")), ("a typhoon", (None, "not_in_the_passages")),
     ("What happened?", (None, "not_a_topic"))],
)  # fmt: skip
def test_a_topic_is_what_the_paragraphs_write(reply, expected):
    assert parse_topic(reply, STORY[0]) == expected


@pytest.mark.parametrize(
    ("slot", "reply", "expected"),
    [(0, "harbour walls", ("harbour walls", None)), (1, "Ferries", (None, "in_another_passage")),
     (0, "the storm", (None, "the_topic")), (0, "sea walls", (None, "not_in_the_passage")),
     (0, "walls fell in the storm at", (None, "not_an_aspect"))],
)  # fmt: skip
def test_an_aspect_is_its_paragraphs_own(slot, reply, expected):
    others = [t for i, t in enumerate(STORY[0]) if i != slot]
    assert parse_aspect(reply, STORY[0][slot], others, "the storm") == expected


def test_topics_and_aspects_are_written_as_prose():
    texts = ["The Mekong River Commission met on Monday. Turnout was low, as turnout is.",
             "Approval from the European Commission and the regional commission is needed.",
             "The Newcastle forward scored for the Mekong River Commission."]  # fmt: skip
    # a title's capitals off, a name's kept, "the" where the texts write it
    assert parse_topic("Mekong river Commission", texts) == ("the Mekong River Commission", None)
    assert parse_aspect("regional commission", texts[1], texts[::2], "the Mekong") == (
        "the regional commission", None)  # fmt: skip
    # a name is what a story is about, not a detail of it
    assert parse_aspect("European Commission", texts[1], texts[::2], "the Mekong") == (
        None, "a_name")  # fmt: skip
    assert parse_aspect("Turnout", texts[0], texts[2:], "the Mekong") == ("turnout", None)
    # a thing one counts, which its paragraph writes with "a", takes "the"
    spokeswoman = "Organisers closed a second stage, a festival spokeswoman said."
    assert parse_aspect("second stage", spokeswoman, texts[:1], "the Mekong") == (
        "the second stage", None)  # fmt: skip
    # who is quoted is no part of the story
    assert parse_aspect("festival spokeswoman", spokeswoman, texts[:1], "the Mekong") == (
        None, "a_source")  # fmt: skip
    assert parse_aspect("newcastle forward", texts[2], texts[:1], "the Mekong") == (
        "the Newcastle forward", None)  # fmt: skip
    # "the" before a common noun; a sentence's first word says nothing of its case
    budget = ["The budget for Ireland was set.", "Protection was lower in the budget for Ireland."]
    assert parse_topic("budget for Ireland", budget) == ("the budget for Ireland", None)
    fire = ["Crews fought the Greater Manchester moor fire.", "Firefighters left the moor fire."]
    assert parse_topic("Firefighting on the moor", fire) == ("the firefighting on the moor", None)
    assert parse_topic("Greater Manchester fire", fire) == ("the Greater Manchester fire", None)
    # a name's possessive is the name ("Kovac's" of "Kovac"); quotes are no part of a phrase
    match = ["Kovac won the match.", 'The match went to Kovac\'s way: an "unacceptable" serve.']
    assert parse_aspect("Kovac's way", match[1], match[:1], "the match") == ("Kovac's way", None)
    assert parse_aspect('unacceptable" serve', match[1], match[:1], "the match") == (
        "unacceptable serve", None)  # fmt: skip
    # a sentence's first word is no name unless written so inside a sentence; a common noun's
    # possessive takes "the"
    board = ["The board met.", "Closing costs rose. Shareholders' pressure on the board grew."]
    assert parse_aspect("Closing costs", board[1], board[:1], "the deal") == ("closing costs", None)
    for reply in ("shareholders' pressure", "Shareholders' pressure"):
        assert parse_aspect(reply, board[1], board[:1], "the deal") == (
            "the shareholders' pressure", None)  # fmt: skip
    raids = ["Police raids at dawn found goods.", "The board met.", "Canada's police slept."]
    assert parse_aspect("Police raids", raids[0], raids[1:], "the deal") == ("police raids", None)
    # a word written with a capital only where a sentence starts may be a name: kept
    assert parse_topic("Canada's police", raids) == ("Canada's police", None)
    assert parse_aspect("lower protection", budget[1], budget[:1], "the budget") == (
        "lower protection", None)  # fmt: skip
    # a clause or a list is no aspect
    for clause in ("Turnout was low", "met on Monday", "Monday, Turnout"):
        assert parse_aspect(clause, texts[0], texts[1:], "the Mekong") == (None, "not_an_aspect")


def test_a_story_keeps_the_members_the_judge_reads_as_about_it(llm):
    cands = candidates([[*STORY[0], "Aside from the storm, crews rested."]])
    kinds = story_kinds(cands, llm, prompt("topic"), prompt("aspect"), settings(),
                        TEMPLATES["story_disjunctive"], "m")  # fmt: skip
    assert list(kinds.loc[0, "members"]) == [0, 2, 3, 4]
    verified = verify_story_members(kinds, cands, llm, prompt("judge"), answerer(),
                                    TEMPLATES["about"])  # fmt: skip
    assert list(verified.loc[0, "members"]) == [0, 2, 3]
    assert list(verified.loc[0, "subjects"]) == ["harbour", "schools", "mayors"]
    # two paragraphs of the story left: no story
    two = candidates([["Harbour walls fell in the storm.", "Aside: crews rested in the storm."]])
    kinds = story_kinds(two, llm, prompt("topic"), prompt("aspect"), settings(),
                        TEMPLATES["story_disjunctive"], "m")  # fmt: skip
    verified = verify_story_members(kinds, two, llm, prompt("judge"), answerer(),
                                    TEMPLATES["about"])  # fmt: skip
    assert (verified.loc[0, "status"], verified.loc[0, "reason"]) == (
        "dropped", "fewer_than_two_about_the_story")  # fmt: skip


def test_a_paragraph_is_read_as_about_the_story_with_its_headline(llm):
    """A paragraph that does not name its story ("Crews rested overnight.") is about it as
    part of an article whose headline names it; the read is as strict as a membership read."""
    texts = {"in": "Crews rested overnight.", "bare": "Crews rested overnight."}
    reads = Reads(texts, {"in": "Storm hits Norland", "bare": None}, "", answerer(), LEAD_WORDS,
                  about=TEMPLATES["about"])  # fmt: skip
    keys = {pid: reads.about("the storm", pid) for pid in texts}
    assert reads.pairs[keys["in"]].threshold == answerer().membership_threshold
    reads.run(llm, prompt("judge"))
    assert [reads.answered(keys[pid]) for pid in texts] == [True, False]


def test_story_aspects_sharing_a_word_are_one_and_stories_form_no_sets(tmp_path):
    # Aspects of two words whose second is shared ("Harbour tax", "Ferries tax"): one detail
    # twice, so the later paragraph is no member.
    def responder(body):
        user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
        if user.startswith("ASPECT|"):
            word = keyword(user.split("|")[2])
            return f"{word} tax" if word in ("Harbour", "Ferries") else word
        return scripted(body)

    texts = ["Harbour tax rose in the storm.", "Ferries tax fell in the storm.",
             "Schools shut in the storm."]  # fmt: skip
    cands = candidates([texts, texts])  # two windows of one story: the same topic
    with FakeOpenAIServer(responder=responder) as server:
        llm = scripted_client(server, tmp_path)
        kinds, simple, composed = story_all(llm, cands)
    assert list(kinds["kind"]) == ["the storm", "the storm"]
    assert list(kinds.loc[0, "subjects"]) == ["harbour tax", "schools"]
    assert list(kinds.loc[0, "members"]) == [0, 2]
    # each window is its own story: a NOT question's positives are its own window's only
    own = {g: set(cands.loc[cands["group"] == g, "pid"]) for g in (0, 1)}
    for row in composed["NOT"].itertuples():
        assert set(row.positives) <= own[row.group] and row.positives
