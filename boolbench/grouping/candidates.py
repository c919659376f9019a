"""Candidate groups: n in {2, 3} passages drawn from one cluster each (paper section 4.2).

How a cluster's n passages are chosen (`candidates.draw`):
- random: at random (the paper).
- closest: the n passages most alike (the clustering encoder's vectors): each passage with its
  n - 1 nearest neighbours in the cluster, the set whose least similar pair is most similar.
  A cluster gathers passages of one topic, not of one kind ("Yangtze", "Three Gorges Dam",
  "Wuhan"); its closest passages share a kind far more often, and a group whose passages share
  no kind gives no question at all.

With `draw: closest`, `candidates.skip_loosest` (a share) leaves out the loosest clusters: those
whose closest passages' least similar pair (their cohesion) is below that quantile of the
cohesions of the first COHESION_SAMPLE clusters in the order. On the default corpus, of 34
groups drawn without it, 1 of the 10 below its 0.2 quantile (cosine 0.296) gave questions
(in the others the kind the LLM named held for fewer than two members: "Domestic worker,
Household, Middle class"), 18 of the 24 above it; drawn above it, 25-26 of 34 groups keep a
kind (19 without the floor).

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
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.errors import ConfigError, InputError, located
from boolbench.io import write_table_atomic
from boolbench.retrieval.embeddings import load_embeddings

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


COHESION_SAMPLE = 100  # clusters whose cohesions set skip_loosest's floor (the first in order)


def closest(vectors: np.ndarray, n: int) -> np.ndarray:
    """Row indices of the n rows most alike (cosine): each row with its n - 1 nearest
    neighbours, the set whose least similar pair is most similar (the first such row wins)."""
    return closest_with_cohesion(vectors, n)[0]


def closest_with_cohesion(vectors: np.ndarray, n: int) -> tuple[np.ndarray, float]:
    """closest(), and the cosine of the chosen set's least similar pair (its cohesion)."""
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit @ unit.T
    best, best_score = None, -np.inf
    for anchor in range(len(unit)):
        # the anchor first, then its neighbours by similarity (stable: ties by row order)
        order = np.argsort(-similarity[anchor], kind="stable")
        chosen = np.concatenate([[anchor], order[order != anchor][: n - 1]])
        score = similarity[np.ix_(chosen, chosen)].min()
        if score > best_score + 1e-9:
            best, best_score = chosen, score
    return np.sort(best), float(best_score)


def draw_candidates(
    groups: pd.DataFrame,
    n_groups: int | None,
    sizes: list[int],
    seed: int,
    vectors_of: Callable[[list[str]], np.ndarray] | None = None,
    skip_loosest: float = 0.0,
) -> pd.DataFrame:
    """(group, cluster, slot, pid) rows for the first n_groups groups in the stable order;
    with `vectors_of` (pids -> their vectors, one row each) each group is its cluster's closest
    passages (of the clusters at or above the `skip_loosest` quantile of cohesion), else drawn
    at random."""
    members = groups.groupby("cluster")["pid"].agg(sorted)
    eligible = members[members.map(len) >= min(sizes)]
    order = sorted(eligible.index, key=lambda c: _order_key(seed, eligible[c][0]))
    if vectors_of is not None and skip_loosest > 0:
        order = _cohesive(order, eligible, max(sizes), vectors_of, skip_loosest, n_groups)
    if n_groups is None:
        n_groups = len(order)
    elif n_groups > len(order):
        raise ConfigError(
            f"candidates.n_groups={n_groups}, but only {len(order)} groups have at least "
            f"{min(sizes)} passages{' above the skip_loosest floor' if skip_loosest else ''}; "
            "lower n_groups (or null for all) or form more groups "
            "(a larger clustering.sample_size or more n_clusters; with grouping document, "
            "more documents of at least document_grouping.window passages)"
        )
    rows = []
    for group, cluster in enumerate(order[:n_groups]):
        pids = eligible[cluster]
        rng = np.random.default_rng([seed, group])
        n = int(rng.choice([s for s in sorted(sizes) if s <= len(pids)]))
        if vectors_of is None:
            chosen = rng.choice(len(pids), size=n, replace=False)
        else:
            chosen = closest(vectors_of(pids), n)
        for slot, index in enumerate(chosen):
            rows.append((group, int(cluster), slot, pids[index]))
    return pd.DataFrame(rows, columns=["group", "cluster", "slot", "pid"])


def _cohesive(
    order: list,
    eligible: pd.Series,
    size: int,
    vectors_of: Callable[[list[str]], np.ndarray],
    skip_loosest: float,
    n_groups: int | None,
) -> list:
    """The first `n_groups` (None: all) clusters of `order` whose cohesion (at `size`
    passages, or all of a smaller cluster's) is at least the `skip_loosest` quantile of the
    first COHESION_SAMPLE clusters' (a seeded sample: a run that grows keeps its floor and its
    earlier groups)."""
    cohesion = {}

    def cohesion_of(cluster) -> float:
        if cluster not in cohesion:
            pids = eligible[cluster]
            cohesion[cluster] = closest_with_cohesion(vectors_of(pids), min(size, len(pids)))[1]
        return cohesion[cluster]

    sample = [cohesion_of(c) for c in order[:COHESION_SAMPLE]]
    floor = float(np.quantile(sample, skip_loosest))
    kept, skipped = [], 0
    for cluster in order:  # lazily: a cluster's cohesion costs its closest set
        if n_groups is not None and len(kept) == n_groups:
            break
        if cohesion_of(cluster) >= floor:
            kept.append(cluster)
        else:
            skipped += 1
    log.info("candidates.skip_loosest=%g: %d clusters with a cohesion below %.3f (that "
             "quantile of %d clusters) not drawn", skip_loosest, skipped, floor,
             len(sample))  # fmt: skip
    return kept


def sample_candidates(
    groups_path: str | os.PathLike,
    corpus_path: str | os.PathLike,
    n_groups: int | None,
    sizes: list[int],
    seed: int,
    candidates_out: str | os.PathLike,
    embeddings_path: str | os.PathLike | None = None,
    skip_loosest: float = 0.0,
) -> pd.DataFrame:
    """Draw candidate groups and write candidates.parquet with the passages' title and text;
    with `embeddings_path` (draw: closest) each group is its cluster's closest passages, and
    the loosest `skip_loosest` of the clusters are not drawn."""
    groups = pq.read_table(groups_path).to_pandas()
    vectors_of = None
    if embeddings_path is not None:
        pids, matrix = load_embeddings(embeddings_path)  # a memory map: drawn clusters are read
        row = {pid: i for i, pid in enumerate(pids)}

        def vectors_of(members: list[str]) -> np.ndarray:
            missing = [pid for pid in members if pid not in row]
            if missing:
                raise InputError(located(embeddings_path, f"has no vector for passage "
                                         f"{missing[0]!r} of {groups_path}"))  # fmt: skip
            return np.asarray(matrix[[row[pid] for pid in members]], dtype=np.float32)

    try:
        drawn = draw_candidates(groups, n_groups, sizes, seed, vectors_of, skip_loosest)
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
