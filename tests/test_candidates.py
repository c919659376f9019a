import numpy as np
import pandas as pd
import pytest

from boolbench.errors import ConfigError, InputError
from boolbench.grouping.candidates import closest, draw_candidates, sample_candidates
from boolbench.retrieval.embeddings import pids_path


def groups(sizes):
    rows = [(f"c{c}-p{i}", c) for c, size in enumerate(sizes) for i in range(size)]
    return pd.DataFrame(rows, columns=["pid", "cluster"])


GROUPS = groups([5, 1, 2, 8, 3, 4, 1, 6, 2, 9, 3, 7])  # 10 clusters with 2+ passages


def test_each_group_draws_2_or_3_distinct_passages_of_one_cluster():
    drawn = draw_candidates(GROUPS, n_groups=10, sizes=[2, 3], seed=1)
    per_group = drawn.groupby("group")
    assert per_group["cluster"].nunique().eq(1).all()
    assert set(per_group.size()) <= {2, 3}
    assert per_group["pid"].nunique().equals(per_group.size())
    assert drawn["cluster"].nunique() == 10  # one group per cluster
    assert not drawn["cluster"].isin([1, 6]).any()  # singletons are never drawn
    cluster_of = dict(zip(GROUPS["pid"], GROUPS["cluster"], strict=True))
    assert (drawn["pid"].map(cluster_of) == drawn["cluster"]).all()
    # Clusters of exactly 2 passages give groups of 2.
    assert (drawn[drawn["cluster"].isin([2, 8])].groupby("group").size() == 2).all()
    # Both sizes occur across 10 groups.
    assert set(per_group.size()) == {2, 3}


def test_growing_n_groups_keeps_earlier_groups_identical():
    small = draw_candidates(GROUPS, n_groups=4, sizes=[2, 3], seed=5)
    large = draw_candidates(GROUPS, n_groups=9, sizes=[2, 3], seed=5)
    assert large[large["group"] < 4].reset_index(drop=True).equals(small)
    assert large["group"].nunique() == 9


def test_stable_under_relabelled_clusters():
    # Same clusters, other label numbers (e.g. another clustering run): same groups.
    relabelled = GROUPS.assign(cluster=GROUPS["cluster"] * 7 + 100)
    a = draw_candidates(GROUPS, n_groups=6, sizes=[2, 3], seed=2)
    b = draw_candidates(relabelled, n_groups=6, sizes=[2, 3], seed=2)
    assert a["pid"].tolist() == b["pid"].tolist()


def test_seed_changes_the_draw():
    a = draw_candidates(GROUPS, n_groups=10, sizes=[2, 3], seed=1)
    b = draw_candidates(GROUPS, n_groups=10, sizes=[2, 3], seed=2)
    assert a["pid"].tolist() != b["pid"].tolist()


def test_null_n_groups_draws_from_every_eligible_cluster():
    assert draw_candidates(GROUPS, None, [2, 3], 0)["group"].nunique() == 10


def test_too_many_groups_is_a_clear_error():
    with pytest.raises(ConfigError, match="n_groups=11, but only 10 groups have at least 2"):
        draw_candidates(GROUPS, 11, [2, 3], 0)


def test_closest_takes_the_tightest_set_not_a_hub():
    # Rows 0-2 are close to each other; row 3 is near row 0 only; row 4 is far from all.
    vectors = np.array([[1.0, 0.0, 0.0], [0.95, 0.3, 0.0], [0.9, 0.2, 0.3],
                        [0.95, -0.3, 0.0], [0.0, 0.0, 1.0]])  # fmt: skip
    assert closest(vectors, 3).tolist() == [0, 1, 2]
    assert closest(vectors, 2).tolist() == [0, 1]  # the first of the equally close pairs
    assert closest(vectors, 5).tolist() == [0, 1, 2, 3, 4]


def test_closest_draw_picks_each_clusters_most_alike_passages():
    rng = np.random.default_rng(0)
    vectors = {pid: rng.normal(size=8) for pid in GROUPS["pid"]}
    # cluster 3 (8 passages): p5, p6 and p7 alike (not near-duplicates: those are one passage)
    for pid in ("c3-p5", "c3-p6", "c3-p7"):
        vectors[pid] = np.ones(8) + 0.3 * rng.normal(size=8)

    def vectors_of(pids):
        return np.stack([vectors[pid] for pid in pids])

    drawn = draw_candidates(GROUPS, n_groups=8, sizes=[3], seed=1, vectors_of=vectors_of)
    assert set(drawn.loc[drawn["cluster"] == 3, "pid"]) == {"c3-p5", "c3-p6", "c3-p7"}
    # deterministic, and growing n_groups keeps the earlier groups
    assert drawn.equals(draw_candidates(GROUPS, 8, [3], 1, vectors_of))
    small = draw_candidates(GROUPS, n_groups=4, sizes=[3], seed=1, vectors_of=vectors_of)
    assert drawn[drawn["group"] < 4].reset_index(drop=True).equals(small)


def test_sample_candidates_names_a_passage_without_a_vector(tmp_path):
    groups_path, corpus_path = tmp_path / "clusters.parquet", tmp_path / "corpus.parquet"
    GROUPS.to_parquet(groups_path)
    pd.DataFrame({"pid": GROUPS["pid"], "title": None, "text": "x"}).to_parquet(corpus_path)
    embeddings = tmp_path / "embeddings.npy"
    np.save(embeddings, np.ones((3, 4), dtype=np.float32))
    pd.DataFrame({"pid": ["c0-p0", "c0-p1", "c0-p2"]}).to_parquet(pids_path(embeddings))
    with pytest.raises(InputError, match=r"embeddings.npy: has no vector for passage 'c\d+-p\d+'"):
        sample_candidates(groups_path, corpus_path, 4, [3], 1, tmp_path / "out.parquet",
                          embeddings_path=embeddings)  # fmt: skip


def test_skip_loosest_leaves_out_the_least_cohesive_clusters_and_keeps_growth_stable():
    # Clusters 0, 3 and 9 are loose (random vectors); the others' passages nearly one vector.
    rng = np.random.default_rng(1)
    loose = {0, 3, 9}
    vectors = {}
    for pid, cluster in zip(GROUPS["pid"], GROUPS["cluster"], strict=True):
        centre = np.eye(12)[cluster]
        spread = 1.0 if cluster in loose else 0.15  # alike, not near-duplicates
        vectors[pid] = centre + spread * rng.normal(size=12)

    def vectors_of(pids):
        return np.stack([vectors[p] for p in pids])

    everything = draw_candidates(GROUPS, None, [2, 3], 4, vectors_of)
    assert set(everything["cluster"]) >= loose
    tight = draw_candidates(GROUPS, None, [2, 3], 4, vectors_of, skip_loosest=0.3)
    assert set(tight["cluster"]) == set(everything["cluster"]) - loose
    # growing n_groups appends: the first groups stay the same
    small = draw_candidates(GROUPS, 3, [2, 3], 4, vectors_of, skip_loosest=0.3)
    assert tight[tight["group"] < 3].reset_index(drop=True).equals(small)
    with pytest.raises(ConfigError, match="7 groups have at least 2 passages above the "
                                          "skip_loosest floor"):  # fmt: skip
        draw_candidates(GROUPS, 8, [2, 3], 4, vectors_of, skip_loosest=0.3)
