"""Search speed and memory: boolbench's dense search path against a plain numpy brute force.

100,000 passages x 1,000 queries at 384 dims, top 100, exact inner product. "ours" is what the
search job does: build the FAISS flat index from the embeddings file, search, order ties by
the run rule and produce the run table. "numpy" is a blocked matrix product with argpartition.
Each path runs in a fresh process so that its peak memory (VmHWM) is its own.

    python bench/retrieval.py [--passages 100000] [--queries 1000] [--threads 2]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from measure import peak_rss_mb  # noqa: E402  (bench/, beside this script)

DEPTH = 100


def numpy_path(embeddings: str, queries: np.ndarray, threads: int) -> dict:
    start = time.perf_counter()
    vectors = np.load(embeddings)
    top = []
    for block in range(0, len(queries), 256):
        scores = queries[block : block + 256] @ vectors.T
        part = np.argpartition(-scores, DEPTH, axis=1)[:, :DEPTH]
        order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1)
        top.append(np.take_along_axis(part, order, axis=1))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "top": np.concatenate(top)}


def ours_path(embeddings: str, queries: np.ndarray, threads: int) -> dict:
    from boolbench.retrieval.dense import build_index, search_vectors
    from boolbench.retrieval.embeddings import load_embeddings
    from boolbench.retrieval.registry import ModelSpec

    spec = ModelSpec(name="bench", kind="onnx", similarity="dot", index={"type": "flat"})
    start = time.perf_counter()
    index = build_index(embeddings, spec, Path(embeddings).with_suffix(".faiss"), 0, threads)
    pids, _ = load_embeddings(embeddings)
    pids = np.asarray(pids, dtype=object)
    qids = [f"q{i}" for i in range(len(queries))]
    run = search_vectors(index, queries, qids, pids, spec, DEPTH)
    seconds = time.perf_counter() - start
    rows = run["pid"].str.slice(1).astype(int).to_numpy().reshape(len(queries), DEPTH)
    return {"seconds": seconds, "top": rows}


def _child(name, embeddings, queries, threads, results):
    import faiss

    faiss.omp_set_num_threads(threads)
    path = {"numpy": numpy_path, "ours": ours_path}[name]
    out = path(embeddings, queries, threads)
    out["peak_mb"] = peak_rss_mb()
    results.put((name, out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(args.passages, args.dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = vectors[rng.choice(args.passages, args.queries, replace=False)]
    queries = queries + 0.5 * rng.normal(size=queries.shape).astype(np.float32) / args.dim**0.5
    with tempfile.TemporaryDirectory() as tmp:
        embeddings = str(Path(tmp) / "emb.npy")
        np.save(embeddings, vectors)
        pids = pa.table({"pid": [f"p{i}" for i in range(args.passages)]})
        pq.write_table(pids, Path(tmp) / "emb.pids.parquet")
        del vectors
        context = multiprocessing.get_context("spawn")
        results: dict[str, dict] = {}
        for name in ("numpy", "ours"):
            queue = context.Queue()
            process = context.Process(
                target=_child, args=(name, embeddings, queries, args.threads, queue)
            )
            process.start()
            key, value = queue.get()
            process.join()
            results[key] = value

    same = np.mean(
        [
            len(set(a) & set(b)) / DEPTH
            for a, b in zip(results["numpy"]["top"], results["ours"]["top"], strict=True)
        ]
    )
    print(f"{args.passages} passages x {args.queries} queries, dim {args.dim}, top {DEPTH}")
    for name in ("numpy", "ours"):
        r = results[name]
        print(f"{name:>6}: {r['seconds']:.2f} s, peak RSS {r['peak_mb']:.0f} MB")
    ratio = results["ours"]["seconds"] / results["numpy"]["seconds"]
    print(f"time ratio ours/numpy: {ratio:.2f} (index build included)")
    print(
        "peak memory ratio ours/numpy: "
        f"{results['ours']['peak_mb'] / results['numpy']['peak_mb']:.2f}"
    )
    print(f"top-{DEPTH} overlap with numpy: {same:.4f}")


if __name__ == "__main__":
    main()
