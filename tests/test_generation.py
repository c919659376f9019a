"""Question generation, composition, filtering and the dataset, against a scripted LLM."""

import json
from pathlib import Path

import pandas as pd
import pytest

from boolbench.generation import dataset
from boolbench.generation.compose import compose
from boolbench.generation.filtering import (
    AnswererSettings,
    check_rates,
    filter_and_check,
    p_yes,
    verdicts,
)
from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import (
    GenerationSettings,
    disjunctive_questions,
    kind_key,
    shared_kind,
    simple_questions,
)
from boolbench.llm import LLMClient, LLMSettings
from boolbench.llm.client import ChatResult
from boolbench.llm.fake_server import FakeOpenAIServer
from tests.scripted_llm import BASE_SEED, SMALL_PROMPTS, TEMPLATES, prompt, respond

GROUPS = [
    ["Alpha is a thing.", "Beta is a thing.", "Gamma is a thing."],
    ["Delta is a thing.", "Epsilon is a thing."],
    ["Zeta is a thing.", "Flaky is a thing.", "Theta is a thing."],
    ["Bad is a thing.", "Iota is a thing."],
    ["Kappa is a thing.", "Mute is a thing.", "Lambda is a thing."],
]


def candidates(groups=GROUPS) -> pd.DataFrame:
    rows = []
    for group, texts in enumerate(groups):
        for slot, text in enumerate(texts):
            word = text.split()[0]
            rows.append((group, 100 + group, slot, f"p-{word}", word, text))
    return pd.DataFrame(rows, columns=["group", "cluster", "slot", "pid", "title", "text"])


def scripted_client(server, cache_dir) -> LLMClient:
    settings = LLMSettings(
        backend="openai", model="scripted", cache_dir=str(cache_dir), seed=BASE_SEED
    )
    client = LLMClient(settings, server.base_url, "scripted", "scripted")
    client.server = server
    return client


@pytest.fixture
def llm(tmp_path):
    with FakeOpenAIServer(responder=respond) as server:
        yield scripted_client(server, tmp_path)


def settings(**overrides) -> GenerationSettings:
    return GenerationSettings(seed=BASE_SEED, **overrides)


def generate_all(llm, cands, gen=None, templates=TEMPLATES):
    gen = gen or settings()
    simple = simple_questions(cands, llm, prompt("simple"), gen, templates.get("simple"), "m")
    disj = disjunctive_questions(
        cands, llm, prompt("disjunctive"), gen, templates.get("disjunctive"), "m"
    )
    composed = {
        op: compose(
            op, cands, simple, disj, llm, prompt(op.lower()), gen, templates.get(op.lower()), "m"
        )
        for op in ("AND", "OR", "NOT")
    }
    return simple, disj, composed


def test_simple_and_disjunctive_questions(llm):
    simple, disj, _ = generate_all(llm, candidates())
    by_pid = simple.set_index("pid")
    assert by_pid.loc["p-Alpha", "question"] == "What is Alpha?"
    assert by_pid.loc["p-Alpha", "qid"] == "simple-00000-0"
    assert disj.set_index("group").loc[0, "question"] == "Which of Alpha, Beta or Gamma is it?"
    # Flaky: invalid under the first seed, valid under the second.
    flaky = by_pid.loc["p-Flaky"]
    assert (flaky["status"], flaky["attempts"], flaky["question"]) == ("ok", 2, "What is Flaky?")
    # Bad: invalid under every seed -> the template.
    bad = by_pid.loc["p-Bad"]
    assert (bad["status"], bad["source"], bad["reason"]) == (
        "fallback",
        "template",
        "no_question_mark",
    )
    assert bad["question"] == "What is known about Bad?" and bad["attempts"] == 3


def test_labels_follow_section_4_3(llm):
    cands = candidates()
    _, _, composed = generate_all(llm, cands)
    pids_of = cands.groupby("group")["pid"].apply(list).to_dict()
    for op, table in composed.items():
        for row in table.itertuples():
            group_pids = pids_of[row.group]
            assert sorted(row.positives + row.negatives) == sorted(group_pids)
            assert not set(row.positives) & set(row.negatives)
            assert row.qid == f"{op.lower()}-{row.group:05d}" and row.operator == op
            if op == "AND":
                assert len(row.positives) == 1
                slot = group_pids.index(row.positives[0])
                assert list(row.operand_qids) == [
                    f"disj-{row.group:05d}",
                    f"simple-{row.group:05d}-{slot}",
                ]
                assert row.question == f"What about {row.positives[0][2:]}?"
            elif op == "OR":
                assert len(row.positives) == 2
                slots = [group_pids.index(p) for p in row.positives]
                assert list(row.operand_qids) == [f"simple-{row.group:05d}-{s}" for s in slots]
            else:
                assert len(row.negatives) == 1
                slot = group_pids.index(row.negatives[0])
                assert list(row.operand_qids)[1] == f"simple-{row.group:05d}-{slot}"
                assert row.question.endswith(f"but not {row.negatives[0][2:]}?")


def test_random_choices_are_stable_as_groups_are_added(llm):
    few = generate_all(llm, candidates(GROUPS[:3]))[2]
    more = generate_all(llm, candidates())[2]
    for op in few:
        head = more[op][more[op]["group"] < 3].reset_index(drop=True)
        assert head[["qid", "positives", "negatives", "question"]].equals(
            few[op][["qid", "positives", "negatives", "question"]]
        )


def test_drop_mode_drops_and_propagates(llm):
    simple, disj, composed = generate_all(llm, candidates(), settings(fallback="drop"))
    bad = simple.set_index("pid").loc["p-Bad"]
    assert bad["status"] == "dropped" and pd.isna(bad["question"])
    # Group 3 keeps one valid simple question: OR needs two, NOT one.
    or_row = composed["OR"].set_index("group").loc[3]
    assert (or_row["status"], or_row["reason"]) == ("dropped", "operand_dropped")
    not_row = composed["NOT"].set_index("group").loc[3]
    assert not_row["status"] == "ok" and list(not_row["negatives"]) == ["p-Iota"]


def test_template_fallback_for_a_composition(tmp_path):
    def never_valid_and(body):
        user = body["messages"][-1]["content"]
        return "No." if user.startswith("AND|") else respond(body)

    with FakeOpenAIServer(responder=never_valid_and) as server:
        _, _, composed = generate_all(scripted_client(server, tmp_path), candidates(GROUPS[:1]))
    row = composed["AND"].iloc[0]
    constraint = f"what is {row.positives[0][2:]}"
    assert row.status == "fallback" and row.source == "template"
    assert row.question == f"Which of Alpha, Beta or Gamma is it and {constraint}?"


def filtered(llm, cands, generated, **scope):
    """(composed questions, answers, check) of the scripted judge (question scope unless
    `scope` says otherwise per type)."""
    simple, disj, composed = generated
    questions = pd.concat(composed.values(), ignore_index=True)
    settings = AnswererSettings(
        seed=BASE_SEED, scope={"and": "question", "or": "question", "not": "question"} | scope
    )
    answers, check = filter_and_check(
        questions, simple, disj, cands, llm, prompt("judge"), settings
    )
    return questions, answers, check


def test_cyclic_consistency_in_both_modes(llm):
    cands = candidates()
    questions, answers, _ = filtered(llm, cands, generate_all(llm, cands))
    assert set(answers["role"]) == {"positive", "negative"}
    assert (answers["scope"] == "question").all() and answers["p_yes"].round(6).isin(
        [0.9, 0.1]
    ).all()
    verdict = verdicts(answers).set_index("qid")
    # The scripted answerer answers exactly the labelled positives, except Mute's paragraph.
    for qid, row in verdict.iterrows():
        positives = questions.set_index("qid").loc[qid, "positives"]
        assert row["passes_default"] == row["passes_strict"] == ("p-Mute" not in positives)
    all_default, kept_default = dataset.assemble(questions, answers, "default", 0.5, BASE_SEED)
    all_strict, kept_strict = dataset.assemble(questions, answers, "strict", 0.5, BASE_SEED)
    assert set(kept_strict["qid"]) <= set(kept_default["qid"])
    rejected = all_default[~all_default["kept"]]
    assert (rejected["reject_reason"] == "filter: positive_unanswered").all()
    assert all(("p-Mute" in p) for p in rejected["positives"])


def test_the_answerer_check_reads_own_sibling_and_other_passages(llm):
    cands = candidates()
    simple = generate_all(llm, cands)[0]
    _, _, check = filtered(llm, cands, generate_all(llm, cands))
    written = simple[simple["status"] != "dropped"]
    # own + every sibling + one passage of another cluster, per simple question
    sizes = cands.groupby("group").size()
    assert len(check) == sum(sizes[g] + 1 for g in written["group"])
    other = check[check["relation"] == "other"].merge(cands[["pid", "cluster"]], on="pid")
    own_cluster = dict(zip(written["qid"], 100 + written["group"], strict=True))
    assert all(c != own_cluster[q] for q, c in zip(other["qid"], other["cluster"], strict=True))
    rates = check_rates(check)
    # "What is X?" is answered by X's passage only; Mute's passage is never answered, and the
    # template question of Bad ("What is known about Bad?") names Bad, so it is answered.
    own = check[check["relation"] == "own"]
    assert rates["n_own"] == len(own) == len(written)
    assert rates["accept_own"] == (len(own) - 1) / len(own)
    assert rates["reject_other"] == rates["reject_sibling"] == 1.0


def test_expression_scope_reads_the_operands(llm):
    cands = candidates()
    generated = generate_all(llm, cands)
    _, answers, _ = filtered(llm, cands, generated, **{"or": "expression", "not": "expression"})
    by_type = answers.set_index(["qid", "pid"])
    assert set(answers.loc[answers["type"] == "OR", "scope"]) == {"expression"}
    assert set(answers.loc[answers["type"] == "AND", "scope"]) == {"question"}
    # OR: a positive answers one of its two simple questions; a negative answers neither.
    or_0 = generated[2]["OR"].set_index("group").loc[0]
    for pid in or_0["positives"]:
        assert by_type.loc[("or-00000", pid), "answered"] == True  # noqa: E712
    for pid in or_0["negatives"]:
        assert by_type.loc[("or-00000", pid), "answered"] == False  # noqa: E712
    # NOT: the disjunctive question (it names every keyword) holds for all, and the excluded
    # simple question only for the excluded passage.
    not_0 = generated[2]["NOT"].set_index("group").loc[0]
    assert by_type.loc[("not-00000", not_0["negatives"][0]), "answered"] == False  # noqa: E712
    assert all(by_type.loc[("not-00000", p), "answered"] for p in not_0["positives"])


def test_p_yes_reads_the_first_token_alternatives():
    def result(**fields):
        return ChatResult(id="x", **fields)

    assert p_yes(result(content="Yes", top_logprobs={"Yes": -0.1, " no": -2.4, "The": -3})) == (
        pytest.approx(0.9090, abs=1e-3)
    )
    assert p_yes(result(content="no", top_logprobs={"No": -0.5, "no": -0.7})) == 0.0
    assert p_yes(result(content="yes.")) == 1.0  # an endpoint without logprobs
    assert p_yes(result(content="Maybe")) is None


SMALL = {"and", "disjunctive", "subject"}


def small_prompt(step: str) -> Prompt:
    modes = {"disjunctive": "kinds", "and": "quiz"}
    if step in SMALL_PROMPTS:
        return Prompt("Q", SMALL_PROMPTS[step], modes.get(step))
    return prompt(step)


def test_kinds_quiz_and_not_template_modes(llm):
    groups = [["Alpha is a thing.", "Bad is a thing.", "Beta is a thing."],
              ["Zonk is a thing.", "Gamma is a thing."]]  # fmt: skip
    cands = candidates(groups)
    cands["title"] = None  # no titles: subjects are named by the LLM
    gen = settings()
    simple = simple_questions(
        cands, llm, prompt("simple"), gen, TEMPLATES["simple"], "m", small_prompt("subject")
    )
    assert simple["subject"].tolist() == ["Alpha", "Bad", "Beta", "Zonk", "Gamma"]
    disj = disjunctive_questions(
        cands, llm, small_prompt("disjunctive"), gen, None, "m", "What are some {kind}?"
    ).set_index("group")
    assert disj.loc[0, "question"] == "What are some greek letters?"
    assert list(disj.loc[0, "members"]) == [0, 2] and disj.loc[0, "kind"] == "greek letters"
    assert disj.loc[1, "status"] == "dropped" and disj.loc[1, "reason"] == "no_shared_kind"
    disj = disj.reset_index()
    quiz = compose("AND", cands, simple, disj, llm, small_prompt("and"), gen, None, "m")
    row = quiz.set_index("group").loc[0]
    subject = cands.set_index("pid").loc[row["positives"][0], "text"].split()[0]
    assert row["question"] == f"Which thing is coded {subject[::-1].lower()}?"
    forms = ["What are some {kind} other than {excluded}?"]
    nots = compose(
        "NOT", cands, simple, disj, llm, Prompt("Q", "", "template"), gen, None, "m", forms
    ).set_index("group")
    excluded = nots.loc[0, "negatives"][0]
    assert nots.loc[0, "question"] == f"What are some greek letters other than {excluded[2:]}?"
    assert sorted([*nots.loc[0, "positives"], excluded]) == ["p-Alpha", "p-Beta"]  # not Bad
    assert (nots.loc[0, "status"], nots.loc[0, "source"]) == ("ok", "template")
    assert nots.loc[1, "status"] == "dropped" and nots.loc[1, "reason"] == "no_shared_kind"


def test_kinds_are_compared_without_plural_endings_and_vague_ones_are_no_kind():
    assert kind_key("Cities") == kind_key("city") and kind_key("straits") == kind_key("strait")
    assert shared_kind(["cities", "city", "lakes"]) == ("cities", [0, 1])
    assert shared_kind(["objects", "objects", "balls"]) == (None, [])
    assert shared_kind(["poets", "novels"]) == (None, [])


def test_strict_mode_rejects_answered_negatives():
    answers = pd.DataFrame(
        [
            ("q1", "AND", "a", "positive", "A", True),
            ("q1", "AND", "b", "negative", "B", True),
            ("q2", "AND", "c", "positive", "C", True),
            ("q2", "AND", "d", "negative", "Cannot answer", False),
            ("q3", "OR", "e", "positive", "Cannot answer", False),
            ("q4", "OR", "f", "positive", None, None),
        ],
        columns=["qid", "type", "pid", "role", "answer", "answered"],
    )
    table = verdicts(answers).set_index("qid")
    assert table.loc["q1"].tolist() == [True, False, "negative_answered"]
    assert table.loc["q2"].tolist()[:2] == [True, True] and pd.isna(
        table.loc["q2", "filter_reason"]
    )
    assert table.loc["q3"].tolist() == [False, False, "positive_unanswered"]
    assert table.loc["q4"].tolist() == [False, False, "answerer_failed"]


def test_split_is_by_group_stable_and_near_the_fraction():
    splits = [dataset.split_of(g, 7, 0.3) for g in range(2000)]
    assert splits == [dataset.split_of(g, 7, 0.3) for g in range(2000)]
    assert 0.27 < splits.count("train") / 2000 < 0.33
    assert dataset.split_of(5, 7, 0.0) == "test" and dataset.split_of(5, 7, 1.0) == "train"


def small_dataset():
    """A hand-made set: 2 AND (1 kept), 1 OR (kept), 1 NOT (dropped) question."""
    questions = pd.DataFrame(
        [
            ("and-00000", "AND", 0, 1, "Q1?", "llm", "ok", None, 1, ["a"], ["b", "c"]),
            ("and-00001", "AND", 1, 2, "Q2?", "template", "fallback", "meta_text", 3, ["d"], ["e"]),
            ("or-00000", "OR", 0, 1, "Q3?", "llm", "ok", None, 1, ["a", "b"], ["c"]),
            ("not-00000", "NOT", 0, 1, None, None, "dropped", "operand_dropped", 0, [], []),
        ],
        columns=[
            "qid",
            "type",
            "group",
            "cluster",
            "question",
            "source",
            "status",
            "reason",
            "attempts",
            "positives",
            "negatives",
        ],
    )
    questions["operator"] = questions["type"]
    questions["operand_qids"] = [["x"]] * 4
    questions["operand_texts"] = [["X?"]] * 4
    questions["prompt_hash"], questions["model"] = "h", "m"
    answers = pd.DataFrame(
        [
            ("and-00000", "AND", "a", "positive", "A", True),
            ("and-00000", "AND", "b", "negative", "Cannot answer", False),
            ("and-00000", "AND", "c", "negative", "C", True),
            ("and-00001", "AND", "d", "positive", "Cannot answer", False),
            ("and-00001", "AND", "e", "negative", "Cannot answer", False),
            ("or-00000", "OR", "a", "positive", "A", True),
            ("or-00000", "OR", "b", "positive", "B", True),
            ("or-00000", "OR", "c", "negative", "Cannot answer", False),
        ],
        columns=["qid", "type", "pid", "role", "answer", "answered"],
    )
    return dataset.assemble(questions, answers, "default", 0.5, 3)


def test_table1_on_a_hand_checked_case():
    all_questions, kept = small_dataset()
    assert kept["qid"].tolist() == ["and-00000", "or-00000"]
    table = dataset.table1(all_questions).set_index("type")
    assert table.loc["ALL", ["questions", "avg_pos", "avg_neg"]].tolist() == [2, 1.5, 1.5]
    assert table.loc["AND", ["questions", "avg_pos", "avg_neg"]].tolist() == [1, 1.0, 2.0]
    assert table.loc["OR", ["questions", "avg_pos", "avg_neg"]].tolist() == [1, 2.0, 1.0]
    assert table.loc["NOT", "questions"] == 0 and pd.isna(table.loc["NOT", "avg_pos"])
    assert table.loc[
        "ALL", ["generated", "llm", "fallback", "dropped", "filtered_out"]
    ].tolist() == [4, 2, 1, 1, 1]
    assert table.loc["AND", "pass_rate"] == 0.5
    assert table.loc["AND", "pass_rate_strict"] == 0.0  # and-00000 also answers negative c
    reasons = all_questions.set_index("qid")["reject_reason"]
    assert reasons["and-00001"] == "filter: positive_unanswered"
    assert reasons["not-00000"] == "dropped: operand_dropped"


def test_beir_export_matches_the_dataset(tmp_path):
    from boolbench.corpus.sources import CORPUS_SCHEMA
    from boolbench.io import write_table_atomic

    _, kept = small_dataset()
    kept.loc[0, "split"], kept.loc[1, "split"] = "test", "train"
    kept.at[0, "pooled_positives"], kept.at[0, "pooled_negatives"] = ["d"], ["e"]
    corpus = pd.DataFrame(
        {
            "pid": list("abcde"),
            "text": [f"text {c}" for c in "abcde"],
            "title": [None, "B", None, None, None],
            "doc_id": None,
            "position": 0,
        }
    )
    import pyarrow as pa

    write_table_atomic(pa.Table.from_pandas(corpus, schema=CORPUS_SCHEMA), tmp_path / "c.pq")
    names = ["corpus", "queries"] + [
        f"{split}{suffix}" for split in ("test", "train") for suffix in ("", "_group", "_negatives")
    ]
    out = {n: str(tmp_path / "beir" / f"{n}.x") for n in names}
    dataset.export_beir(kept, tmp_path / "c.pq", out)

    def lines(name):
        return [json.loads(line) for line in Path(out[name]).read_text().splitlines()]

    docs = lines("corpus")
    assert docs[1] == {"_id": "b", "title": "B", "text": "text b"} and len(docs) == 5
    queries = {q["_id"]: q for q in lines("queries")}
    assert queries["and-00000"]["text"] == "Q1?"
    assert queries["or-00000"]["metadata"] == {"type": "OR", "split": "train"}

    def qrels(name):
        frame = pd.read_csv(out[name], sep="\t", dtype=str)
        return sorted(map(tuple, frame.values.tolist()))

    # Completed labels: positives and pooled positives 1, negatives and pooled negatives 0.
    assert qrels("test") == [
        ("and-00000", "a", "1"), ("and-00000", "b", "0"), ("and-00000", "c", "0"),
        ("and-00000", "d", "1"), ("and-00000", "e", "0"),
    ]  # fmt: skip
    assert qrels("test_group") == [
        ("and-00000", "a", "1"), ("and-00000", "b", "0"), ("and-00000", "c", "0")
    ]  # fmt: skip
    assert qrels("test_negatives") == [("and-00000", "b", "1"), ("and-00000", "c", "1")]
    assert qrels("train") == [
        ("or-00000", "a", "1"),
        ("or-00000", "b", "1"),
        ("or-00000", "c", "0"),
    ]
    assert qrels("train_group") == qrels("train")  # nothing pooled
    assert qrels("train_negatives") == [("or-00000", "c", "1")]


def test_cache_makes_a_rerun_free(llm):
    cands = candidates()
    generate_all(llm, cands)
    asked = llm.server.total_requests()
    llm.accounting = type(llm.accounting)()
    generate_all(llm, cands)
    assert llm.server.total_requests() == asked
    assert llm.accounting.api_calls == 0 and llm.accounting.cache_hits > 0


def test_a_composition_that_repeats_its_operand_is_invalid(tmp_path):
    # Small models often return the disjunctive question unchanged as the AND question.
    def lazy_and(body):
        user = body["messages"][-1]["content"]
        return user.split("|")[1] if user.startswith("AND|") else respond(body)

    with FakeOpenAIServer(responder=lazy_and) as server:
        _, _, composed = generate_all(scripted_client(server, tmp_path), candidates(GROUPS[:1]))
    row = composed["AND"].iloc[0]
    assert (row.status, row.reason, row.attempts) == ("fallback", "repeats_operand", 3)


def test_generation_report_counts_every_step_by_reason():
    all_questions, _ = small_dataset()
    steps = {
        "simple": pd.DataFrame(
            {"status": ["ok", "fallback"], "reason": [None, "too_long"], "attempts": [1, 3]}
        )
    }
    report = dataset.generation_report(steps, all_questions)
    assert report["simple"]["fallback_reasons"] == {"too_long": 1}
    assert report["AND"]["fallback_reasons"] == {"meta_text": 1}
    assert report["NOT"]["drop_reasons"] == {"operand_dropped": 1}
    assert report["filter"]["AND"] == {"filter: positive_unanswered": 1}
