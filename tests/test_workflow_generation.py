"""The question-generation stages of the real workflow: against the scripted fake server, and
once end to end on the embedded SmolLM2 model."""

import contextlib
import json
import os
import signal
import time

import pandas as pd
import pytest

from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.paths import artifact
from tests.conftest import Workflow, tiny_config
from tests.scripted_llm import MEMBERSHIP, respond, scripted_config

pytestmark = pytest.mark.workflow  # runs the real Snakefile

LLM_STEPS = ["simple", "disjunctive", *(f"compose_{op}" for op in ("and", "or", "not")), "filter"]


# The generation stages' outputs: the evaluation, baselines and report have their own tests
# (tests/test_workflow_evaluation.py, which also checks what a prompt change reruns there).
GENERATION = [
    artifact("dataset", corpus="tiny"),
    artifact("table1_csv", corpus="tiny"),
    artifact("beir_qrels_test", corpus="tiny"),
]


def accounting(flow, step):
    return json.loads(flow.path(f"results/tiny/llm_accounting/{step}.json").read_text())


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    with FakeOpenAIServer(responder=respond) as server:
        flow = Workflow(tmp_path_factory.mktemp("generation"))
        flow.write_config(scripted_config(server, candidates={"n_groups": 2}))
        flow.run(*GENERATION)
        yield flow, server


def test_dataset_outputs(scripted):
    flow, _ = scripted
    all_questions = pd.read_parquet(flow.path(artifact("all_questions", corpus="tiny")))
    kept = pd.read_parquet(flow.path(artifact("dataset", corpus="tiny")))
    # Each group gives AND, OR and NOT, up to generation.per_group (3) questions of each; its
    # two groups are of one kind: one set (one split), the second pairs its sorts with the
    # first's too
    per_cell = all_questions.groupby(["group", "type"]).size()
    assert len(per_cell) == 6 and per_cell.le(3).all(), per_cell
    assert all_questions["split"].nunique() == 1
    assert set(kept["qid"]) == set(all_questions.loc[all_questions["kept"], "qid"])
    assert kept["model"].eq("scripted").all() and kept["source"].eq("llm").all()
    table = pd.read_csv(flow.path(artifact("table1_csv", corpus="tiny"))).set_index("type")
    assert table.loc["ALL", "questions"] == len(kept)
    assert table.loc["ALL", "generated"] == len(all_questions)
    beir = flow.path("results/tiny/beir")
    queries = [json.loads(line) for line in (beir / "queries.jsonl").read_text().splitlines()]
    assert sorted(q["_id"] for q in queries) == sorted(kept["qid"])
    assert len((beir / "corpus.jsonl").read_text().splitlines()) == 60
    report = json.loads(flow.path(artifact("generation_report", corpus="tiny")).read_text())
    assert report["simple"]["total"] == len(
        pd.read_parquet(flow.path(artifact("candidates", corpus="tiny")))
    )
    for step in LLM_STEPS:
        assert accounting(flow, step)["api_calls"] > 0
    # Table 1 says how far the filter can be trusted: the answerer check, with its counts.
    check = report["answerer_check"]
    for path in (artifact("table1_md", corpus="tiny"), artifact("table1_html", corpus="tiny")):
        text = flow.path(path).read_text()
        assert f"own passage in {100 * check['accept_own']:.1f}% of {check['n_own']} pairs" in text


def test_changing_one_prompt_reruns_only_its_jobs(scripted):
    flow, server = scripted
    config = scripted_config(server, candidates={"n_groups": 2})
    config["generation"]["prompts"]["not"] = "NOT|{draft}|again"
    flow.write_config(config)
    try:
        assert flow.planned_jobs(*GENERATION) == {
            "compose_questions": 1,
            "gather_composed_questions": 1,
            # the judge pools what the models return for the written questions
            "written_questions": 1,
            "search": 1,
            "judge_questions": 1,
            "gather_answers": 1,
            "assemble_dataset": 1,
            "dataset_statistics": 1,
            "export_beir": 1,
        }
    finally:
        flow.write_config(scripted_config(server, candidates={"n_groups": 2}))
    assert flow.planned_jobs(*GENERATION) == {}


def test_changing_the_questions_per_group_reruns_only_composition(scripted):
    # how many questions a group gives is composition's: no atomic (kinds, simple) job reruns
    flow, server = scripted
    config = scripted_config(server, candidates={"n_groups": 2})
    config["generation"]["per_group"] = {"and": 3, "or": 1, "not": 3}
    flow.write_config(config)
    try:
        planned = flow.planned_jobs(*GENERATION)
        assert planned["compose_questions"] == 3 and "atomic_questions" not in planned
    finally:
        flow.write_config(scripted_config(server, candidates={"n_groups": 2}))
    assert flow.planned_jobs(*GENERATION) == {}


def test_doubling_the_groups_pays_only_for_the_new_groups(scripted):
    flow, server = scripted
    before = {step: accounting(flow, step) for step in LLM_STEPS}
    asked_before = server.total_requests()
    flow.write_config(scripted_config(server, candidates={"n_groups": 4}))
    flow.run(artifact("all_questions", corpus="tiny"))  # the LLM stages (not evaluation)
    after = {step: accounting(flow, step) for step in LLM_STEPS}
    for step in LLM_STEPS:
        # Every request of the first run is answered from the cache...
        assert after[step]["cache_hits"] >= before[step]["requests"], step
        # ...and only the new groups' requests reach the server.
        assert after[step]["api_calls"] == after[step]["requests"] - after[step]["cache_hits"]
    assert max(server.requests.values()) == 1  # no prompt was ever asked twice
    assert server.total_requests() > asked_before
    groups = pd.read_parquet(flow.path(artifact("all_questions", corpus="tiny")))["group"]
    assert sorted(set(groups)) == [0, 1, 2, 3]


def test_changing_the_shard_count_repays_no_call_and_changes_no_artifact(scripted):
    flow, server = scripted
    config = scripted_config(server, candidates={"n_groups": 4})
    # Every LLM stage up to the filter (the other operators' compositions run the same rule).
    target = artifact("answers", corpus="tiny")
    flow.write_config(config)
    flow.run(target)  # nothing to do after the test above; makes this test standalone
    stages = ["simple", "disjunctive", "not", "answers", "answerer_check"]
    before = {s: pd.read_parquet(flow.path(f"results/tiny/questions/{s}.parquet")) for s in stages}
    steps = ["simple", "disjunctive", "compose_not", "filter"]
    requests = {step: accounting(flow, step)["requests"] for step in steps}
    asked = server.total_requests()

    config["llm"]["shards"] = 2
    flow.write_config(config)
    try:
        flow.run(target)
        assert server.total_requests() == asked  # every answer came from the cache
        for stage, frame in before.items():
            after = pd.read_parquet(flow.path(f"results/tiny/questions/{stage}.parquet"))
            pd.testing.assert_frame_equal(after, frame)
        for step, count in requests.items():
            gathered = accounting(flow, step)
            if step == "filter":
                # The judge's shards share some reads (a passage of another group in the
                # answerer check, a pooled passage): each shard asks its own copy, from the
                # cache, so only the count of distinct calls stays.
                assert gathered["requests"] >= count, step
                assert gathered["cache_hits"] == gathered["requests"], step
            else:
                assert (gathered["requests"], gathered["cache_hits"]) == (count, count), step
        logs = flow.path("logs/tiny/compose_not")
        assert sorted(p.name for p in logs.glob("shard-*-of-2.log")) == [
            f"shard-{i}-of-2.log" for i in range(2)
        ]
        assert not list(flow.path("results/tiny/shards").rglob("*.parquet"))  # temporary
    finally:
        flow.write_config(scripted_config(server, candidates={"n_groups": 4}))


def asked(flow, model) -> set[str]:
    """The requests (messages and sampling parameters) answered for `model`, from the cache."""
    entries = [json.loads(p.read_text()) for p in flow.path("cache/llm").rglob("*.json")]
    return {
        json.dumps({k: v for k, v in e["request"].items() if k != "model"}, sort_keys=True)
        for e in entries
        if e["request"]["model"] == model
    }


def is_generation(request: str) -> bool:
    """A call of the generation jobs: the questions, the members' sorts and places, and the
    membership reads with which the kinds job verifies the members (the judge reuses them from
    the cache)."""
    user = [m for m in json.loads(request)["messages"] if m["role"] == "user"][-1]
    step, *fields = user["content"].split("|")
    membership = step == "JUDGE" and fields[0].startswith(MEMBERSHIP)
    return step in ("SIMPLE", "KINDS", "AND", "OR", "NOT", "SORT", "PLACE") or membership


def test_a_failed_llm_job_is_redone_with_the_new_settings(scripted):
    # The model changes, the endpoint fails mid-stage, comes back, and the same config runs
    # again: every stage must hold the new model's rows, and every call must have been asked.
    flow, server = scripted
    config = scripted_config(server, candidates={"n_groups": 4})
    target = artifact("all_questions", corpus="tiny")
    flow.write_config(config)
    flow.run(target)  # nothing to do after the tests above; makes this test standalone
    stages = ["simple", "disjunctive", "and", "or", "not"]
    generation_calls = None
    try:
        # v2: the outage hits the first LLM job (atomic questions) after 3 answers; v3: it
        # hits the filter, the last stage, after every generation call and 2 of its own.
        for model, failing_rule in (("v2", "atomic_questions"), ("v3", "judge_questions")):
            config["llm"]["model"] = model
            flow.write_config(config)
            after = 3 if generation_calls is None else generation_calls + 2
            server.start_outage("500", after=after)
            failed = flow.run(target, check=False)
            server.end_outage()
            assert failed.returncode != 0
            assert f"boolbench: rule {failing_rule} failed" in failed.stderr
            flow.run(target)
            for stage in stages:
                rows = pd.read_parquet(flow.path(f"results/tiny/questions/{stage}.parquet"))
                assert rows["model"].eq(model).all(), stage
            dataset = pd.read_parquet(flow.path(target))
            assert dataset["model"].eq(model).all()
            generation_calls = sum(map(is_generation, asked(flow, "v2")))
        # Both models were asked every request (a stale stage would have left v3's share of
        # the failed stage, the filter, unasked; v2's atomic questions likewise).
        assert asked(flow, "v3") == asked(flow, "v2")
        assert sum(not is_generation(r) for r in asked(flow, "v3")) > 2
    finally:
        server.end_outage()
        flow.write_config(scripted_config(server, candidates={"n_groups": 4}))


def test_a_judge_that_failed_on_new_questions_is_redone(scripted):
    # Same settings, new questions (a fifth group): the judge fails on them and the rerun must
    # judge them, not keep the old judgements under the new questions (Snakemake records the
    # failed job as done with its new inputs' checksums; see running.forget_failed_jobs).
    flow, server = scripted
    config = scripted_config(server, candidates={"n_groups": 4})
    flow.write_config(config)
    target = artifact("all_questions", corpus="tiny")
    written = artifact("written_questions", corpus="tiny")
    flow.run(target)
    config["candidates"]["n_groups"] = 5
    try:
        flow.write_config(config)
        flow.run(written)  # the generation stages, so that the judge's is the next LLM call
        server.start_outage("500")
        failed = flow.run(target, check=False)
        server.end_outage()
        assert "boolbench: rule judge_questions failed" in failed.stderr
        flow.run(target)
        questions = set(pd.read_parquet(flow.path(written))["qid"])
        judged = set(pd.read_parquet(flow.path(artifact("answers", corpus="tiny")))["qid"])
        assert 4 in set(pd.read_parquet(flow.path(written))["group"])
        assert questions == judged
    finally:
        server.end_outage()
        flow.write_config(scripted_config(server, candidates={"n_groups": 4}))


def start_on_a_hung_endpoint(flow, server, model: str):
    """Snakemake started on the LLM stages, once its first LLM job waits on an endpoint that
    never answers."""
    config = scripted_config(server, candidates={"n_groups": 4})
    config["llm"] |= {"model": model, "timeout_s": 600}  # a new model: every LLM job reruns
    flow.write_config(config)
    server.start_outage("hang")
    asked = server.total_requests()
    snakemake = flow.start(artifact("all_questions", corpus="tiny"))
    deadline = time.monotonic() + 120
    while server.total_requests() == asked:
        assert snakemake.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    time.sleep(1)
    return snakemake


def stop_and_restore(flow, server, snakemake) -> None:
    server.end_outage()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(snakemake.pid, signal.SIGKILL)
    snakemake.wait()
    flow.write_config(scripted_config(server, candidates={"n_groups": 4}))


@pytest.mark.parametrize("stop", ["SIGTERM", "Ctrl-C"])
def test_stopping_snakemake_stops_an_llm_job_waiting_on_a_hung_endpoint(scripted, stop):
    # SIGTERM to Snakemake alone (kill PID), or SIGINT to its whole process group (Ctrl-C in
    # its terminal), while its LLM job waits on an endpoint that never answers.
    flow, server = scripted
    snakemake = start_on_a_hung_endpoint(flow, server, f"stopped-by-{stop}")
    try:
        if stop == "SIGTERM":
            snakemake.send_signal(signal.SIGTERM)
        else:
            os.killpg(snakemake.pid, signal.SIGINT)
        output, _ = snakemake.communicate(timeout=60)  # the hung calls would take 10 minutes
        assert snakemake.returncode != 0
        with pytest.raises(ProcessLookupError):  # no job of it is left running
            os.killpg(snakemake.pid, 0)
    finally:
        stop_and_restore(flow, server, snakemake)
    name = "SIGTERM" if stop == "SIGTERM" else "SIGINT"
    line = (
        f"boolbench: rule atomic_questions interrupted by {name} (Snakemake was stopped); its "
        "outputs are not written, a rerun redoes it"
    )
    logs = [p for p in flow.path("logs/tiny").glob("*_questions/*.log") if line in p.read_text()]
    assert len(logs) == 1, output
    assert logs[0].read_text().splitlines()[-1] == line
    assert line in output  # and on the console


def test_a_second_run_in_the_folder_is_told_which_run_holds_it(scripted):
    flow, server = scripted
    first = start_on_a_hung_endpoint(flow, server, "held")
    try:
        second = flow.run(artifact("all_questions", corpus="tiny"), check=False)
        assert second.returncode != 0
        assert "Directory cannot be locked" in second.stderr  # Snakemake's own message
        assert (
            f"boolbench: another run is in progress in this folder (Snakemake pid {first.pid}, "
            "started "
        ) in second.stderr
        assert (
            f"wait for it to finish or stop it (kill {first.pid}); --unlock is only for the lock "
            "of a run that was killed"
        ) in second.stderr
        assert first.poll() is None  # the first run goes on
        first.send_signal(signal.SIGTERM)  # stopped, it releases the folder
        first.wait(timeout=60)
    finally:
        stop_and_restore(flow, server, first)
    # Once it is gone, its note is too: the next run is told of no other.
    assert "another run" not in flow.run("--dry-run").stderr


def test_end_to_end_on_the_embedded_model(workflow):
    workflow.write_config(
        tiny_config(
            llm={
                "backend": "local",
                "local_model": "smollm2-135m",
                "cache_dir": "cache",
                "max_tokens": 48,
                # every step on the tiny model but the kinds, which the default too asks of
                # Qwen 1.5B: the 135M model never names a kind with its members
                "steps": {"disjunctive": {"local_model": "qwen-1.5b", "max_tokens": 96}},
            },
            candidates={"n_groups": 1},
            # the 135M model's judgements are near chance: keep what it does not refuse, so
            # that the decomposition has questions to work on
            filter={"mode": "default", "threshold": 0.01, "membership_threshold": 0.01},
            # the one group's kind in the test split, which the decomposition reads
            split={"train_fraction": 0.0},
        )
    )
    # Generation, filtering and the decomposition on the real model; not the evaluation.
    workflow.run(artifact("table1_csv", corpus="tiny"), artifact("decomposed", corpus="tiny"))
    all_questions = pd.read_parquet(workflow.path(artifact("all_questions", corpus="tiny")))
    assert set(all_questions["type"]) == {"AND", "OR", "NOT"}  # of the one group
    assert all_questions.groupby("type").size().le(3).all()  # generation.per_group
    assert all_questions["model"].eq("local:smollm2-135m").all()
    written = all_questions[all_questions["status"] != "dropped"]
    assert written["question"].str.endswith("?").all()
    check = pd.read_parquet(workflow.path(artifact("answerer_check", corpus="tiny")))
    candidates = pd.read_parquet(workflow.path(artifact("candidates", corpus="tiny")))
    # every simple question with its own passage and its siblings (one group: no passage of
    # another cluster to ask about), each a yes/no judgement read from token probabilities
    assert len(check) == len(candidates) ** 2
    assert set(check["relation"]) == {"own", "sibling"}
    # P(yes) where the tiny model's top tokens hold a yes or a no (they may hold neither)
    assert check["p_yes"].dropna().between(0, 1).all() and check["p_yes"].notna().any()
    report = json.loads(workflow.path(artifact("generation_report", corpus="tiny")).read_text())
    own = check[check["relation"] == "own"]
    assert len(own) == len(candidates)
    assert report["answerer_check"]["n_own"] == own["answered"].notna().sum()
    table = pd.read_csv(workflow.path(artifact("table1_csv", corpus="tiny"))).set_index("type")
    assert table.loc["ALL", "generated"] == len(all_questions)
    calls = sum(accounting(workflow, step)["api_calls"] for step in LLM_STEPS)
    # kinds (1), a simple question per member (2-3), the judgements (compositions are
    # templates in the default compose mode)
    assert calls >= 1 + 2 + len(check)
    decomposed = pd.read_parquet(workflow.path(artifact("decomposed", corpus="tiny")))
    kept = pd.read_parquet(workflow.path(artifact("dataset", corpus="tiny")))
    assert len(decomposed) == len(kept) > 0 and decomposed["attempts"].ge(1).all()


def test_llm_jobs_hold_an_llm_slot(workflow):
    workflow.write_config(tiny_config(candidates={"n_groups": 2}))
    result = workflow.run("--dry-run")
    jobs = result.stdout.split("\nrule ")[1:]
    llm_rules = ("atomic_questions", "compose_questions", "judge_questions", "decompose_questions")
    llm_jobs = [job for job in jobs if job.startswith(llm_rules)]
    assert len(llm_jobs) == 7  # 2 atomic, 3 compositions, the filter, the decomposition
    assert all("llm_slots=1" in job for job in llm_jobs)
    assert not any("llm_slots" in job for job in jobs if not job.startswith(llm_rules))


@pytest.mark.parametrize("depth", [0, 10])
def test_the_judge_waits_for_the_searches_only_when_it_pools(workflow, depth):
    workflow.write_config(tiny_config(candidates={"n_groups": 2}, pooling={"depth": depth}))
    result = workflow.run("--dry-run", artifact("answers", corpus="tiny"))
    rules = {job.split(":")[0] for job in result.stdout.split("\nrule ")[1:]}
    assert "judge_questions" in rules
    assert ("search" in rules) == (depth > 0)
