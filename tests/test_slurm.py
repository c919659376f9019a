"""profiles/slurm, as shipped, on a real single-node SLURM cluster (tests/slurm_cluster.py): no
accounting database, no GPUs, a node smaller than the profile's largest requests. A tiny
workflow with an LLM stage (the scripted fake server) goes through sbatch, and its artifacts
equal a local run's.

The corpus is grouped by document (no encoding), which keeps the chain to four SLURM jobs:
each costs two Snakemake start-ups inside the job and a status poll, about 20 s here."""

import re

import pandas as pd
import pytest

from boolbench.llm.fake_server import FakeOpenAIServer
from tests.conftest import REPO, Workflow
from tests.scripted_llm import respond, scripted_config
from tests.slurm_cluster import SlurmCluster, missing_binaries

pytestmark = [
    pytest.mark.workflow,  # a real SLURM cluster runs the real Snakefile
    pytest.mark.slurm,
    pytest.mark.skipif(
        bool(missing_binaries()),
        reason=f"SLURM binaries absent ({', '.join(missing_binaries())}): "
        "apt-get install slurmctld slurmd slurm-client munge (as .ci/run does)",
    ),
]

NODE_MEMORY_MB = 8000  # below ingest's 16,000 MB request: the profile must cap it
TARGET = "results/nq/questions/simple.parquet"
ARTIFACTS = ["corpus.parquet", "document_groups.parquet", "candidates.parquet"]
REMOTE_RULES = {"ingest": 1, "group_by_document": 1, "sample_candidates": 1, "atomic_questions": 1}


def config_for(workflow, server):
    lines = ["id\ttext\ttitle"]
    for page in range(4):
        for i in range(5):
            lines.append(f"{page * 5 + i}\tTopic{page} passage {i} of page {page}.\tPage{page}")
    path = workflow.path("psgs_w100.tsv")
    path.write_text("\n".join(lines) + "\n")
    corpus = {"source": "dpr", "path": str(path), "grouping": "document"}
    return scripted_config(server, corpora={"nq": corpus}, candidates={"n_groups": 2})


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
    assert rules == sorted(REMOTE_RULES)
    # (Job status comes from squeue: with sacct, which has no accounting database to ask
    # here, the plugin never sees a job finish and the run would not end.)
    assert "profiles/slurm: partition debug (the default)" in output


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
    assert questions[0]["question"].str.startswith("What is Topic").all()  # the server's
