"""profiles/slurm, as shipped, on a real single-node SLURM cluster (tests/slurm_cluster.py): no
accounting database, no GPUs, a node smaller than the profile's largest requests. A tiny
workflow with an LLM stage (the scripted fake server) goes through sbatch, and its artifacts
equal a local run's.

The corpus is grouped by document (no encoding), which keeps the chain to five SLURM jobs:
each costs two Snakemake start-ups inside the job and a status poll, about 20 s here.

A second cluster has partitions smaller than its node: jobs above their limits stay PENDING,
and the profile must find them, name the limit, and fail them instead of waiting forever."""

import os
import re
import subprocess
import time

import pandas as pd
import pytest

from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.paths import artifact
from boolbench.slurm_executor import never_starting_jobs
from tests.conftest import REPO, Workflow, tiny_config
from tests.scripted_llm import respond, scripted_config
from tests.slurm_cluster import SlurmCluster, missing_binaries

pytestmark = [
    pytest.mark.workflow,  # a real SLURM cluster runs the real Snakefile
    pytest.mark.slurm,
]
# Set by .ci/run: there, tests that did not run are a failure, not a skip.
REQUIRE = "BOOLBENCH_REQUIRE_SLURM"


@pytest.fixture(scope="module", autouse=True)
def slurm_binaries():
    """Skips these tests without Debian's SLURM packages, or fails them where REQUIRE is set."""
    missing = missing_binaries()
    if missing:
        why = (
            f"SLURM binaries absent ({', '.join(missing)}): apt-get install slurmctld slurmd "
            "slurm-client munge (as .ci/run does)"
        )
        if os.environ.get(REQUIRE, "").strip() not in ("", "0"):
            pytest.fail(f"{why}; {REQUIRE} is set, so the real-SLURM tests must run", False)
        pytest.skip(why)


NODE_MEMORY_MB = 8000  # below ingest's 16,000 MB request: the profile must cap it
TARGET = "results/nq/questions/simple.parquet"
ARTIFACTS = ["corpus.parquet", "document_groups.parquet", "candidates.parquet"]
# atomic_questions twice: each group's kind, then its members' simple questions
REMOTE_RULES = {"ingest": 1, "group_by_document": 1, "sample_candidates": 1, "atomic_questions": 2}


def corpus_for(workflow) -> dict:
    """20 passages, 4 pages, in a DPR TSV file in the workflow's folder; each passage of a page
    tells its own aspect of the page's story (its keyword)."""
    lines = ["id\ttext\ttitle"]
    for page in range(4):
        for i in range(5):
            # a keyword without digits (a word with one is a name, no aspect), no two alike
            word = ("Apple", "Berry", "Cherry", "Damson", "Elder")[i]
            text = f"{word} is passage {i} of page {page}."
            lines.append(f"{page * 5 + i}\t{text}\tPage{page}")
    path = workflow.path("psgs_w100.tsv")
    path.write_text("\n".join(lines) + "\n")
    return {"source": "dpr", "path": str(path), "grouping": "document", "genre": "news"}


def config_for(workflow, server):
    corpora = {"nq": corpus_for(workflow)}
    return scripted_config(server, corpora=corpora, candidates={"n_groups": 2})


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The same config run through profiles/slurm on the test cluster, and locally."""
    with (
        SlurmCluster(max_memory_mb=NODE_MEMORY_MB) as cluster,
        FakeOpenAIServer(responder=respond) as server,
    ):
        local = Workflow(tmp_path_factory.mktemp("local"))
        local.write_config(config_for(local, server))
        local.run(TARGET)
        remote = Workflow(tmp_path_factory.mktemp("slurm"))
        remote.write_config(config_for(remote, server))
        result = remote.run(
            TARGET,
            "--workflow-profile", str(REPO / "profiles" / "slurm"),
            # The plugin first looks at a job after 40 s; these jobs take about 15 s.
            "--slurm-init-seconds-before-status-checks", "5",
            env=cluster.env,
            timeout=900,
        )  # fmt: skip
        yield cluster, local, remote, result.stdout + result.stderr


def slurm_rule(job: dict[str, str]) -> str:
    """The rule of a SLURM job, from the comment the executor plugin gives it."""
    return job["Comment"].removeprefix("rule_").split("_wildcards_")[0]


def test_every_job_went_through_sbatch_and_succeeded(runs):
    cluster, _, _, output = runs
    # Snakemake's record of its submissions...
    submitted = re.findall(r"Job \d+ has been submitted with SLURM jobid (\d+)", output)
    assert len(submitted) == sum(REMOTE_RULES.values())
    # ...is what slurmctld accepted and ran to exit status 0, one job per remote rule.
    assert sorted(cluster.submitted_jobs(), key=int) == sorted(submitted, key=int)
    assert cluster.completed_jobs() == dict.fromkeys(submitted, 0)
    rules = sorted(slurm_rule(cluster.job(j)) for j in submitted)
    assert rules == sorted(rule for rule, n in REMOTE_RULES.items() for _ in range(n))
    # (Job status comes from squeue: with sacct, which has no accounting database to ask
    # here, the plugin never sees a job finish and the run would not end.)
    assert "profiles/slurm: partition debug (the default)" in output
    # No account given: none is guessed ("No SLURM account given, trying to guess", then
    # "not able to get a SLURM account via sacct" without the profile's slurm-no-account).
    assert "SLURM account" not in output
    assert all("Account=(null)" in cluster.query("scontrol", "show", "job", j) for j in submitted)


def test_requests_fit_the_node(runs):
    cluster, _, _, _ = runs
    jobs = {slurm_rule(job): job for job in map(cluster.job, cluster.submitted_jobs())}
    assert {job["JobState"] for job in jobs.values()} == {"COMPLETED"}
    # ingest asks for 16,000 MB and LLM jobs for 4 threads: capped at the node (sinfo).
    assert jobs["ingest"]["MinMemoryNode"] == f"{NODE_MEMORY_MB}M"
    assert jobs["sample_candidates"]["MinMemoryNode"] == "4000M"  # below the cap: as asked
    assert int(jobs["atomic_questions"]["NumCPUs"]) == min(4, cluster.cpus)
    assert not any("gpu" in job.get("TresPerNode", "") for job in jobs.values())


def test_outputs_equal_a_local_run(runs):
    _, local, remote, _ = runs
    for name in ARTIFACTS:
        ours = pd.read_parquet(remote.path(f"results/nq/{name}"))
        pd.testing.assert_frame_equal(ours, pd.read_parquet(local.path(f"results/nq/{name}")))
    questions = [pd.read_parquet(flow.path(TARGET)) for flow in (remote, local)]
    pd.testing.assert_frame_equal(*questions)
    # the server's: a page's paragraphs are a story (grouping: document), each asked about
    assert questions[0]["question"].str.startswith("What about the page concerns ").all()


# Partitions smaller than the node: 30 minutes, one CPU and 2000 MB per job; 30 minutes.
PARTITIONS = {"small": "MaxTime=30 MaxCPUsPerNode=1 MaxMemPerNode=2000", "short": "MaxTime=30"}


@pytest.fixture(scope="module")
def partitioned_cluster():
    with SlurmCluster(max_memory_mb=NODE_MEMORY_MB, partitions=PARTITIONS) as cluster:
        yield cluster


def test_jobs_above_the_partitions_limits_are_found_with_their_limit(
    partitioned_cluster, monkeypatch
):
    cluster = partitioned_cluster
    monkeypatch.setenv("SLURM_CONF", str(cluster.conf))
    name = "boolbench-never"
    cpus = cluster.sbatch("-p", "small", "-J", name, "-c", "2")
    asks = {
        cpus: "it asks for 2 CPUs, the partition allows 1 CPU;",
        cluster.sbatch("-p", "small", "-J", name, "--time=60"): (
            "it asks for 60 min, the partition allows 30 min;"
        ),
        cluster.sbatch("-p", "small", "-J", name, "--mem=3000"): (
            "it asks for 3000 MB, the partition allows 2000 MB;"
        ),
    }
    held = cluster.sbatch("-p", "small", "-J", name, "--hold")  # PENDING, but for the user
    deadline = time.monotonic() + 60  # reasons come with the scheduler's next pass
    while (found := never_starting_jobs(name)).keys() != asks.keys():
        assert time.monotonic() < deadline, (found, cluster.query("squeue"))
        time.sleep(1)
    # SLURM's reason (PartitionConfig, PartitionTimeLimit, MaxMemPerLimit: it picks one), and
    # the limit each job exceeds.
    for job_id, limit in asks.items():
        reason = cluster.job(job_id)["Reason"]
        assert found[job_id].startswith(
            f"SLURM job {job_id} can never start in partition small ({reason}): {limit}"
        ), found[job_id]
    assert cluster.job(cpus)["Reason"] == "PartitionConfig"  # the case
    assert held not in found
    assert never_starting_jobs("another-run") == {}  # only this run's jobs
    cluster.query("scancel", "--name", name)


def test_a_job_that_never_starts_fails_with_one_line(partitioned_cluster, tmp_path):
    """runtime=240 above the partition's 30 minutes: SLURM keeps ingest PENDING with
    PartitionTimeLimit; the profile cancels it and Snakemake fails it (three attempts)."""
    cluster = partitioned_cluster
    workflow = Workflow(tmp_path)
    workflow.write_config(tiny_config(corpora={"nq": corpus_for(workflow)}))
    env = {**cluster.env, "SBATCH_PARTITION": "short", "BOOLBENCH_SLURM_LIMITS": "runtime=240"}
    try:
        result = workflow.run(
            artifact("corpus", corpus="nq"),
            "--workflow-profile", str(REPO / "profiles" / "slurm"),
            "--slurm-init-seconds-before-status-checks", "5",
            env=env, check=False, timeout=600,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        pytest.fail(
            f"Snakemake still waits for a job SLURM never starts: {cluster.query('squeue')}"
        )
    output = result.stdout + result.stderr
    assert result.returncode != 0
    # sinfo's node, the limit as given (above the partition's time limit)
    assert "profiles/slurm: partition short; requests capped at 2 CPUs, 8000 MB, 240 min" in output
    lines = re.findall(r"rule ingest \(corpus=nq\): SLURM job (\d+) can never start (.*)", output)
    assert lines and lines[0][1] == (
        "in partition short (PartitionTimeLimit): it asks for 120 min, the partition allows "
        "30 min; cancelled (BOOLBENCH_SLURM_LIMITS sets the most a job asks for, see "
        "docs/running.md)"
    ), output
    # Each attempt (the profile retries twice) was submitted, found, cancelled, and failed.
    attempts = sorted({job_id for job_id, _ in lines}, key=int)
    assert len(attempts) == 3, output
    states = {j: cluster.job(j)["JobState"] for j in attempts}
    assert states == dict.fromkeys(attempts, "CANCELLED")
    assert "240 min, the partition allows 30 min" in output  # attempt 2 asks min(240, 240)
    # The line is the rule's log too.
    assert "can never start in partition short" in workflow.path("logs/nq/ingest.log").read_text()
    assert not workflow.path(artifact("corpus", corpus="nq")).exists()
