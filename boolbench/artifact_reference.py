"""The artifact reference (docs/artifacts.md), generated from the artifact registry
(boolbench.paths) and the workflow's rules.

For each artifact: its path, the rule that writes it (read from the parsed Snakefile), that
rule's script and the boolbench step function the script calls, and what the file holds (the
registry's description). tests/test_artifact_reference.py fails when docs/artifacts.md differs
from what this renders (regenerate with `python -m boolbench.artifact_reference`), when a rule
writes a file the registry does not name, or when an artifact has no rule.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from boolbench.artifacts import RULES_FILE_ENV
from boolbench.paths import ARTIFACTS, DOC_ROWS, RESULTS

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO / "docs" / "artifacts.md"
# Glue every script calls besides its step (boolbench.workflow).
GLUE = {"script_context", "llm_job", "job_shard", "model_spec"}

HEADER = """# Pipeline artifacts

[Back to the README](../README.md)

Generated from the artifact registry (`boolbench/paths.py`) and the workflow's rules by
`python -m boolbench.artifact_reference`; do not edit by hand (a test fails when they differ).
Each `{corpus}` of the config gets a folder `results/{corpus}/`; listing it lists the pipeline.
Rules name every path by its registry key (`artifact("corpus")`), and so can tests
(`boolbench.paths.artifact("dataset", corpus="wiki")`). Every rule writes a log under
`logs/{corpus}/` and heavy rules a benchmark under `benchmarks/`. A stage reads from README to
rule to script to step function: the table gives the last three for each file.

| artifact (under `results/{corpus}/`) | rule | script | step function | contents |
|---|---|---|---|---|
"""

FOOTER = """
The **dataset card** (`released/README.md`, `beir/README.md`; `boolbench/dataset_card.py`): a
YAML header as Hugging Face dataset cards have (`configs` naming the export's files: for the
released layout `<corpus>` with split `eval` and `<corpus>-corpus`, as the hub's BoolQuestions
names them; for BEIR `default` (the completed qrels), `group`, `negatives`, `corpus`,
`queries`, as MTEB names them; `license` of the corpus where the source states one, else
`unknown`; `task_categories: text-retrieval`), then the passage template Table 2 was scored
with (`corpora.<name>.passage_template`), the construction (groups, LLM, filter, group labels,
pooling depth, pooled models and judge), the label counts per type and split (group
positives/negatives, pooled positives/negatives), the files, how Table 2 was scored, and the
config sections that made the dataset (the corpus entry; seed, llm (the keys that decide the
replies), generation, filter, split, pooling; evaluation.depth). The settings are the export
rules' params, so a change to any of them rewrites the exports and their cards.

The **question columns**: `question` (null when dropped), `source` (`llm` or `template`),
`status` (`ok`, `fallback`, `dropped`), `reason` (why the last LLM attempt was invalid),
`attempts`, `prompt_hash` (12 hex digits of the exact system message and template), `model`.

**Embedding format** (one for the whole project): `<name>.npy` is a float32 array
`[n_passages, dim]` whose row *i* encodes the pid in row *i* of `<name>.pids.parquet` (one
column `pid`; its footer metadata `boolbench` holds the encoder settings as JSON). `.npy` is
memory-mappable, so large sets are read without a copy; the gather step writes through a memory
map and never holds more than one shard.

**Stable candidate sampling.** Groups are visited in an order fixed by the seed and each group's
smallest pid, and group *g* draws n from {2, 3} and its passages with a generator seeded by
(seed, *g*). Raising `candidates.n_groups` appends groups and leaves every earlier group
identical, so later LLM work on them is reused.
"""


def workflow_rules(repo: Path = REPO) -> list[dict]:
    """Every rule of the Snakefile: {rule, outputs (patterns, constraints removed), script
    (path from the repository root, or None)}, from parsing it with the shipped config."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "rules.json"
        subprocess.run(
            [sys.executable, "-m", "snakemake", "--list-rules", "--directory", folder],
            cwd=repo,
            env={**os.environ, RULES_FILE_ENV: str(out)},
            check=True,
            capture_output=True,
        )
        rules = json.loads(out.read_text())
    for rule in rules:
        rule["outputs"] = [strip_constraints(p) for p in rule["outputs"]]
        if rule["script"]:
            rule["script"] = f"workflow_scripts/{Path(rule['script']).name}"
    return rules


def strip_constraints(pattern: str) -> str:
    """results/{corpus,wiki}/x -> results/{corpus}/x."""
    return re.sub(r"\{(\w+),[^{}]*\}", r"{\1}", pattern)


def step_calls(script: Path) -> list[str]:
    """The boolbench functions a workflow script calls by name (module.function), glue and
    settings classes (X.from_config) aside: its step function, one by the step contract."""
    tree = ast.parse(script.read_text())
    imported = {
        alias.asname or alias.name: f"{node.module.removeprefix('boolbench.')}.{alias.name}"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("boolbench")
        for alias in node.names
    }
    return [
        imported[node.func.id]
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in imported
        and node.func.id not in GLUE
    ]


def step_function(script: Path) -> str | None:
    """The step function a workflow script calls."""
    return next(iter(step_calls(script)), None)


def makers(rules: list[dict]) -> dict[str, list[dict]]:
    """Artifact key -> the rules that write its path."""
    by_path = {}
    for rule in rules:
        for output in rule["outputs"]:
            by_path.setdefault(output, []).append(rule)
    return {key: by_path.get(path, []) for key, path in ARTIFACTS.items()}


def render(rules: list[dict], repo: Path = REPO) -> str:
    made_by = makers(rules)
    lines = []
    for text, keys in DOC_ROWS:
        paths = ", ".join(f"`{ARTIFACTS[k].removeprefix(RESULTS)}`" for k in keys)
        row_rules = list(dict.fromkeys(r["rule"] for k in keys for r in made_by[k]))
        scripts = list(dict.fromkeys(r["script"] for k in keys for r in made_by[k] if r["script"]))
        steps = [step_function(repo / s) for s in scripts]
        lines.append(
            f"| {paths} | {', '.join(f'`{r}`' for r in row_rules)} | "
            f"{', '.join(f'`{s}`' for s in scripts)} | "
            f"{', '.join(f'`{s}`' for s in steps if s)} | {text} |"
        )
    return HEADER + "\n".join(lines) + "\n" + FOOTER


def main() -> None:
    text = render(workflow_rules())
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REFERENCE
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
