"""Candidate groups: n in {2, 3} passages drawn from one cluster each (paper section 4.2).

Artifact candidates.parquet, one row per candidate passage:
group (int64), cluster (int64), slot (int32, 0..n-1), pid (string), title (string, nullable),
text (string). Rows are ordered by group, then slot.

Sampling is stable as a run grows: clusters are visited in an order fixed by the seed and each
cluster's smallest pid, and group g draws from a generator seeded by (seed, g). Raising n_groups
appends groups and leaves every earlier group identical, so LLM work on them is reused.
"""

from __future__ import annotations

import hashlib
import logging
import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.errors import ConfigError
from boolbench.io import write_table_atomic

log = logging.getLogger(__name__)

CANDIDATES_SCHEMA = pa.schema(
    [
        ("group", pa.int64()),
        ("cluster", pa.int64()),
        ("slot", pa.int32()),
        ("pid", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
    ]
)


def _order_key(seed: int, first_pid: str) -> str:
    return hashlib.sha256(f"{seed}\x00{first_pid}".encode()).hexdigest()


def draw_candidates(
    groups: pd.DataFrame, n_groups: int | None, sizes: list[int], seed: int
) -> pd.DataFrame:
    """(group, cluster, slot, pid) rows for the first n_groups groups in the stable order."""
    members = groups.groupby("cluster")["pid"].agg(sorted)
    eligible = members[members.map(len) >= min(sizes)]
    order = sorted(eligible.index, key=lambda c: _order_key(seed, eligible[c][0]))
    if n_groups is None:
        n_groups = len(order)
    elif n_groups > len(order):
        raise ConfigError(
            f"candidates.n_groups={n_groups}, but only {len(order)} groups have at least "
            f"{min(sizes)} passages; lower n_groups (or null for all) or form more groups "
            "(a larger clustering.sample_size or more n_clusters)"
        )
    rows = []
    for group, cluster in enumerate(order[:n_groups]):
        pids = eligible[cluster]
        rng = np.random.default_rng([seed, group])
        n = int(rng.choice([s for s in sorted(sizes) if s <= len(pids)]))
        for slot, index in enumerate(rng.choice(len(pids), size=n, replace=False)):
            rows.append((group, int(cluster), slot, pids[index]))
    return pd.DataFrame(rows, columns=["group", "cluster", "slot", "pid"])


def sample_candidates(
    groups_path: str | os.PathLike,
    corpus_path: str | os.PathLike,
    n_groups: int | None,
    sizes: list[int],
    seed: int,
    candidates_out: str | os.PathLike,
) -> pd.DataFrame:
    """Draw candidate groups and write candidates.parquet with the passages' title and text."""
    groups = pq.read_table(groups_path).to_pandas()
    try:
        drawn = draw_candidates(groups, n_groups, sizes, seed)
    except ConfigError as err:
        raise ConfigError(f"{groups_path}: {err}") from None
    passages = pq.read_table(
        corpus_path,
        columns=["pid", "title", "text"],
        filters=[("pid", "in", drawn["pid"].tolist())],
    ).to_pandas()
    candidates = drawn.merge(passages, on="pid", how="left", validate="one_to_one")
    candidates = candidates.astype({"slot": "int32"})
    write_table_atomic(
        pa.Table.from_pandas(candidates, schema=CANDIDATES_SCHEMA, preserve_index=False),
        candidates_out,
    )
    counts = candidates.groupby("group").size().value_counts().sort_index()
    log.info(
        "%d candidate groups (%s)",
        candidates["group"].nunique(),
        ", ".join(f"{n} with {size} passages" for size, n in counts.items()),
    )
    return candidates
