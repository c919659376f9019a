"""Lint, format and Snakemake lint checks, so the one test command covers them too; and CI's
own settings."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


@pytest.mark.parametrize(
    "command",
    [
        [str(BIN / "ruff"), "check", "."],
        [str(BIN / "ruff"), "format", "--check", "."],
        [str(BIN / "snakefmt"), "--check", "Snakefile", "rules"],
        [sys.executable, "-m", "snakemake", "--lint"],
    ],
    ids=["ruff-check", "ruff-format", "snakefmt", "snakemake-lint"],
)
def test_clean(command):
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_readme_quickstart_has_two_commands_and_ci_runs_the_test_one():
    readme = (REPO / "README.md").read_text()
    quickstart = readme.split("## Quickstart", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in quickstart.strip().splitlines() if line.strip()]
    assert len(commands) == 2
    assert "snakemake --cores all" in commands[0] and "pytest" in commands[1]
    assert "torch==2.13.0" in commands[0] and "torch==2.13.0" in commands[1]
    assert commands[1] in (REPO / ".ci/run").read_text()


def test_ci_fails_when_the_real_slurm_tests_cannot_run(tmp_path):
    # .ci/run sets the variable for the README's test command...
    ci = (REPO / ".ci/run").read_text()
    assert re.search(r"^export BOOLBENCH_REQUIRE_SLURM=1$", ci, re.MULTILINE)
    # ...which turns the skip of tests/test_slurm.py without SLURM (an empty PATH here) into
    # a failure that names the missing binaries; without it (users) they are skipped.
    env = {k: v for k, v in os.environ.items() if k != "BOOLBENCH_REQUIRE_SLURM"}
    env["PATH"] = str(tmp_path)
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/test_slurm.py",
    ]
    user = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env)
    assert user.returncode == 0 and " skipped" in user.stdout, user.stdout + user.stderr
    env["BOOLBENCH_REQUIRE_SLURM"] = "1"
    ci_run = subprocess.run(command, cwd=REPO, capture_output=True, text=True, env=env)
    assert ci_run.returncode == 1, ci_run.stdout + ci_run.stderr
    assert "SLURM binaries absent (munged, slurmctld" in ci_run.stdout
    assert "BOOLBENCH_REQUIRE_SLURM is set, so the real-SLURM tests must run" in ci_run.stdout
    assert " passed" not in ci_run.stdout and " skipped" not in ci_run.stdout
