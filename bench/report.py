"""The HTML report: build time, that it renders in a headless browser, and the significance
test's speed against scipy's permutation test.

Run from the repository after a finished workflow run (the default: `snakemake --cores all`):

    python bench/report.py [--snakemake .venv/bin/snakemake] [--chromium chromium]

1. Times `snakemake --report report.html` and `report.zip` against `snakemake --dry-run` (the
   DAG and provenance checks a report build starts with), and prints the ratio.
2. Opens report.html in headless chromium (Debian's `chromium` package) without network,
   dumps the DOM after the report's JavaScript ran, and checks that the app rendered its
   result categories; saves a screenshot of the start page.
3. Times boolbench's paired randomisation test against scipy.stats.permutation_test on one
   original-queries column (10,000 queries, 10,000 sign flips) and prints the ratio.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

CATEGORIES = ("Dataset", "Retrieval", "Baselines", "Run")


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=REPO, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def build_times(snakemake: str, out: Path) -> dict[str, float]:
    return {
        "dry_run": timed([snakemake, "--dry-run", "--quiet"]),
        "html": timed([snakemake, "--report", str(out / "report.html")]),
        "zip": timed([snakemake, "--report", str(out / "report.zip")]),
    }


def render(chromium: str, report: Path, screenshot: Path) -> list[str]:
    """The categories the rendered report shows (empty if its JavaScript failed)."""
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1400,900",
        "--virtual-time-budget=5000",  # let the React app render before dumping
        "--proxy-server=127.0.0.1:9",  # no network: everything must be embedded
    ]
    dom = subprocess.run(
        [chromium, *flags, "--dump-dom", report.as_uri()],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    subprocess.run(
        [chromium, *flags, f"--screenshot={screenshot}", report.as_uri()],
        capture_output=True,
        check=True,
    )
    return [c for c in CATEGORIES if f">{c}<" in dom]


def significance_speed() -> tuple[float, float]:
    from scipy.stats import permutation_test

    from boolbench.report.significance import randomisation_test

    rng = np.random.default_rng(0)
    a, b = rng.random(10_000), rng.random(10_000)
    start = time.perf_counter()
    randomisation_test(a, b, 10_000, seed=0)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=10_000,
        batch=1000,
    )
    return ours, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snakemake", default=str(REPO / ".venv/bin/snakemake"))
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--screenshot", default="report-start-page.png")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        times = build_times(args.snakemake, out)
        html = out / "report.html"
        for name in ("html", "zip"):
            size = (out / f"report.{name}").stat().st_size / 1e6
            print(f"report.{name}: {size:.1f} MB in {times[name]:.2f} s")
        print(f"dry run (DAG + provenance): {times['dry_run']:.2f} s")
        print(f"ratio report.html build / dry run: {times['html'] / times['dry_run']:.2f}")
        if shutil.which(args.chromium):
            shown = render(args.chromium, html, Path(args.screenshot).resolve())
            print(f"chromium rendered categories: {', '.join(shown) or 'NONE'}")
            print(f"screenshot: {args.screenshot}")
        else:
            print(f"chromium not found ({args.chromium}): render check skipped")

    ours, scipy = significance_speed()
    print(f"randomisation test, 10,000 queries x 10,000 flips: ours {ours:.2f} s, "
          f"scipy {scipy:.2f} s, ratio ours/scipy {ours / scipy:.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
