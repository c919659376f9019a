import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boolbench.errors import ConfigError, InputError
from boolbench.grouping import clustering
from boolbench.grouping.clustering import (
    ClusteringSettings,
    assign_corpus,
    check_memory,
    cluster,
    document_windows,
    estimated_peak_gb,
    reduce,
    sample_rows,
)
from boolbench.retrieval.embeddings import PIDS_SCHEMA, pids_path


def write_embeddings(path, vectors):
    np.save(path, vectors.astype(np.float32))
    pids = [f"p{i:03d}" for i in range(len(vectors))]
    pq.write_table(pa.table({"pid": pids}, schema=PIDS_SCHEMA), pids_path(path))
    return pids


def svd_outputs(folder):
    return folder / "svd.parquet", folder / "var.parquet", folder / "components.npy"


def blobs(n_per_blob=20, n_blobs=4, dim=32, seed=0):
    """Well-separated Gaussian blobs; blob b occupies rows b*n .. (b+1)*n - 1."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_blobs, dim)) * 10
    return np.concatenate([c + rng.normal(size=(n_per_blob, dim)) for c in centres])


def test_sample_is_seeded_sorted_and_without_repeats():
    a, b = sample_rows(1000, 100, seed=3), sample_rows(1000, 100, seed=3)
    assert np.array_equal(a, b) and len(set(a)) == 100 and np.all(np.diff(a) > 0)
    assert not np.array_equal(a, sample_rows(1000, 100, seed=4))
    assert np.array_equal(sample_rows(5, None, seed=0), np.arange(5))


def test_reduce_then_cluster_recovers_blobs(tmp_path):
    pids = write_embeddings(tmp_path / "e.npy", blobs())
    reduce(tmp_path / "e.npy", 60, 8, 1, *svd_outputs(tmp_path))
    svd = pq.read_table(tmp_path / "svd.parquet")
    assert svd.num_rows == 60 and svd.schema.field("vector").type == pa.list_(pa.float32(), 8)
    variance = pd.read_parquet(tmp_path / "var.parquet")
    assert len(variance) == 8 and 0.9 < variance["cumulative"].iloc[-1] <= 1.0 + 1e-9

    settings = ClusteringSettings(n_clusters=4, memory_budget_gb=1)
    report = cluster(
        tmp_path / "svd.parquet",
        tmp_path / "var.parquet",
        settings,
        tmp_path / "clusters.parquet",
        tmp_path / "report.json",
    )
    clusters = pd.read_parquet(tmp_path / "clusters.parquet")
    blob_of = {pid: i // 20 for i, pid in enumerate(pids)}
    # Every cluster holds passages of exactly one blob.
    purity = clusters.assign(blob=clusters["pid"].map(blob_of)).groupby("cluster")["blob"].nunique()
    assert (purity == 1).all() and len(purity) == 4
    assert report["clusters"] == 4 and report["passages"] == 60
    assert sum(report["size_histogram"].values()) == 4
    assert json.loads((tmp_path / "report.json").read_text())["explained_variance"] > 0.9


def test_distance_threshold_mode(tmp_path):
    write_embeddings(tmp_path / "e.npy", blobs())
    reduce(tmp_path / "e.npy", None, 8, 1, *svd_outputs(tmp_path))
    settings = ClusteringSettings(n_clusters=None, distance_threshold=25.0, linkage="average")
    report = cluster(
        tmp_path / "svd.parquet",
        tmp_path / "var.parquet",
        settings,
        tmp_path / "c.parquet",
        tmp_path / "r.json",
    )
    assert report["clusters"] == 4 and report["passages"] == 80


def test_sample_larger_than_corpus_fails_clearly(tmp_path):
    write_embeddings(tmp_path / "e.npy", blobs())
    with pytest.raises(InputError) as error:
        reduce(tmp_path / "e.npy", 500, 8, 1, *svd_outputs(tmp_path))
    assert str(error.value) == (
        f"{tmp_path / 'e.npy'}: the corpus has 80 passages, fewer than "
        "clustering.sample_size=500; lower sample_size or set it to null to cluster every passage"
    )


def test_svd_components_must_be_below_the_dimension(tmp_path):
    write_embeddings(tmp_path / "e.npy", blobs(dim=8))
    with pytest.raises(ConfigError, match="svd_components=8 must be below"):
        reduce(tmp_path / "e.npy", None, 8, 1, *svd_outputs(tmp_path))


def test_memory_budget_is_checked_before_clustering():
    # 20k points need about 3.4 GB (measured 3.3 GB for ward, see OFFLINE_ASSETS.md).
    assert 3.0 < estimated_peak_gb(20_000) < 3.6
    check_memory(20_000, budget_gb=4)
    with pytest.raises(ConfigError) as error:
        check_memory(20_000, budget_gb=2)
    message = str(error.value)
    assert "needs about 3.4 GB" in message and "memory_budget_gb=2" in message
    assert "at most 15339" in message  # the largest sample that fits 2 GB


def test_document_windows_group_consecutive_passages():
    corpus = pd.DataFrame(
        {
            "pid": ["a2", "a0", "a1", "b0", "a3", "b1", "c0", "x"],
            "doc_id": ["A", "A", "A", "B", "A", "B", "C", None],
            "position": [2, 0, 1, 0, 3, 1, 0, 0],
        }
    )
    groups = document_windows(corpus, window=3)
    by_cluster = groups.groupby("cluster")["pid"].apply(list).tolist()
    assert by_cluster == [["a0", "a1", "a2"], ["a3"], ["b0", "b1"], ["c0"]]


def test_document_grouping_needs_doc_ids():
    corpus = pd.DataFrame({"pid": ["a"], "doc_id": [None], "position": [0]})
    with pytest.raises(ConfigError, match="needs passages with a doc_id"):
        document_windows(corpus, window=3)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_every_passage_joins_the_cluster_of_its_blob(tmp_path, monkeypatch, metric):
    monkeypatch.setattr(clustering, "ASSIGN_BLOCK", 7)  # several blocks, a partial last one
    pids = write_embeddings(tmp_path / "e.npy", blobs(n_per_blob=30))
    reduce(tmp_path / "e.npy", 40, 8, 1, *svd_outputs(tmp_path))  # a third of the corpus
    assert np.load(tmp_path / "components.npy").shape == (8, 32)
    settings = ClusteringSettings(n_clusters=4, memory_budget_gb=1)
    cluster(tmp_path / "svd.parquet", tmp_path / "var.parquet", settings,
            tmp_path / "clusters.parquet", tmp_path / "report.json")  # fmt: skip
    report = assign_corpus(
        tmp_path / "e.npy", tmp_path / "components.npy", tmp_path / "svd.parquet",
        tmp_path / "clusters.parquet", metric, tmp_path / "all.parquet",
    )  # fmt: skip
    assigned = pd.read_parquet(tmp_path / "all.parquet")
    assert assigned["pid"].tolist() == pids and report["passages"] == 120
    # One cluster per blob, and every passage (sampled or not) in its blob's cluster.
    blob = assigned["pid"].map({pid: i // 30 for i, pid in enumerate(pids)})
    assert assigned.groupby(blob)["cluster"].nunique().eq(1).all()
    assert assigned["cluster"].nunique() == 4
    sample = pd.read_parquet(tmp_path / "clusters.parquet").set_index("pid")["cluster"]
    assert (assigned.set_index("pid").loc[sample.index, "cluster"] == sample).all()
