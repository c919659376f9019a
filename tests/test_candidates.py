import pandas as pd
import pytest

from boolbench.errors import ConfigError
from boolbench.grouping.candidates import draw_candidates


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
