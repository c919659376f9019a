"""What the Snakemake process itself does around a run (its `onstart`, `onsuccess` and
`onerror` handlers): pass stop signals on to the jobs, note the run in its folder so that a
second run there is told who holds it, and make sure a failed job is redone."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import sys
import time
from pathlib import Path

from boolbench.io import write_text_atomic

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
# Runs in progress, one file each, relative to Snakemake's working directory (--directory).
RUNS = Path(".snakemake") / "boolbench-runs"


def forward_stop_signals() -> None:
    """Pass SIGTERM and SIGINT on to every process Snakemake started, then let Snakemake handle
    them. Snakemake does not stop its local jobs (on SIGTERM it "will exit after finishing
    currently running jobs"), and a job waiting on a hung LLM endpoint would not finish for
    hours; a job then ends with a line saying why (boolbench.workflow.script_context)."""
    import psutil  # a dependency of Snakemake, so there in the process that runs it

    for signum in STOP_SIGNALS:
        previous = signal.getsignal(signum)

        def forward(sig: int, frame, previous=previous) -> None:
            for child in psutil.Process().children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.send_signal(sig)
            if callable(previous):
                previous(sig, frame)
            elif previous == signal.SIG_DFL:
                signal.signal(sig, signal.SIG_DFL)
                os.kill(os.getpid(), sig)

        signal.signal(signum, forward)


def forget_failed_jobs(workflow) -> None:
    """Drop Snakemake's records of the jobs that failed in this run (onerror).

    Snakemake 9 records a failed or stopped job as finished, with the checksums of the inputs
    it failed on (snakemake/snakemake#3808). Inputs are compared by checksum (the profiles'
    max-checksum-file-size), so the next run took such a job for done whenever its outputs
    were missing but its consumers' were there: a judge stopped after the questions changed
    left the old judgements under the new questions, and the rerun said nothing was to be
    done. Without a record, its newer inputs rerun it. Only failed jobs: a planned job that
    never started keeps its record (a gather's record carries its shards' params, by which a
    settings change reruns them; Snakemake does not rerun a job for a missing record)."""
    scheduler = getattr(workflow, "scheduler", None)  # None when no job was scheduled
    if scheduler is None or not workflow.is_main_process:
        return
    for failed in scheduler.failed:
        for job in failed if failed.is_group() else [failed]:
            workflow.persistence.cleanup(job)


def _record_path(pid: int | None = None) -> Path:
    return RUNS / f"{socket.gethostname()}-{pid or os.getpid()}.json"


def record_run() -> None:
    """Note this Snakemake process as running in its working directory (onstart)."""
    entry = {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "command": shlex.join(["snakemake", *sys.argv[1:]]),
    }
    write_text_atomic(_record_path(), json.dumps(entry) + "\n")


def forget_run() -> None:
    """Remove this process's note (onsuccess, onerror)."""
    _record_path().unlink(missing_ok=True)


def other_runs() -> list[dict]:
    """The other Snakemake processes of this host noted as running in this folder and still
    alive; the notes of those that are gone (killed) are removed. Runs on other hosts (a
    shared file system) cannot be checked from here and are left out."""
    import psutil

    runs = []
    for path in sorted(RUNS.glob(f"{socket.gethostname()}-*.json")):
        try:
            entry = json.loads(path.read_text())
            alive = "snakemake" in " ".join(psutil.Process(entry["pid"]).cmdline())
        except (OSError, ValueError, KeyError, psutil.Error):
            alive = False
        if not alive:
            path.unlink(missing_ok=True)
        elif entry["pid"] != os.getpid():
            runs.append(entry)
    return runs


def another_run_notice() -> str | None:
    """One line naming the runs already in progress in this folder, or None: Snakemake's own
    lock message only says to use --unlock, which is wrong while a run holds the lock."""
    runs = other_runs()
    if not runs:
        return None
    held = "; ".join(
        f"Snakemake pid {r['pid']}, started {r['started']} ({r['command']})" for r in runs
    )
    pids = " ".join(str(r["pid"]) for r in runs)
    return (
        f"boolbench: another run is in progress in this folder ({held}); if Snakemake says "
        '"Directory cannot be locked", that run holds files this one would make: wait for it '
        f"to finish or stop it (kill {pids}); --unlock is only for the lock of a run that was "
        "killed"
    )
