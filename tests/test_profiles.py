"""The cluster profiles parse and give each job the resources they promise (dry runs: no
cluster exists here). Run the way a cluster user does: `--workflow-profile profiles/<name>`,
which replaces profiles/default."""

import os
import re

import pytest
import yaml

from boolbench.constants import CLUSTERING_ENCODER
from boolbench.errors import ConfigError
from boolbench.slurm import (
    PartitionLimits,
    SlurmSite,
    parse_limits,
    parse_sinfo,
    slurm_minutes,
)
from boolbench.slurm_executor import explain, megabytes, never_starts
from tests.conftest import REPO, tiny_config


def job_settings(output: str) -> dict[str, dict[str, str]]:
    """rule -> threads, resources and storage notes of its first job in a dry run."""
    jobs: dict[str, dict[str, str]] = {}
    current = None
    for line in output.splitlines():
        match = re.match(r"^(?:local)?rule (\w+):$", line)
        if match:
            current = match.group(1) if match.group(1) not in jobs else None
            if current:
                jobs[current] = {"threads": "1"}
        elif current and line.startswith("    threads: "):
            jobs[current]["threads"] = line.split(": ", 1)[1]
        elif current and line.startswith("    resources: "):
            for item in line.split(": ", 1)[1].split(", "):
                key, _, value = item.partition("=")
                jobs[current][key] = value
        elif current and line.startswith(("    input: ", "    output: ")):
            key, _, value = line.strip().partition(": ")
            jobs[current][key] = value
    return jobs


def dry_run(workflow, profile: str, *extra: str, **environ: str) -> dict[str, dict[str, str]]:
    """Job settings of a dry run; `environ`: the site's variables (profiles/slurm reads them;
    BOOLBENCH_SLURM_LIMITS=none by default, so no sinfo of this machine is asked)."""
    workflow.write_config(tiny_config())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SBATCH_", "BOOLBENCH_"))}
    result = workflow.run(
        "--workflow-profile", str(REPO / "profiles" / profile), "--dry-run", "--cores", "64",
        *extra, env={**env, "BOOLBENCH_SLURM_LIMITS": "none", **environ},
    )  # fmt: skip
    assert (
        f"Using workflow specific profile {REPO / 'profiles' / profile}"
        in result.stdout + result.stderr
    )
    return job_settings(result.stdout)


def test_slurm_profile_resources(workflow):
    jobs = dry_run(workflow, "slurm")
    encode = jobs["encode_shard"]
    assert (encode["threads"], encode["mem_mb"], encode["runtime"]) == ("8", "16000", "240")
    # No GPU unless asked for (a CPU-only cluster rejects the request), no site settings.
    assert not any("gpu" in job for job in jobs.values())
    assert not any("slurm_partition" in job or "slurm_account" in job for job in jobs.values())
    # LLM jobs: memory and a long runtime for the embedded model, and one llm_slots unit each.
    for rule in ("atomic_questions", "compose_questions", "judge_questions"):
        assert (jobs[rule]["mem_mb"], jobs[rule]["runtime"], jobs[rule]["llm_slots"]) == (
            "8000", "720", "1"
        ), rule  # fmt: skip
    assert (jobs["cluster"]["mem_mb"], jobs["cluster"]["threads"]) == ("32000", "4")
    # Rules without settings get the defaults (attempt 1 of the retried scaling).
    assert (jobs["sample_candidates"]["mem_mb"], jobs["sample_candidates"]["runtime"]) == (
        "4000", "60"
    )  # fmt: skip


def test_slurm_site_settings_keep_the_per_rule_resources(workflow):
    jobs = dry_run(
        workflow, "slurm", SBATCH_PARTITION="cpu", SBATCH_ACCOUNT="proj42",
        BOOLBENCH_SLURM_GPU="1", BOOLBENCH_SLURM_GPU_PARTITION="gpu",
    )  # fmt: skip
    encode = jobs["encode_shard"]
    assert (encode["gpu"], encode["slurm_partition"], encode["slurm_account"]) == (
        "1", "gpu", "proj42"
    )  # fmt: skip
    assert (encode["threads"], encode["mem_mb"]) == ("8", "16000")
    cluster = jobs["cluster"]
    assert (cluster["slurm_partition"], cluster["mem_mb"], cluster["threads"]) == (
        "cpu", "32000", "4"
    )  # fmt: skip
    assert "gpu" not in cluster
    assert jobs["judge_questions"]["llm_slots"] == "1"


def test_slurm_limits_cap_every_request(workflow):
    jobs = dry_run(workflow, "slurm", BOOLBENCH_SLURM_LIMITS="cpus=2,mem_mb=20000,runtime=600")
    assert (jobs["encode_shard"]["threads"], jobs["encode_shard"]["mem_mb"]) == ("2", "16000")
    assert (jobs["cluster"]["mem_mb"], jobs["cluster"]["runtime"]) == ("20000", "120")
    assert jobs["judge_questions"]["runtime"] == "600"  # 720 asked
    assert jobs["sample_candidates"]["mem_mb"] == "4000"  # below the caps: as asked
    assert jobs["reduce"]["threads"] == "2"


SINFO = """\
debug*|2|20000|infinite|(null)
debug*|4|64000+|infinite|(null)
long|2|20000|2-12:00:00|(null)
gpu|8|128000|1:30:00|gpu:a100:2
"""


def test_sinfo_gives_each_partition_its_largest_node():
    partitions, default = parse_sinfo(SINFO)
    assert default == "debug"
    assert (partitions["debug"].cpus, partitions["debug"].mem_mb) == (4, 64000)
    assert partitions["debug"].runtime is None and not partitions["debug"].gpus
    assert partitions["long"].runtime == 3600
    assert (partitions["gpu"].runtime, partitions["gpu"].gpus) == (90, True)


@pytest.mark.parametrize(
    ("text", "minutes"),
    [("30", 30), ("30:00", 30), ("1:30:00", 90), ("2-00:00:00", 2880), ("1-12", 2160),
     ("UNLIMITED", None), ("infinite", None)],
)  # fmt: skip
def test_slurm_time_limits(text, minutes):
    assert slurm_minutes(text) == minutes


def test_slurm_site_from_environment():
    site = SlurmSite.from_environment({"SBATCH_PARTITION": "long"}, sinfo=SINFO)
    assert (site.threads(8), site.mem("16000 * attempt")) == (2, "min(16000 * attempt, 20000)")
    assert site.runtime("720 * attempt") == "min(720 * attempt, 3600)"
    assert site.gpu_resources() == {} and site.site_resources() == {"slurm_partition": "long"}
    # Without a partition: sinfo's default; a given limit wins over sinfo's.
    default = SlurmSite.from_environment({"BOOLBENCH_SLURM_LIMITS": "mem_mb=8000"}, sinfo=SINFO)
    assert (default.threads(8), default.mem("4000")) == (4, "min(4000, 8000)")
    assert default.runtime("60") == "60"
    assert "partition debug (the default); requests capped at 4 CPUs, 8000 MB" in default.summary()
    # GPUs asked for where sinfo shows none: said so.
    gpu = SlurmSite.from_environment({"BOOLBENCH_SLURM_GPU": "1"}, sinfo=SINFO)
    assert gpu.gpu_resources() == {"gpu": 1}
    assert "sinfo shows no gpu GRES in partition debug" in gpu.summary()
    on_gpus = {"BOOLBENCH_SLURM_GPU": "yes", "BOOLBENCH_SLURM_GPU_PARTITION": "gpu"}
    gpu = SlurmSite.from_environment(on_gpus, sinfo=SINFO)
    assert gpu.gpu_resources() == {"gpu": 1, "slurm_partition": "gpu"}
    assert (gpu.threads(16, gpu=True), gpu.threads(16)) == (8, 4)
    assert "GRES" not in gpu.summary()


def test_slurm_summary_names_the_default_partition_when_every_limit_is_given():
    # All three limits given: sinfo still names the default partition (and the caps are as given).
    given = {"BOOLBENCH_SLURM_LIMITS": "cpus=2,mem_mb=9000,runtime=30"}
    site = SlurmSite.from_environment(given, sinfo=SINFO)
    assert (site.threads(8), site.mem("16000"), site.runtime("60")) == (
        2, "min(16000, 9000)", "min(60, 30)"
    )  # fmt: skip
    assert site.summary().startswith(
        "profiles/slurm: partition debug (the default); requests capped at 2 CPUs, 9000 MB, 30 min"
    )
    # Without sinfo (`none`, or sinfo unreadable) the partition is the cluster's default.
    unnamed = SlurmSite.from_environment({"BOOLBENCH_SLURM_LIMITS": "none"})
    assert unnamed.summary().startswith("profiles/slurm: the default partition; requests not")


def test_pending_reasons_that_never_clear():
    for reason in (
        "PartitionConfig",
        "PartitionTimeLimit",
        "MaxMemPerLimit",
        "QOSMaxCpuPerJobLimit",
        "AssocMaxMemPerJob",
        "QOSMinCpuNotSatisfied",
    ):
        assert never_starts(reason), reason
    for reason in (
        "Resources",
        "Priority",
        "None",
        "JobHeldUser",
        "ReqNodeNotAvail",
        "QOSMaxJobsPerUserLimit",
        "AssocGrpCpuLimit",
        "PartitionDown",
    ):
        assert not never_starts(reason), reason
    assert [megabytes(t) for t in ("16000M", "16G", "4000", "0", "UNLIMITED", "2048K")] == [
        16000, 16384, 4000, None, None, 2
    ]  # fmt: skip


def test_a_never_starting_job_is_explained_by_the_limit_it_exceeds():
    job = {"JobId": "7", "Partition": "cpu", "Reason": "PartitionConfig", "NumCPUs": "16",
           "MinMemoryCPU": "2G", "TimeLimit": "2-00:00:00"}  # fmt: skip
    node = PartitionLimits(cpus=8, mem_mb=64000)
    partition = {
        "MaxTime": "1-00:00:00",
        "MaxCPUsPerNode": "UNLIMITED",
        "MaxMemPerNode": "UNLIMITED",
    }
    assert explain(job, partition, node).startswith(
        "SLURM job 7 can never start in partition cpu (PartitionConfig): it asks for 16 CPUs "
        "and 2880 min, the partition allows 8 CPUs and 1440 min; cancelled"
    )
    # Within the partition (a QOS limit): the whole request and SLURM's reason.
    job |= {"Reason": "QOSMaxCpuPerJobLimit", "NumCPUs": "1", "TimeLimit": "60"}
    assert "(QOSMaxCpuPerJobLimit): it asks for 1 CPU, 2048 MB, 60 min, more than the cluster" in (
        explain(job, partition, node)
    )


def test_a_status_check_before_the_run_is_named_checks_nothing():
    # The executor interface starts its wait thread before the plugin's __post_init__ names
    # the run; on a loaded machine the first check came first, and its AttributeError ended
    # the thread (a real-SLURM test then waited 600 s for a job it had cancelled).
    import asyncio

    pytest.importorskip("snakemake_executor_plugin_slurm")
    from snakemake_executor_plugin_slurm import Executor

    from boolbench.slurm_executor import adapt_executor

    adapt_executor()
    unnamed = object.__new__(Executor)  # as the wait thread sees it before __post_init__

    async def check(jobs):
        return [job async for job in Executor.check_active_jobs(unnamed, jobs)]

    assert asyncio.run(check([])) == []
    assert asyncio.run(check(["submitted"])) == ["submitted"]


def test_slurm_limits_are_checked():
    assert parse_limits("cpus=2, mem_mb=100") == {"cpus": 2, "mem_mb": 100}
    assert parse_limits("none") is None
    with pytest.raises(ConfigError, match="BOOLBENCH_SLURM_LIMITS: 'memory=2'"):
        parse_limits("memory=2")


def test_kubernetes_profile_resources_and_storage(workflow):
    # The profile's S3 bucket needs credentials; a local fs storage stands in for it here.
    remote = workflow.path("remote")
    remote.mkdir()
    jobs = dry_run(
        workflow, "kubernetes", "--default-storage-provider", "fs",
        "--default-storage-prefix", str(remote),
    )  # fmt: skip
    encode = jobs["encode_shard"]
    assert (encode["gpu"], encode["gpu_manufacturer"], encode["mem_mb"]) == ("1", "nvidia", "16000")
    assert "(send to storage)" in encode["output"]
    assert jobs["judge_questions"]["llm_slots"] == "1"
    assert jobs["sample_candidates"]["disk_mb"] == "20000"
    # The packaged corpus is read in place, not looked up in the storage.
    assert jobs["ingest"]["input"].endswith("summaries_en-us.json")
    assert "(send to storage)" in jobs["ingest"]["output"]


@pytest.mark.parametrize("profile", ["slurm", "kubernetes"])
def test_profiles_name_only_rules_the_workflow_has(profile):
    """Snakemake ignores set-threads/set-resources for a rule it does not have, so a renamed
    rule would silently lose its cluster resources."""
    settings = yaml.safe_load((REPO / "profiles" / profile / "config.yaml").read_text())
    sources = "".join(path.read_text() for path in (REPO / "rules").glob("*.smk"))
    rules = set(re.findall(r"^(?:rule|checkpoint) (\w+):", sources, re.M))
    named = set(settings["set-threads"]) | set(settings["set-resources"])
    assert named - rules == set()


@pytest.mark.parametrize("profile", ["slurm", "kubernetes"])
def test_profiles_retry_failed_jobs(profile):
    text = (REPO / "profiles" / profile / "config.yaml").read_text()
    assert re.search(r"^retries: [1-9]", text, re.M)
    assert "* attempt" in text  # a retried job asks for more memory


def test_the_rules_declare_their_threads_and_the_default_profile_sets_none(workflow):
    profile = (REPO / "profiles" / "default" / "config.yaml").read_text()
    assert "\nset-threads:" not in profile
    jobs = dry_run(workflow, "default")
    for rule in ("encode_shard", "atomic_questions", "judge_questions", "search"):
        assert jobs[rule]["threads"] == "2", rule
    assert jobs["sample_candidates"]["threads"] == "1"


def test_the_generation_chain_goes_before_the_model_encodings(workflow):
    """Priorities: on 2 cores the LLM chain (and its gathers) must not wait behind a model's
    encoding job, which only has to be done by the time the questions are."""
    config = tiny_config(models={"l3": {"kind": "onnx"}, "bm25": {"kind": "bm25"}})
    workflow.write_config(config)
    output = workflow.run("--dry-run").stdout
    priority = {}  # rule (encode_shard: and model) -> priority
    for block in output.split("\n\n"):
        match = re.search(r"^(?:local)?rule (\w+):$", block, re.M)
        if match:
            found = re.search(r"^    priority: (\d+)$", block, re.M)
            model = re.search(r"^    wildcards: .*model=([\w.-]+)", block, re.M)
            name = match.group(1)
            if name == "encode_shard":
                name += f":{model.group(1)}"
            priority.setdefault(name, int(found.group(1)) if found else 0)
    chain = [f"encode_shard:{CLUSTERING_ENCODER}", "cluster", "sample_candidates",
             "atomic_questions", "gather_atomic_questions", "compose_questions",
             "gather_composed_questions", "judge_questions", "gather_answers",
             "assemble_dataset"]  # fmt: skip
    assert all(priority[rule] > priority["encode_shard:l3"] for rule in chain), priority
