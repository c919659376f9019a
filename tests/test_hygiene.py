"""Lint, format and Snakemake lint checks, so the one test command covers them too."""

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
