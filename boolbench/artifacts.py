"""Artifacts a job reads: a corrupt or truncated one is named in one line, with the rule that
makes it and how to regenerate it, before the job starts (instead of a pyarrow traceback).

Which rule makes which file comes from the workflow: the Snakefile exports its rules' output
patterns in an environment variable (export_rules), which every job inherits from the
Snakemake process that runs it.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.errors import InputError

RULES_ENV = "BOOLBENCH_ARTIFACT_RULES"
# Set, the workflow also writes every rule's outputs and script to this JSON file when it is
# parsed (boolbench.artifact_reference reads it to document the artifacts).
RULES_FILE_ENV = "BOOLBENCH_RULES_FILE"


def export_rules(rules: Iterable[tuple[str, Iterable[str], str | None]]) -> None:
    """Record (rule name, output patterns, script) for the jobs' messages, and in the file named
    by RULES_FILE_ENV when that is set."""
    rules = [(name, [str(p) for p in outputs], script) for name, outputs, script in rules]
    patterns = {pattern: name for name, outputs, _ in rules for pattern in outputs}
    os.environ[RULES_ENV] = json.dumps(patterns)
    if os.environ.get(RULES_FILE_ENV):
        described = [{"rule": n, "outputs": o, "script": s} for n, o, s in rules]
        Path(os.environ[RULES_FILE_ENV]).write_text(json.dumps(described, indent=1))


def producing_rule(path: str | os.PathLike) -> str | None:
    """The rule whose output pattern matches `path` (None when unknown)."""
    try:
        patterns = json.loads(os.environ.get(RULES_ENV) or "{}")
    except json.JSONDecodeError:
        return None
    # The most specific pattern first (the fewest wildcards).
    for pattern in sorted(patterns, key=lambda p: (p.count("{"), -len(p))):
        if _pattern_regex(pattern).search(str(path)):
            return patterns[pattern]
    return None


def _pattern_regex(pattern: str) -> re.Pattern:
    """A Snakemake output pattern as a regex matching the end of a path (a job may see its input
    under another folder): each {wildcard} stands for part of one path component."""
    parts = re.split(r"(\{[^{}]*\})", pattern)
    body = "".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts)
    return re.compile(f"(?:^|/){body}$")


def check_readable(paths: Iterable[str | os.PathLike]) -> None:
    """Raise InputError naming the first Parquet or .npy file that cannot be read: its footer
    (Parquet) or header and size (.npy) are checked, which costs a few small reads."""
    for path in map(Path, paths):
        if not path.is_file():
            continue
        problem = None
        if path.suffix == ".parquet":
            problem = _parquet_problem(path)
        elif path.suffix == ".npy":
            problem = _npy_problem(path)
        if problem:
            raise InputError(corrupt_message(path, problem))


def corrupt_message(path: Path, problem: str) -> str:
    rule = producing_rule(path)
    made_by = f"made by rule {rule}" if rule else "an artifact of the workflow"
    return (
        f"{path}: {problem}: the file is corrupt or truncated ({made_by}); regenerate it by "
        f"running your snakemake command again with --forcerun {path}"
    )


def _parquet_problem(path: Path) -> str | None:
    try:
        pq.read_metadata(path)
    except (pa.ArrowException, OSError) as err:
        return "not a readable Parquet file (" + " ".join(str(err).split()).split(". ")[0] + ")"
    return None


def _npy_problem(path: Path) -> str | None:
    try:
        with path.open("rb") as handle:
            version = np.lib.format.read_magic(handle)
            read_header = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, _, dtype = read_header(handle)
            expected = handle.tell() + int(np.prod(shape)) * dtype.itemsize
    except (ValueError, OSError, EOFError) as err:
        return f"not a readable .npy file ({' '.join(str(err).split())})"
    size = path.stat().st_size
    if size < expected:
        return f"a .npy file of {size} bytes where its header needs {expected}"
    return None
