"""Dense retrieval: encode the corpus per model, build a FAISS index, search it.

Artifacts (per corpus and model):
- models/{model}/embeddings.npy + embeddings.pids.parquet (the format of
  boolbench.retrieval.embeddings, encoded by boolbench.retrieval.encoders.encode_shard), unless
  the model reuses the clustering encoder's (models/clustering-encoder/).
- models/{model}/index.faiss: the FAISS index over those vectors, rows in id-map order.
Searching goes through DenseIndex (the SearchIndex of boolbench.retrieval.search).
Document-scoped runs (boolbench.retrieval.runs) score a document's passages exactly from the
embeddings, whatever the index type.
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pandas as pd

from boolbench.errors import ConfigError
from boolbench.io import atomic_path
from boolbench.retrieval.embeddings import load_embeddings
from boolbench.retrieval.encoders import load_dense_encoder
from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.runs import TIE_MARGIN, hits_from_arrays, rank_hits

log = logging.getLogger(__name__)
SEARCH_BATCH = 4096  # queries per FAISS call: bounds the score matrix of exact search


def search_vectors_of(vectors: np.ndarray, spec: ModelSpec) -> np.ndarray:
    """float32 vectors as the index compares them (L2-normalised for cosine similarity)."""
    import faiss

    # A copy: the input may be a read-only memory map, and normalize_L2 works in place.
    vectors = np.array(vectors, dtype=np.float32, order="C", copy=True)
    if spec.similarity == "cosine":
        faiss.normalize_L2(vectors)
    return vectors


def build_index(
    embeddings_path: str | os.PathLike,
    spec: ModelSpec,
    out_path: str | os.PathLike,
    seed: int,
    threads: int | None = None,
):
    """Build the model's FAISS index (flat, hnsw or ivfpq by `spec.index`) and write it."""
    import faiss

    if threads:
        faiss.omp_set_num_threads(threads)
    _, vectors = load_embeddings(embeddings_path)
    n, dim = vectors.shape
    settings = spec.index
    kind = settings.get("type", "flat")
    where = f"models.{spec.name}.index"
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    elif kind == "hnsw":
        index = faiss.IndexHNSWFlat(dim, settings["hnsw_m"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = settings["ef_construction"]
    elif kind == "ivfpq":
        if dim % settings["pq_m"]:
            raise ConfigError(f"{where}.pq_m: {settings['pq_m']} does not divide dimension {dim}")
        nlist = settings["nlist"]
        if nlist > n:
            raise ConfigError(f"{where}.nlist: {nlist} lists for {n} passages; use at most {n}")
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFPQ(
            quantizer, dim, nlist, settings["pq_m"], settings["pq_bits"], faiss.METRIC_INNER_PRODUCT
        )
        sample = np.random.default_rng(seed).permutation(n)[: settings["train_size"]]
        index.train(search_vectors_of(vectors[np.sort(sample)], spec))
    else:
        raise ConfigError(f"{where}.type: unknown index type {kind!r}")
    # Added in blocks, so a memory-mapped embeddings file is never copied whole for cosine.
    for start in range(0, n, 100_000):
        index.add(search_vectors_of(vectors[start : start + 100_000], spec))
    log.info("%s index of %d vectors (dim %d) for %s", kind, n, dim, spec.name)
    with atomic_path(out_path) as temp:
        faiss.write_index(index, str(temp))
    return index


def load_index(path: str | os.PathLike, spec: ModelSpec, threads: int | None = None):
    """A written index with the model's search-time settings (ef_search, nprobe)."""
    import faiss

    if threads:
        faiss.omp_set_num_threads(threads)
    index = faiss.read_index(str(path))
    kind = spec.index.get("type", "flat")
    if kind == "hnsw":
        index.hnsw.efSearch = spec.index["ef_search"]
    elif kind == "ivfpq":
        index.nprobe = spec.index["nprobe"]
    return index


def top_vectors(index, query_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(indices, scores) [n_queries, k] of the nearest rows of `index` (-1: none) for vectors
    already in the index's form (search_vectors_of), in batches of SEARCH_BATCH queries."""
    k = min(k, index.ntotal)
    indices, scores = np.zeros((0, k), np.int64), np.zeros((0, k), np.float32)
    parts = [index.search(query_vectors[i : i + SEARCH_BATCH], k)
             for i in range(0, len(query_vectors), SEARCH_BATCH)]  # fmt: skip
    if parts:
        scores = np.concatenate([p[0] for p in parts])
        indices = np.concatenate([p[1] for p in parts])
    return indices, scores


def search_vectors(
    index, query_vectors: np.ndarray, qids: list[str], pids: np.ndarray, spec: ModelSpec, depth: int
) -> pd.DataFrame:
    """The run (qid, pid, rank, score) of already-encoded queries, ties broken by runs' rule."""
    queries = search_vectors_of(query_vectors, spec)
    indices, scores = top_vectors(index, queries, depth + TIE_MARGIN)
    return rank_hits(hits_from_arrays(qids, indices, scores, pids), qids, depth)


class DenseIndex:
    """A dense model ready to search (boolbench.retrieval.search.SearchIndex): its FAISS index, its
    passage vectors (exact scores, whatever the index type) and its query encoder."""

    def __init__(self, spec: ModelSpec, index_path, embeddings_path, threads: int | None = None):
        self.spec = spec
        pids, self.vectors = load_embeddings(embeddings_path)
        self.pids = np.asarray(pids, dtype=object)
        self.index = load_index(index_path, spec, threads)
        self.threads = threads
        self.encoder = None  # loaded by the first query: scoring given vectors needs none

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.vectors.shape[1]), np.float32)
        if self.encoder is None:
            self.encoder = load_dense_encoder(self.spec, self.threads)
        return search_vectors_of(self.encoder.encode_queries(texts), self.spec)

    def top(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return top_vectors(self.index, queries, k)

    def scores(self, queries, rows: np.ndarray) -> np.ndarray:
        passages = search_vectors_of(self.vectors[rows], self.spec)
        return np.asarray(queries, dtype=np.float32).reshape(-1, passages.shape[1]) @ passages.T
