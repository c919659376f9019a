"""The artifact registry (boolbench/paths.py) is the one place artifact paths are written:
the rules name them by key, every file a rule writes is in it, and docs/artifacts.md is the
registry and the rules rendered."""

import re

import pytest

from boolbench.artifact_reference import REFERENCE, REPO, makers, render, step_calls
from boolbench.paths import ARTIFACTS, artifact


@pytest.fixture(scope="module")
def rules():
    from boolbench.artifact_reference import workflow_rules

    return workflow_rules()


def test_the_artifact_reference_is_the_registry_rendered(rules):
    assert REFERENCE.read_text(encoding="utf-8") == render(rules), (
        "docs/artifacts.md differs from the registry or the rules: run "
        "python -m boolbench.artifact_reference"
    )


def test_every_file_a_rule_writes_is_a_registry_artifact_and_every_artifact_has_a_rule(rules):
    registered = set(ARTIFACTS.values())
    unregistered = [(r["rule"], o) for r in rules for o in r["outputs"] if o not in registered]
    assert not unregistered, f"outputs missing from boolbench/paths.py: {unregistered}"
    orphans = [key for key, made in makers(rules).items() if not made]
    assert not orphans, f"artifacts no rule writes: {orphans}"


def test_rules_name_paths_only_through_the_registry():
    files = [REPO / "Snakefile", *sorted((REPO / "rules").rglob("*.smk"))]
    literal = [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "results/" in line and not line.lstrip().startswith("#")
    ]
    assert not literal, "\n".join(literal)


def test_every_workflow_script_calls_one_step_function(rules):
    scripts = {r["script"] for r in rules if r["script"]}
    assert scripts == {
        f"workflow_scripts/{p.name}"
        for p in (REPO / "workflow_scripts").glob("*.py")
        if not p.name.startswith("_")
    }
    calls = {s: step_calls(REPO / s) for s in sorted(scripts)}
    broken = {s: called for s, called in calls.items() if len(called) != 1}
    assert not broken, f"scripts that do not call exactly one boolbench step: {broken}"


def test_artifact_fills_the_wildcards_it_is_given():
    assert artifact("dataset") == "results/{corpus}/boolquestions.parquet"
    assert artifact("run", corpus="wiki", model="bm25") == "results/wiki/runs/bm25.parquet"
    # Others stay patterns, for Snakemake to fill from a job's wildcards.
    assert artifact("embedding_shard", corpus="wiki", shard=0) == (
        "results/wiki/models/{model}/shard-0-of-{n_shards}.npy"
    )
    with pytest.raises(KeyError, match="'datset' is not an artifact"):
        artifact("datset")
    assert all(re.fullmatch(r"results/\{corpus\}/[\w{}./-]+", p) for p in ARTIFACTS.values())
