"""Passage grouping: random sample -> TruncatedSVD -> agglomerative clustering (paper section
4.1), or windows of consecutive passages of one document (the paper's NQ variant).

Artifacts (Parquet):
- svd.parquet: pid (string), vector (fixed-size list<float32>[svd_components]); the sample.
- svd_components.npy: the fitted projection, float32 [svd_components, embedding dim].
- svd_variance.parquet: component (int32), explained_variance_ratio (float64),
  cumulative (float64).
- clusters.parquet / document_groups.parquet: pid (string), cluster (int64).
- corpus_clusters.parquet (clustering.assign: all): the same for every passage of the corpus.
- clustering_report.json: sizes, size histogram, explained variance.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.errors import ConfigError, InputError, located
from boolbench.io import write_table_atomic
from boolbench.retrieval.embeddings import load_embeddings, save_npy_atomic

log = logging.getLogger(__name__)

CLUSTERS_SCHEMA = pa.schema([("pid", pa.string()), ("cluster", pa.int64())])
VARIANCE_SCHEMA = pa.schema(
    [
        ("component", pa.int32()),
        ("explained_variance_ratio", pa.float64()),
        ("cumulative", pa.float64()),
    ]
)
# Measured peak of sklearn AgglomerativeClustering without connectivity (any linkage): about
# 7.9 bytes per squared sample row at 5k-20k rows (scipy's condensed float64 distance matrix
# plus a working copy); rounded up.
BYTES_PER_SQUARED_ROW = 8.5


@dataclass(frozen=True)
class ClusteringSettings:
    sample_size: int | None = 4000
    svd_components: int = 64
    n_clusters: int | None = 400
    distance_threshold: float | None = None
    linkage: str = "ward"
    metric: str = "euclidean"
    memory_budget_gb: float = 8.0

    @classmethod
    def from_config(cls, section: dict) -> ClusteringSettings:
        keys = cls.__dataclass_fields__
        return cls(**{k: v for k, v in section.items() if k in keys})


def sample_rows(n_rows: int, sample_size: int | None, seed: int) -> np.ndarray:
    """Sorted row indices of a seeded random sample (all rows when sample_size is None)."""
    if sample_size is None:
        return np.arange(n_rows)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(n_rows, size=sample_size, replace=False))


def reduce(
    embeddings_path: str | os.PathLike,
    sample_size: int | None,
    svd_components: int,
    seed: int,
    svd_out: str | os.PathLike,
    variance_out: str | os.PathLike,
    components_out: str | os.PathLike,
) -> None:
    """Sample passages and project their embeddings with TruncatedSVD."""
    from sklearn.decomposition import TruncatedSVD

    pids, vectors = load_embeddings(embeddings_path)
    n_rows, dim = vectors.shape
    if sample_size is not None and sample_size > n_rows:
        raise InputError(
            located(
                embeddings_path,
                f"the corpus has {n_rows} passages, fewer than clustering.sample_size="
                f"{sample_size}; lower sample_size or set it to null to cluster every passage",
            )
        )
    if svd_components >= dim:
        raise ConfigError(
            f"clustering.svd_components={svd_components} must be below the embedding "
            f"dimension {dim} of {embeddings_path}"
        )
    rows = sample_rows(n_rows, sample_size, seed)
    sample = np.asarray(vectors[rows], dtype=np.float32)
    svd = TruncatedSVD(n_components=svd_components, algorithm="randomized", random_state=seed)
    reduced = svd.fit_transform(sample).astype(np.float32)
    log.info(
        "SVD %d x %d -> %d components, explained variance %.3f",
        len(rows),
        dim,
        svd_components,
        svd.explained_variance_ratio_.sum(),
    )
    vector_type = pa.list_(pa.float32(), svd_components)
    table = pa.table(
        {
            "pid": pa.array([pids[i] for i in rows], pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(reduced.ravel()), svd_components),
        },
        schema=pa.schema([("pid", pa.string()), ("vector", vector_type)]),
    )
    write_table_atomic(table, svd_out)
    ratio = svd.explained_variance_ratio_.astype(np.float64)
    variance = pa.table(
        {
            "component": pa.array(np.arange(1, len(ratio) + 1), pa.int32()),
            "explained_variance_ratio": ratio,
            "cumulative": np.cumsum(ratio),
        },
        schema=VARIANCE_SCHEMA,
    )
    write_table_atomic(variance, variance_out)
    save_npy_atomic(svd.components_.astype(np.float32), components_out)


def read_vectors(svd_path: str | os.PathLike) -> tuple[list[str], np.ndarray]:
    """(pids, float32 matrix) from svd.parquet."""
    table = pq.read_table(svd_path)
    column = table.column("vector").combine_chunks()
    width = column.type.list_size
    matrix = column.values.to_numpy(zero_copy_only=False).reshape(-1, width)
    return table.column("pid").to_pylist(), matrix


def estimated_peak_gb(n_rows: int) -> float:
    """Estimated peak memory of agglomerative clustering on n_rows points."""
    return BYTES_PER_SQUARED_ROW * n_rows**2 / 1e9


def check_memory(n_rows: int, budget_gb: float) -> None:
    """Fail before clustering if it would likely exceed the memory budget."""
    need = estimated_peak_gb(n_rows)
    if need > budget_gb:
        largest = int(math.sqrt(budget_gb * 1e9 / BYTES_PER_SQUARED_ROW))
        raise ConfigError(
            f"clustering {n_rows} passages needs about {need:.1f} GB (it grows with the square "
            f"of the sample), above clustering.memory_budget_gb={budget_gb:g}; lower "
            f"clustering.sample_size to at most {largest} or raise memory_budget_gb"
        )


def cluster_vectors(matrix: np.ndarray, settings: ClusteringSettings) -> np.ndarray:
    """Agglomerative cluster labels for the rows of `matrix`."""
    from sklearn.cluster import AgglomerativeClustering

    if settings.n_clusters is not None and settings.n_clusters > len(matrix):
        raise ConfigError(
            f"clustering.n_clusters={settings.n_clusters} exceeds the {len(matrix)} sampled "
            "passages"
        )
    check_memory(len(matrix), settings.memory_budget_gb)
    model = AgglomerativeClustering(
        n_clusters=settings.n_clusters,
        distance_threshold=settings.distance_threshold,
        linkage=settings.linkage,
        metric=settings.metric,
    )
    return model.fit_predict(matrix).astype(np.int64)


def size_histogram(clusters: pd.DataFrame) -> dict[int, int]:
    """Cluster size -> number of clusters of that size."""
    sizes = clusters.groupby("cluster").size()
    return dict(sorted(Counter(sizes.tolist()).items()))


def _write_report(clusters: pd.DataFrame, report_out: str | os.PathLike, extra: dict) -> dict:
    sizes = clusters.groupby("cluster").size()
    report = {
        "passages": len(clusters),
        "clusters": int(sizes.size),
        "clusters_with_2_or_more": int((sizes >= 2).sum()),
        "largest": int(sizes.max()),
        "median_size": float(sizes.median()),
        "size_histogram": {str(k): v for k, v in size_histogram(clusters).items()},
        **extra,
    }
    Path(report_out).write_text(json.dumps(report, indent=2) + "\n")
    log.info(
        "%d passages in %d groups (%d with 2+ passages, largest %d)",
        report["passages"],
        report["clusters"],
        report["clusters_with_2_or_more"],
        report["largest"],
    )
    return report


def cluster(
    svd_path: str | os.PathLike,
    variance_path: str | os.PathLike,
    settings: ClusteringSettings,
    clusters_out: str | os.PathLike,
    report_out: str | os.PathLike,
) -> dict:
    """Cluster the SVD-reduced sample; write clusters.parquet and the report."""
    pids, matrix = read_vectors(svd_path)
    labels = cluster_vectors(matrix, settings)
    clusters = pd.DataFrame({"pid": pids, "cluster": labels})
    write_table_atomic(
        pa.Table.from_pandas(clusters, schema=CLUSTERS_SCHEMA, preserve_index=False),
        clusters_out,
    )
    variance = pq.read_table(variance_path).to_pandas()
    return _write_report(
        clusters,
        report_out,
        {
            "mode": "cluster",
            "linkage": settings.linkage,
            "svd_components": len(variance),
            "explained_variance": float(variance["explained_variance_ratio"].sum()),
        },
    )


# Rows projected and assigned at once: 65,536 x 384 float32 is 100 MB.
ASSIGN_BLOCK = 65_536


def centroids(matrix: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cluster ids, their mean vectors) of the clustered sample."""
    ids, inverse = np.unique(labels, return_inverse=True)
    sums = np.zeros((len(ids), matrix.shape[1]), dtype=np.float64)
    np.add.at(sums, inverse, matrix)
    return ids, (sums / np.bincount(inverse)[:, None]).astype(np.float32)


def nearest(vectors: np.ndarray, centres: np.ndarray, metric: str) -> np.ndarray:
    """Row index of the nearest centre for each vector (cosine for metric cosine, else
    Euclidean: the distance ward and euclidean linkages merge by)."""
    if metric == "cosine":
        vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        centres = centres / np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
        return np.argmax(vectors @ centres.T, axis=1)
    # |v - c|^2 = |v|^2 - 2 v.c + |c|^2; |v|^2 is the same for every c.
    return np.argmin((centres**2).sum(axis=1) - 2 * vectors @ centres.T, axis=1)


def assign_corpus(
    embeddings_path: str | os.PathLike,
    components_path: str | os.PathLike,
    svd_path: str | os.PathLike,
    clusters_path: str | os.PathLike,
    metric: str,
    out: str | os.PathLike,
) -> dict:
    """corpus_clusters.parquet: the sample keeps its clusters; every other passage joins the
    cluster whose centroid is nearest in SVD space. The embeddings are read a block at a
    time from their memory map, so memory stays flat in the corpus size."""
    pids, vectors = load_embeddings(embeddings_path)
    components = np.load(components_path)
    sample_pids, sample_matrix = read_vectors(svd_path)
    labels = pd.read_parquet(clusters_path).set_index("pid")["cluster"]
    ids, centres = centroids(sample_matrix, labels.reindex(sample_pids).to_numpy())
    assigned = np.empty(len(pids), dtype=np.int64)
    for start in range(0, len(pids), ASSIGN_BLOCK):
        block = np.asarray(vectors[start : start + ASSIGN_BLOCK], dtype=np.float32)
        assigned[start : start + len(block)] = ids[nearest(block @ components.T, centres, metric)]
    frame = pd.DataFrame({"pid": pids, "cluster": assigned})
    in_sample = frame["pid"].isin(labels.index)
    frame.loc[in_sample, "cluster"] = frame.loc[in_sample, "pid"].map(labels).to_numpy()
    write_table_atomic(
        pa.Table.from_pandas(frame, schema=CLUSTERS_SCHEMA, preserve_index=False), out
    )
    moved = int((frame.loc[in_sample, "cluster"] != assigned[in_sample.to_numpy()]).sum())
    log.info(
        "%d passages assigned to %d clusters; %d of the %d sampled passages have another "
        "nearest centroid than their own cluster",
        len(frame),
        len(ids),
        moved,
        int(in_sample.sum()),
    )
    return {"passages": len(frame), "clusters": len(ids), "sample_not_nearest": moved}


def document_windows(corpus: pd.DataFrame, window: int) -> pd.DataFrame:
    """Groups of `window` consecutive passages (by position) within each doc_id."""
    with_doc = corpus[corpus["doc_id"].notna()]
    if with_doc.empty:
        raise ConfigError(
            "grouping: document needs passages with a doc_id, and this corpus has none; "
            "use grouping: cluster or map a doc_id column"
        )
    # Docs in order of first appearance; stable sort keeps file order for equal positions.
    doc_order = {doc: i for i, doc in enumerate(pd.unique(with_doc["doc_id"]))}
    ordered = with_doc.assign(_doc=with_doc["doc_id"].map(doc_order)).sort_values(
        ["_doc", "position"], kind="stable"
    )
    index_in_doc = ordered.groupby("_doc").cumcount().to_numpy()
    # A new group starts at every window boundary and at every new doc (index 0).
    cluster_ids = np.cumsum(index_in_doc % window == 0) - 1
    return pd.DataFrame({"pid": ordered["pid"].to_numpy(), "cluster": cluster_ids})


def group_by_document(
    corpus_path: str | os.PathLike,
    window: int,
    groups_out: str | os.PathLike,
    report_out: str | os.PathLike,
) -> dict:
    """Write document_groups.parquet (pid, cluster) and its report."""
    corpus = pq.read_table(corpus_path, columns=["pid", "doc_id", "position"]).to_pandas()
    try:
        groups = document_windows(corpus, window)
    except ConfigError as err:
        raise ConfigError(f"{corpus_path}: {err}") from None
    write_table_atomic(
        pa.Table.from_pandas(groups, schema=CLUSTERS_SCHEMA, preserve_index=False), groups_out
    )
    return _write_report(groups, report_out, {"mode": "document", "window": window})
