"""Time and peak memory per stage at 10k, 100k and 1M passages on this machine (the README's
scaling table). Run outside CI, after the default run (it reads results/wiki/):

    python bench/scale.py [--sizes 10000 100000 1000000] [--work /tmp/boolbench-scale]

Only 10,033 real passages (and their all-MiniLM-L6-v2 embeddings) exist offline, and encoding
1M passages on 2 CPU cores takes hours, so the corpora are built from them: passage i of a size-N
corpus is wiki passage i % 10,033 (own pid), and its embedding is that passage's real vector
plus Gaussian noise (sigma 0.05 per dimension, renormalised), so near-duplicates stay near each
other and clusters keep their real structure. Encoding throughput is measured separately by
bench/encode.py. Each stage runs the workflow's own library function in a fresh process, so
its peak memory (VmHWM, the peak resident set) is its own:

- ingest: a Parquet corpus of N rows -> corpus.parquet (row groups streamed);
- reduce: 4,000-passage sample -> TruncatedSVD (64 components);
- cluster: agglomerative (ward) on the sample, 400 clusters;
- assign: every passage to its nearest centroid (clustering.assign: all), from the memory map;
- index: FAISS flat (exact) and IVF-PQ (nlist 1024, 48 x 8-bit codes, 200k training vectors);
- search: 1,000 queries, top 100, on each index; IVF-PQ's recall of the exact top 100.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from measure import peak_rss_mb  # noqa: E402  (bench/, beside this script)

QUERIES = 1_000
INDEXES = {
    "flat": {"type": "flat"},
    "ivfpq": {"type": "ivfpq", "nlist": 1024, "pq_m": 48, "pq_bits": 8, "nprobe": 32,
              "train_size": 200_000},
}  # fmt: skip


def build_inputs(base: Path, size: int, work: Path) -> dict[str, Path]:
    """A size-N source corpus and embeddings file made from the real wiki ones."""
    from boolbench.retrieval.embeddings import PIDS_SCHEMA, pids_path

    corpus = pq.read_table(base / "corpus.parquet", columns=["pid", "title", "text"])
    vectors = np.load(base / "models" / "clustering-encoder" / "embeddings.npy", mmap_mode="r")
    n_real = corpus.num_rows
    folder = work / str(size)
    folder.mkdir(parents=True, exist_ok=True)
    rows = np.arange(size) % n_real
    pids = [f"{pid}#{i}" for i, pid in enumerate(np.array(corpus["pid"])[rows])]
    source = corpus.take(pa.array(rows)).set_column(0, "pid", pa.array(pids))
    pq.write_table(source, folder / "source.parquet", row_group_size=100_000)

    embeddings = folder / "embeddings.npy"
    out = np.lib.format.open_memmap(embeddings, mode="w+", dtype=np.float32, shape=(size, 384))
    rng = np.random.default_rng(0)
    for start in range(0, size, 100_000):
        block = np.asarray(vectors[rows[start : start + 100_000]], dtype=np.float32)
        block = block + rng.normal(0, 0.05, block.shape).astype(np.float32)
        out[start : start + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    out.flush()
    del out
    pq.write_table(pa.table({"pid": pids}, schema=PIDS_SCHEMA), pids_path(embeddings))
    queries = np.asarray(np.load(embeddings, mmap_mode="r")[rng.choice(size, QUERIES)])
    np.save(folder / "queries.npy", queries + rng.normal(0, 0.02, queries.shape))
    return {"folder": folder, "source": folder / "source.parquet", "embeddings": embeddings}


def stage(name: str, folder: Path) -> None:
    """Run one stage on the files in `folder` (in the child process)."""
    from boolbench.corpus.sources import SourceSpec, ingest
    from boolbench.grouping import clustering
    from boolbench.retrieval.dense import build_index, load_index, search_vectors
    from boolbench.retrieval.registry import ModelSpec

    emb = folder / "embeddings.npy"
    if name == "ingest":
        spec = SourceSpec.from_config(
            {"source": "parquet", "path": str(folder / "source.parquet"),
             "columns": {"pid": "pid", "text": "text", "title": "title"}}
        )  # fmt: skip
        ingest(spec, folder / "corpus.parquet", folder / "q.parquet", folder / "qrels.parquet")
    elif name == "reduce":
        clustering.reduce(emb, 4000, 64, 13, folder / "svd.parquet", folder / "var.parquet",
                          folder / "components.npy")  # fmt: skip
    elif name == "cluster":
        settings = clustering.ClusteringSettings(n_clusters=400)
        clustering.cluster(folder / "svd.parquet", folder / "var.parquet", settings,
                           folder / "clusters.parquet", folder / "report.json")  # fmt: skip
    elif name == "assign":
        clustering.assign_corpus(emb, folder / "components.npy", folder / "svd.parquet",
                                 folder / "clusters.parquet", "euclidean",
                                 folder / "corpus_clusters.parquet")  # fmt: skip
    elif name.startswith("index-"):
        kind = name.removeprefix("index-")
        spec = ModelSpec(name="bench", kind="onnx", index=INDEXES[kind])
        build_index(emb, spec, folder / f"{kind}.faiss", seed=13, threads=2)
    elif name.startswith("search-"):
        kind = name.removeprefix("search-")
        spec = ModelSpec(name="bench", kind="onnx", index=INDEXES[kind])
        index = load_index(folder / f"{kind}.faiss", spec, threads=2)
        pids = np.asarray(pq.read_table(folder / "embeddings.pids.parquet")["pid"], dtype=object)
        queries = np.load(folder / "queries.npy").astype(np.float32)
        run = search_vectors(index, queries, [f"q{i}" for i in range(QUERIES)], pids, spec, 100)
        run.to_parquet(folder / f"{kind}.run.parquet")
    else:
        raise ValueError(name)


def _child(name: str, folder: Path, results) -> None:
    import faiss

    faiss.omp_set_num_threads(2)
    start = time.perf_counter()
    stage(name, folder)
    seconds = time.perf_counter() - start
    results.put((seconds, peak_rss_mb()))


def measure(name: str, folder: Path) -> tuple[float, float]:
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    process = context.Process(target=_child, args=(name, folder, results))
    process.start()
    out = results.get()
    process.join()
    if process.exitcode:
        raise RuntimeError(f"stage {name} failed with exit code {process.exitcode}")
    return out


STAGES = ["ingest", "reduce", "cluster", "assign", "index-flat", "search-flat", "index-ivfpq",
          "search-ivfpq"]  # fmt: skip


def overlap(approximate: Path, exact: Path) -> float:
    """Mean share of each query's exact top 100 that the approximate run also returns."""
    a = pd.read_parquet(approximate).groupby("qid")["pid"].apply(set)
    e = pd.read_parquet(exact).groupby("qid")["pid"].apply(set)
    return float(np.mean([len(a.get(q, set()) & pids) / len(pids) for q, pids in e.items()]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--base", type=Path, default=REPO / "results" / "wiki")
    parser.add_argument("--work", type=Path, default=Path("/tmp/boolbench-scale"))
    args = parser.parse_args()

    table, recall = {}, {}
    for size in args.sizes:
        folder = build_inputs(args.base, size, args.work)["folder"]
        for name in STAGES:
            seconds, peak_mb = measure(name, folder)
            table[(name, size)] = (seconds, peak_mb)
            print(f"{size:>9,} {name:<13} {seconds:8.1f} s {peak_mb:8.0f} MB", flush=True)
        recall[size] = overlap(folder / "ivfpq.run.parquet", folder / "flat.run.parquet")
        print(f"{size:>9,} IVF-PQ top-100 recall of the exact top 100: {recall[size]:.3f}")
    print()
    print("| stage | " + " | ".join(f"{s:,} passages" for s in args.sizes) + " |")
    print("|---" * (len(args.sizes) + 1) + "|")
    for name in STAGES:
        cells = [f"{table[(name, s)][0]:.1f} s / {table[(name, s)][1]:,.0f} MB" for s in args.sizes]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("| IVF-PQ recall of the exact top 100 | " + " | ".join(
        f"{recall[s]:.3f}" for s in args.sizes) + " |")  # fmt: skip
    largest = max(args.sizes)
    emb_gb = largest * 384 * 4 / 1e9
    print(f"\nembeddings at {largest:,}: {emb_gb:.2f} GB on disk (memory-mapped)")
    frame = pd.DataFrame(
        [(n, s, *v) for (n, s), v in table.items()], columns=["stage", "size", "s", "mb"]
    )
    frame.to_csv(args.work / "scale.csv", index=False)


if __name__ == "__main__":
    main()
