"""Sharded LLM stages: which groups a shard takes, and gathering shards back into the file an
unsharded job writes."""

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boolbench.generation.steps import gather_accounting, gather_shards, in_shard


def test_every_group_is_in_exactly_one_shard():
    frame = pd.DataFrame({"group": [0, 0, 1, 2, 3, 4, 5, 7], "slot": range(8)})
    shards = [in_shard(frame, (i, 3)) for i in range(3)]
    assert sorted(pd.concat(shards)["slot"]) == list(range(8))
    assert set(shards[1]["group"]) == {1, 4, 7}
    assert in_shard(frame, (0, 1)) is frame


@pytest.mark.parametrize("key", ["group", "qid"])
def test_gathering_shards_restores_the_unsharded_order(tmp_path, key):
    # Unsharded: by group (or qid), and within one the job's own order (slots 2, 0, 1 here).
    if key == "group":
        whole = pd.DataFrame({"group": [0, 0, 0, 1, 2, 2, 3], "slot": [2, 0, 1, 0, 1, 0, 0]})
        groups = whole["group"]
    else:
        qids = ["and-00000", "and-00000", "and-00001", "and-00002", "and-00003"]
        whole = pd.DataFrame({"qid": qids, "pid": ["b", "a", "c", "d", "e"]})
        groups = whole["qid"].str[-1].astype(int)
    paths = []
    for i in range(2):
        path = tmp_path / f"shard-{i}.parquet"
        pq.write_table(pa.Table.from_pandas(whole[groups % 2 == i], preserve_index=False), path)
        paths.append(path)
    out = tmp_path / "gathered.parquet"
    assert gather_shards(reversed(paths), out) == len(whole)
    pd.testing.assert_frame_equal(pd.read_parquet(out), whole)


def test_accounting_of_shards_adds_up(tmp_path):
    records = [
        {"requests": 3, "cache_hits": 1, "estimated_cost": 0.5, "wall_s": 2.0,
         "errors": {"timeout": 1}},
        {"requests": 4, "cache_hits": 0, "estimated_cost": 0.25, "wall_s": 1.5,
         "errors": {"timeout": 2, "http_500": 1}},
    ]  # fmt: skip
    paths = []
    for i, record in enumerate(records):
        paths.append(tmp_path / f"{i}.json")
        paths[-1].write_text(json.dumps(record))
    gather_accounting(paths, tmp_path / "total.json")
    total = json.loads((tmp_path / "total.json").read_text())
    assert total == {
        "requests": 7,
        "cache_hits": 1,
        "estimated_cost": 0.75,
        "wall_s": 3.5,
        "errors": {"timeout": 3, "http_500": 1},
    }


def test_a_shard_without_groups_writes_empty_files_and_asks_nothing(tmp_path):
    """More shards than groups: every stage's job for an empty shard still writes its file."""
    from boolbench.baselines.steps import decompose_step
    from boolbench.generation.dataset import DATASET_SCHEMA
    from boolbench.generation.filtering import AnswererSettings, PoolSettings
    from boolbench.generation.steps import atomic_step, compose_step, judge_step
    from boolbench.llm.fake_server import FakeOpenAIServer
    from tests.scripted_llm import (
        MEMBERSHIP_TEMPLATE,
        TEMPLATES,
        TEST_PROMPTS,
        candidates,
        judge_params,
        respond,
        scripted_client,
        settings,
    )

    cands = tmp_path / "candidates.parquet"
    candidates().to_parquet(cands)
    corpus = tmp_path / "corpus.parquet"
    candidates()[["pid", "title", "text"]].to_parquet(corpus)
    groups = candidates()["group"].nunique()
    empty = (groups, groups + 1)  # group g is in shard g % count: none is in this one
    names = ("simple", "disj", "and", "answers", "check", "pooled")
    out = {name: tmp_path / f"{name}.parquet" for name in names}
    written = tmp_path / "written.parquet"
    pq.write_table(DATASET_SCHEMA.empty_table(), written)
    run = tmp_path / "run.parquet"
    pd.DataFrame({"qid": ["and-00000-0"], "pid": ["p-Alpha"], "rank": [1]}).to_parquet(run)
    with FakeOpenAIServer(responder=respond) as server:
        llm = scripted_client(server, tmp_path / "cache")
        atomic_step(
            "disjunctive", cands, out["disj"], llm, TEST_PROMPTS["kinds"], settings(), empty,
            template=TEMPLATES["disjunctive"], member_judge=judge_params(),
            subject_prompt=TEST_PROMPTS["subject"],
        )  # fmt: skip
        atomic_step(
            "simple", cands, out["simple"], llm, TEST_PROMPTS["simple"], settings(), empty,
            kinds=out["disj"],
        )  # fmt: skip
        compose_step(
            "and", cands, out["simple"], out["disj"], out["and"], llm, TEST_PROMPTS["and"],
            TEMPLATES["and"], settings(), empty,
        )  # fmt: skip
        judge_step(
            written, out["simple"], out["disj"], cands, corpus, {"m": run},
            {k: out[k] for k in ("answers", "check", "pooled")}, llm, TEST_PROMPTS["judge"],
            AnswererSettings(seed=1), PoolSettings(depth=10), MEMBERSHIP_TEMPLATE, "strict",
            shard=empty,
        )  # fmt: skip
        questions = tmp_path / "boolquestions.parquet"
        pq.write_table(DATASET_SCHEMA.empty_table(), questions)
        decompose_step(
            questions, tmp_path / "decomposed.parquet", llm, TEST_PROMPTS["and"], "all",
            retries=0, seed=1, max_tokens=8, json_schema=False, shard=empty,
        )  # fmt: skip
        assert server.total_requests() == 0
    for path in [*out.values(), tmp_path / "decomposed.parquet"]:
        table = pq.read_table(path)
        assert table.num_rows == 0 and table.num_columns > 3, path.name
