"""What a job pays before it does anything: the seconds each workflow script's `boolbench`
imports take in a fresh Python, in this checkout and in another revision of it.

    python bench/job_imports.py --before REV [--rounds 3]

REV is checked out in a temporary git worktree and put first on the path, so both sides run in
this environment. Prints one row per script of this checkout (best of the rounds; a script or
module REV lacks counts as its own time), the sums, and their ratio. A workflow runs each script
once per job (shards, models, corpora), so a saving is paid back per job.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def imports_of(script: Path) -> str:
    """The script's boolbench imports as one line of Python."""
    modules = sorted(set(re.findall(r"^from (boolbench[\w.]*) import", script.read_text(), re.M)))
    return "; ".join(f"import {m}" for m in modules)


def seconds(code: str, tree: Path, rounds: int) -> float | None:
    """Best wall time of `code` with `tree` first on the path (None when it fails there)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env,
                              capture_output=True)  # fmt: skip
        if done.returncode != 0:
            return None
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        before = Path(folder) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(before), args.before],
                       cwd=REPO, check=True)  # fmt: skip
        try:
            rows = []
            for script in sorted((REPO / "workflow_scripts").glob("*.py")):
                code = imports_of(script)
                if code:
                    now = seconds(code, REPO, args.rounds)
                    then = seconds(code, before, args.rounds)
                    rows.append((script.name, now, now if then is None else then))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], cwd=REPO)
    print(f"| script | imports now (s) | at {args.before} (s) |")
    print("|---|---|---|")
    for name, now, then in rows:
        print(f"| {name} | {now:.2f} | {then:.2f} |")
    now_sum, then_sum = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"\nsum over {len(rows)} scripts: {now_sum:.1f} s now, {then_sum:.1f} s at "
          f"{args.before}: ratio {then_sum / now_sum:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
