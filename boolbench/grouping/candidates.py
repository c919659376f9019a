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

Near-duplicates are one passage (web corpora hold many copies of a snippet: in one MS MARCO
cluster 3 of the 5 closest passages were the same text). Drawn with vectors, a cluster's
passages as alike as DUPLICATE_COSINE to an earlier one (by pid) are left out, so no group
holds two passages that say the same thing; and every candidate records its `copies`, the
corpus's other passages of the same text (`copy_key`), which carry its labels (a model that
returns a copy of a positive is not scored as failing).

Each group's `construction` (genre.py): what its questions ask about, from the corpus's genre
(stated, or read from the data) and its grouping.

Artifact candidates.parquet, one row per candidate passage:
group (int64), cluster (int64), slot (int32, 0..n-1), pid (string), title (string, nullable),
text (string), construction (string), copies (list of string). Rows are ordered by group, then
slot.

Sampling is stable as a run grows: clusters are visited in an order fixed by the seed and each
cluster's smallest pid, and group g draws from a generator seeded by (seed, g). Raising n_groups
appends groups and leaves every earlier group identical, so LLM work on them is reused.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
from collections.abc import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.corpus.genre import GENRE_OF_SOURCE, construction_of, detect_genre
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
        ("construction", pa.string()),
        ("copies", pa.list_(pa.string())),
    ]
)
DUPLICATE_COSINE = 0.95  # two passages at least this alike say the same thing


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


def distinct(pids: list[str], vectors_of: Callable[[list[str]], np.ndarray]) -> list[str]:
    """`pids` without those as alike as DUPLICATE_COSINE to an earlier one (near-duplicates)."""
    if len(pids) < 2:
        return pids
    vectors = vectors_of(pids)
    unit = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    similarity = unit @ unit.T
    kept: list[int] = []
    for i in range(len(pids)):
        if not kept or similarity[i, kept].max() < DUPLICATE_COSINE:
            kept.append(i)
    return [pids[i] for i in kept]


def copy_key(text: str) -> str:
    """What two copies of a passage share: its words, lower-cased (case, spacing and
    punctuation aside)."""
    return " ".join(re.findall(r"\w+", text.lower()))


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
    seen: dict = {}

    def passages_of(cluster) -> list[str]:
        # near-duplicates are one passage (the first by pid, which keeps the order's key);
        # read lazily, as a cluster's vectors are: only drawn clusters cost anything
        if cluster not in seen:
            pids = eligible[cluster]
            seen[cluster] = pids if vectors_of is None else distinct(pids, vectors_of)
        return seen[cluster]

    if vectors_of is not None:
        if skip_loosest > 0:
            order = _cohesive(order, passages_of, sizes, vectors_of, skip_loosest, n_groups)
        else:
            order = _first(order, lambda c: len(passages_of(c)) >= min(sizes), n_groups)
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
        pids = passages_of(cluster)
        rng = np.random.default_rng([seed, group])
        n = int(rng.choice([s for s in sorted(sizes) if s <= len(pids)]))
        if vectors_of is None:
            chosen = rng.choice(len(pids), size=n, replace=False)
        else:
            chosen = closest(vectors_of(pids), n)
        for slot, index in enumerate(chosen):
            rows.append((group, int(cluster), slot, pids[index]))
    return pd.DataFrame(rows, columns=["group", "cluster", "slot", "pid"])


def _first(order: list, wanted, n: int | None) -> list:
    """The first `n` (None: all) clusters of `order` that are `wanted`, read lazily."""
    kept = []
    for cluster in order:
        if n is not None and len(kept) == n:
            break
        if wanted(cluster):
            kept.append(cluster)
    return kept


def _cohesive(
    order: list,
    passages_of: Callable[[object], list[str]],
    sizes: list[int],
    vectors_of: Callable[[list[str]], np.ndarray],
    skip_loosest: float,
    n_groups: int | None,
) -> list:
    """The first `n_groups` (None: all) clusters of `order` with at least min(`sizes`)
    distinct passages whose cohesion (at max(`sizes`) passages, or all of a smaller
    cluster's) is at least the `skip_loosest` quantile of the first COHESION_SAMPLE such
    clusters' (a seeded sample: a run that grows keeps its floor and its earlier groups)."""
    cohesion = {}

    def cohesion_of(cluster) -> float:
        if cluster not in cohesion:
            pids = passages_of(cluster)
            cohesion[cluster] = closest_with_cohesion(vectors_of(pids), min(max(sizes), len(pids)))[
                1
            ]
        return cohesion[cluster]

    order = (c for c in order if len(passages_of(c)) >= min(sizes))  # lazily: see cohesion_of
    head = [next(order, None) for _ in range(COHESION_SAMPLE)]
    head = [c for c in head if c is not None]
    floor = float(np.quantile([cohesion_of(c) for c in head], skip_loosest))
    kept, skipped = [], 0
    for cluster in itertools.chain(head, order):  # a cluster's cohesion costs its closest set
        if n_groups is not None and len(kept) == n_groups:
            break
        if cohesion_of(cluster) >= floor:
            kept.append(cluster)
        else:
            skipped += 1
    log.info("candidates.skip_loosest=%g: %d clusters with a cohesion below %.3f (that "
             "quantile of %d clusters) not drawn", skip_loosest, skipped, floor,
             len(head))  # fmt: skip
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
    genre: str = "auto",
    source: str | None = None,
    grouping: str = "cluster",
) -> pd.DataFrame:
    """Draw candidate groups and write candidates.parquet with the passages' title and text,
    their copies in the corpus, and each group's construction (from `genre`, or with auto the
    genre of the `source`, else the one read from the corpus, and the `grouping`); with
    `embeddings_path` (draw: closest) each group is its cluster's closest distinct passages,
    and the loosest `skip_loosest` of the clusters are not drawn."""
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
    if genre == "auto":
        genre, why = corpus_genre(corpus_path, source)
        log.info("corpus genre: %s (%s)", genre, why)
    candidates["construction"] = construction_of(genre, grouping)
    candidates["copies"] = copies_of(corpus_path, candidates)
    write_table_atomic(
        pa.Table.from_pandas(candidates, schema=CANDIDATES_SCHEMA, preserve_index=False),
        candidates_out,
    )
    counts = candidates.groupby("group").size().value_counts().sort_index()
    log.info(
        "%d candidate groups (%s), construction %s; %d candidates have copies in the corpus "
        "(%d copies)",
        candidates["group"].nunique(),
        ", ".join(f"{n} with {size} passages" for size, n in counts.items()),
        construction_of(genre, grouping),
        int((candidates["copies"].map(len) > 0).sum()),
        int(candidates["copies"].map(len).sum()),
    )
    return candidates


def corpus_genre(corpus_path: str | os.PathLike, source: str | None) -> tuple[str, str]:
    """(genre, why): the genre of the `source`'s files where it has one, else read from the
    corpus (`genre.detect_genre`; the texts of documents' first passages only)."""
    if source in GENRE_OF_SOURCE:
        return GENRE_OF_SOURCE[source], f"source {source}"
    meta = pq.read_table(corpus_path, columns=["pid", "title", "doc_id", "position"]).to_pandas()
    return detect_genre(meta, lambda pids: _texts(corpus_path, pids))


def _texts(corpus_path, pids: list[str]) -> dict[str, str]:
    table = pq.read_table(corpus_path, columns=["pid", "text"], filters=[("pid", "in", pids)])
    return dict(zip(table["pid"].to_pylist(), table["text"].to_pylist(), strict=True))


def copies_of(corpus_path: str | os.PathLike, candidates: pd.DataFrame) -> list[list[str]]:
    """Per candidate, the other passages of the corpus with its text (`copy_key`): one pass
    over the corpus's texts, batch by batch."""
    keys = {copy_key(t) for t in candidates["text"]}
    found: dict[str, list[str]] = {}
    for batch in pq.ParquetFile(corpus_path).iter_batches(columns=["pid", "text"]):
        for pid, text in zip(batch["pid"].to_pylist(), batch["text"].to_pylist(), strict=True):
            key = copy_key(text)
            if key in keys:
                found.setdefault(key, []).append(pid)
    return [
        sorted(p for p in found.get(copy_key(t), []) if p != pid)
        for pid, t in zip(candidates["pid"], candidates["text"], strict=True)
    ]
