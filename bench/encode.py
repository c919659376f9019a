"""Encoding throughput: the workflow's encoding job code path vs a plain SentenceTransformer call.

Both encode the same passages (the first N of the embedded Wikipedia corpus) with the same model,
batch size, sequence length and threads. The job path includes everything the `encode_shard` job
does: reading corpus.parquet, loading the model, encoding, writing the .npy shard. Rounds
alternate between the two so that machine noise hits both; the best round of each counts.

    python bench/encode.py [--passages 2000] [--rounds 2] [--threads 2]

Prints passages/second of each and the ratio job/plain (goal >= 0.95).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch
    from sentence_transformers import SentenceTransformer

    from boolbench.corpus import SourceSpec, ingest, read_corpus
    from boolbench.encoding import EncoderSettings, encode_shard, resolve_model

    torch.set_num_threads(args.threads)
    settings = EncoderSettings()  # the config defaults
    work = Path(tempfile.mkdtemp(prefix="boolbench-bench-"))
    corpus = work / "corpus.parquet"
    ingest(
        SourceSpec(source="vital_articles", limit=args.passages),
        corpus,
        work / "q.parquet",
        work / "r.parquet",
    )
    texts = read_corpus(corpus, columns=["text"])["text"].tolist()

    plain_model = SentenceTransformer(resolve_model(settings.model), device="cpu")
    plain_model.max_seq_length = settings.max_seq_length
    plain_model.encode(texts[:64], batch_size=settings.batch_size)  # warm-up

    def plain() -> float:
        start = time.perf_counter()
        plain_model.encode(
            texts, batch_size=settings.batch_size, normalize_embeddings=settings.normalize
        )
        return time.perf_counter() - start

    def job() -> float:
        start = time.perf_counter()
        encode_shard(corpus, 0, 1, settings, work / "shard.npy", threads=args.threads)
        return time.perf_counter() - start

    plain_times, job_times = [], []
    for round_ in range(args.rounds):
        plain_times.append(plain())
        job_times.append(job())
        print(f"round {round_ + 1}: plain {plain_times[-1]:.1f} s, job {job_times[-1]:.1f} s")

    n = len(texts)
    plain_rate, job_rate = n / min(plain_times), n / min(job_times)
    print(f"passages: {n}, threads: {args.threads}, model: {settings.model}")
    print(f"plain SentenceTransformer.encode: {plain_rate:.1f} passages/s")
    print(f"encode_shard job code path:       {job_rate:.1f} passages/s")
    print(f"ratio job/plain: {job_rate / plain_rate:.3f} (goal >= 0.95)")


if __name__ == "__main__":
    main()
