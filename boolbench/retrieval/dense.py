"""Dense retrieval: encode the corpus per model, build a FAISS index, search it.

Artifacts (per corpus and model):
- models/{model}/embeddings.npy + embeddings.pids.parquet (the format of
  boolbench.retrieval.embeddings), unless the model reuses the clustering encoder's embeddings.
- models/{model}/index.faiss: the FAISS index over those vectors, rows in id-map order.
Document-scoped runs (boolbench.retrieval.runs) score a document's passages exactly from the
embeddings, whatever the index type.
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pandas as pd

from boolbench.corpus.sources import DEFAULT_TEMPLATE, shard_passages
from boolbench.errors import ConfigError, InputError
from boolbench.io import atomic_path
from boolbench.retrieval.document_scope import DocumentScope
from boolbench.retrieval.embeddings import load_embeddings, save_npy_atomic
from boolbench.retrieval.encoders import load_dense_encoder
from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.runs import TIE_MARGIN, QuerySet, hits_from_arrays, rank_hits

log = logging.getLogger(__name__)
SEARCH_BATCH = 4096  # queries per FAISS call: bounds the score matrix of exact search


def encode_model_shard(
    corpus_path: str | os.PathLike,
    shard: int,
    n_shards: int,
    spec: ModelSpec,
    out_path: str | os.PathLike,
    threads: int | None = None,
    passage_template: str = DEFAULT_TEMPLATE,
) -> int:
    """Encode one shard of the corpus (passages rendered by `passage_template`) with a dense
    model into a .npy file."""
    texts = shard_passages(corpus_path, shard, n_shards, passage_template)
    encoder = load_dense_encoder(spec, threads)
    save_npy_atomic(encoder.encode_passages(texts), out_path)
    return len(texts)


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


def search_vectors(
    index, query_vectors: np.ndarray, qids: list[str], pids: np.ndarray, spec: ModelSpec, depth: int
) -> pd.DataFrame:
    """The run (qid, pid, rank, score) of already-encoded queries, ties broken by runs' rule."""
    k = min(depth + TIE_MARGIN, index.ntotal)
    parts = []
    for start in range(0, len(qids), SEARCH_BATCH):
        batch = search_vectors_of(query_vectors[start : start + SEARCH_BATCH], spec)
        scores, indices = index.search(batch, k)
        parts.append(hits_from_arrays(qids[start : start + SEARCH_BATCH], indices, scores, pids))
    hits = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return rank_hits(hits, qids, depth)


def document_run_dense(
    vectors: np.ndarray,
    pids: np.ndarray,
    query_vectors: np.ndarray,
    qids: list[str],
    scope: DocumentScope,
    spec: ModelSpec,
) -> pd.DataFrame:
    """The document-scoped run: every passage of each scoped query's document, scored against
    the query with the index's similarity (exact, from `vectors`, rows in `pids` order)."""
    by_document = scope.queries_by_document(qids)
    if not by_document:
        return rank_hits(pd.DataFrame(), [], 0)
    row_of = pd.Index(pids).get_indexer
    position = {qid: i for i, qid in enumerate(qids)}
    parts = []
    for doc, doc_qids in by_document.items():
        doc_pids = np.asarray(scope.passages[doc], dtype=object)
        rows = row_of(doc_pids)
        if (rows < 0).any():
            raise InputError(
                f"models.{spec.name}: passages {list(doc_pids[rows < 0][:5])} of document "
                f"{doc!r} have no embedding; rebuild the model's embeddings"
            )
        passages = search_vectors_of(vectors[rows], spec)
        queries = search_vectors_of(query_vectors[[position[q] for q in doc_qids]], spec)
        scores = queries @ passages.T
        parts.append(
            pd.DataFrame(
                {
                    "qid": np.repeat(np.asarray(doc_qids, dtype=object), len(doc_pids)),
                    "pid": np.tile(doc_pids, len(doc_qids)),
                    "score": scores.ravel().astype(np.float64),
                }
            )
        )
    scoped = [q for q in qids if q in scope]
    return rank_hits(pd.concat(parts, ignore_index=True), scoped, max(scope.sizes().values()))


def search_dense(
    index_path: str | os.PathLike,
    embeddings_path: str | os.PathLike,
    spec: ModelSpec,
    query_sets: list[QuerySet],
    depth: int,
    threads: int | None = None,
) -> list[tuple[pd.DataFrame, pd.DataFrame]]:
    """(run, document-scoped run) per query set; the model is loaded once for all of them."""
    pids, vectors = load_embeddings(embeddings_path)
    pids = np.asarray(pids, dtype=object)
    index = load_index(index_path, spec, threads)
    encoder = load_dense_encoder(spec, threads)
    runs = []
    for qids, texts, scope in query_sets:
        qids, texts = list(qids), list(texts)
        encoded = encoder.encode_queries(texts) if texts else np.zeros((0, encoder.dim))
        runs.append(
            (
                search_vectors(index, encoded, qids, pids, spec, depth),
                document_run_dense(vectors, pids, encoded, qids, scope, spec),
            )
        )
    return runs
