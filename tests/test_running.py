"""The notes of runs in progress in a folder (boolbench.running), with real processes."""

import json
import socket
import subprocess
import sys

import pytest

from boolbench.running import RUNS, another_run_notice, forget_run, other_runs, record_run


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def note(pid: int) -> None:
    """A run's note, as record_run writes it in that run's process."""
    entry = {"pid": pid, "started": "2026-01-02 03:04:05", "command": "snakemake --cores 2"}
    RUNS.mkdir(parents=True, exist_ok=True)
    (RUNS / f"{socket.gethostname()}-{pid}.json").write_text(json.dumps(entry))


def test_a_live_run_is_named_and_a_gone_one_forgotten(folder):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    # A process whose command line says snakemake, as a run's does.
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "snakemake"])
    try:
        note(gone.pid)
        note(live.pid)
        assert [run["pid"] for run in other_runs()] == [live.pid]
        assert len(list(RUNS.glob("*.json"))) == 1  # the note of the gone run is removed
        notice = another_run_notice()
        assert notice.startswith(
            f"boolbench: another run is in progress in this folder (Snakemake pid {live.pid}, "
            "started 2026-01-02 03:04:05 (snakemake --cores 2)); "
        )
        assert f"(kill {live.pid})" in notice
    finally:
        live.kill()
        live.wait()
    assert other_runs() == [] and another_run_notice() is None


def test_a_run_does_not_see_itself(folder):
    record_run()
    assert other_runs() == []
    forget_run()
    assert not list(RUNS.glob("*.json"))
