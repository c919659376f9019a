"""Shared test fixtures.

Tests come in two groups, marked automatically (pyproject registers the markers):
- `workflow`: tests that run the real Snakefile through `Workflow`: those that take the
  `workflow` fixture (marked here) and the modules whose fixtures build one (test_workflow*.py,
  test_slurm.py: `pytestmark` at their top); `slurm` marks the real-SLURM test on top.
- `unit`: everything else (the library, without Snakemake).
`pytest -m unit` skips the workflow runs (most of the suite's time); `pytest` runs both.
tests/README.md lists the fixtures that run the real workflow and the helper modules.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]

# Model weights come from installed packages only; never reach for a hub in tests.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def tiny_config(**overrides) -> dict:
    """A workflow config small enough to run end to end in seconds (60 Wikipedia passages)."""
    config = {
        "seed": 7,
        "corpora": {"tiny": {"source": "vital_articles", "limit": 60}},
        "encoder": {"batch_size": 16, "max_seq_length": 128, "shards": 2},
        "clustering": {"sample_size": 40, "svd_components": 8, "n_clusters": 8},
        "candidates": {"n_groups": 4},
        # One fast retriever; tests/test_workflow_evaluation.py runs the other kinds.
        "models": {"bm25": {"kind": "bm25"}},
        "baselines": {
            "retriever": "bm25",
            "train_on": [],
            "decompose": {"retries": 0, "max_tokens": 96},  # keeps the real-model test short
        },
    }
    for section, values in overrides.items():
        # Sections merge key by key; `corpora` and `models` are replaced as a whole.
        if section not in ("corpora", "models") and isinstance(config.get(section), dict):
            config[section] = {**config[section], **values}
        else:
            config[section] = values
    return config


class Workflow:
    """The real Snakefile run in a temporary working directory."""

    def __init__(self, workdir: Path):
        self.workdir = workdir

    def write_config(self, config: dict) -> Path:
        path = self.workdir / "config.yaml"
        path.write_text(
            yaml.safe_dump(config, sort_keys=False)
        )  # keep the order: Table 2 rows follow it
        return path

    def command(self, *args: str) -> list[str]:
        return [
            *SNAKEMAKE,
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(self.workdir),
            "--configfile",
            str(self.workdir / "config.yaml"),
            "--cores",
            "2",
            *args,
        ]

    def run(
        self,
        *args: str,
        check: bool = True,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> subprocess.CompletedProcess:
        result = subprocess.run(
            self.command(*args),
            capture_output=True,
            text=True,
            cwd=self.workdir,
            env=env,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise AssertionError(f"snakemake failed:\n{result.stdout}\n{result.stderr}")
        return result

    def start(self, *args: str) -> subprocess.Popen:
        """Snakemake in the background, in its own process group (as in a terminal of its own:
        a signal to the group is a Ctrl-C), its output together on stdout."""
        return subprocess.Popen(
            self.command(*args),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            cwd=self.workdir,
            start_new_session=True,
        )

    def planned_jobs(self, *targets: str) -> dict[str, int]:
        """Rule -> job count of a dry run (empty when nothing would run)."""
        result = self.run("--dry-run", *targets)
        return parse_job_stats(result.stdout + result.stderr)

    def path(self, relative: str) -> Path:
        return self.workdir / relative


def parse_job_stats(output: str) -> dict[str, int]:
    jobs: dict[str, int] = {}
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("job") and "count" in line:
            for row in lines[i + 2 :]:
                parts = row.split()
                if len(parts) != 2 or not parts[1].isdigit() or parts[0] == "total":
                    break
                jobs[parts[0]] = int(parts[1])
            break
    return jobs


@pytest.fixture
def workflow(tmp_path) -> Workflow:
    return Workflow(tmp_path)


def pytest_collection_modifyitems(items):
    """Mark each test `workflow` (it runs the real Snakefile) or `unit`."""
    for item in items:
        if "workflow" in item.fixturenames:
            item.add_marker(pytest.mark.workflow)
        if not item.get_closest_marker("workflow"):
            item.add_marker(pytest.mark.unit)
