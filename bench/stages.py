"""Per-stage time of a finished run, read from its benchmarks/ folder (Snakemake's `benchmark:`
files: wall seconds `s` and `cpu_time` of every heavy job).

    python bench/stages.py [RUN_DIR] [--corpus wiki] [--markdown]

Prints one row per stage (jobs of the same rule summed: shards, models, LLM steps), the sum of
job seconds (the issue 17 goal: <= 2,400 on the default run) and, where the run's Snakemake
log is present, the run's wall time from its first to its last job.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

# benchmark file (relative to benchmarks/{corpus}/, without .tsv) -> stage name
STAGES = [
    (r"^ingest$", "ingest"),
    # (before models/clustering-encoder/, runs kept the clustering encoder's benchmark here)
    (r"^(models/clustering-encoder/)?encode_shard-", "encode corpus (clustering encoder)"),
    (r"^(reduce|cluster)$", "SVD + clustering"),
    (r"^disjunctive_questions/", "LLM: each group's kind (1.5B)"),
    (r"^simple_questions/", "LLM: simple questions per member (0.5B)"),
    (r"^compose_(and|or|not)/", "AND/OR/NOT from templates"),
    (r"^filter/", "LLM: judge: filter, answerer check, pooling (1.5B)"),
    (r"^models/[^/]+/encode_shard-", "encode corpus per model"),
    (r"^models/[^/]+/build_index$", "indexes"),
    (r"^models/[^/]+/(search|rerank)$", "search"),
    (r"^decompose_questions/", "LLM: decomposition baseline (0.5B)"),
    (r"^baselines/train_contrastive", "contrastive training"),
    (r"^baselines/", "Boolean-operation baselines"),
    (r"^significance$", "significance tests"),
]


def stage_of(name: str) -> str:
    for pattern, stage in STAGES:
        if re.search(pattern, name):
            return stage
    return name


def read_benchmarks(run: Path, corpus: str) -> pd.DataFrame:
    base = run / "benchmarks" / corpus
    rows = []
    for path in sorted(base.rglob("*.tsv")):
        frame = pd.read_csv(path, sep="\t")
        name = str(path.relative_to(base)).removesuffix(".tsv")
        rows.append(
            {
                "job": name,
                "stage": stage_of(name),
                "s": float(frame["s"].iloc[0]),
                "cpu_s": float(frame["cpu_time"].iloc[0]),
            }
        )
    if not rows:
        raise SystemExit(f"{base}: no benchmark files (run the workflow first)")
    return pd.DataFrame(rows)


def run_wall_s(run: Path) -> float | None:
    """First to last job timestamp of the newest Snakemake log."""
    logs = sorted((run / ".snakemake" / "log").glob("*.snakemake.log"))
    if not logs:
        return None
    stamps = re.findall(r"^\[(\w{3} \w{3} +\d+ [\d:]+ \d{4})\]$", logs[-1].read_text(), re.M)
    if len(stamps) < 2:
        return None
    times = pd.to_datetime(stamps, format="%a %b %d %H:%M:%S %Y")
    return (times.max() - times.min()).total_seconds()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", default=".", type=Path)
    parser.add_argument("--corpus", default="wiki")
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    jobs = read_benchmarks(args.run, args.corpus)
    order = {stage: i for i, (_, stage) in enumerate(STAGES)}
    table = (
        jobs.groupby("stage")
        .agg(jobs=("job", "size"), wall_s=("s", "sum"), cpu_s=("cpu_s", "sum"))
        .sort_index(key=lambda index: index.map(lambda s: order.get(s, len(order))))
        .reset_index()
    )
    total = {"stage": "sum of job seconds", "jobs": len(jobs),
             "wall_s": jobs["s"].sum(), "cpu_s": jobs["cpu_s"].sum()}  # fmt: skip
    table = pd.concat([table, pd.DataFrame([total])], ignore_index=True)
    if args.markdown:
        print("| stage | jobs | job seconds | CPU seconds |\n|---|---|---|---|")
        for row in table.itertuples():
            print(f"| {row.stage} | {row.jobs} | {row.wall_s:.0f} | {row.cpu_s:.0f} |")
    else:
        print(table.round(1).to_string(index=False))
    print(f"\nsum of job seconds {jobs['s'].sum():.0f} (goal <= 2400)")
    wall = run_wall_s(args.run)
    if wall is not None:
        print(f"run wall time, first to last job: {wall / 60:.1f} min")


if __name__ == "__main__":
    main()
