"""The cluster profiles parse and give each job the resources they promise (dry runs: no
cluster exists here). Run the way a cluster user does: `--workflow-profile profiles/<name>`,
which replaces profiles/default."""

import re

import pytest

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


def dry_run(workflow, profile: str, *extra: str) -> dict[str, dict[str, str]]:
    workflow.write_config(tiny_config())
    result = workflow.run(
        "--workflow-profile", str(REPO / "profiles" / profile), "--dry-run", "--cores", "64",
        *extra,
    )  # fmt: skip
    assert (
        f"Using workflow specific profile {REPO / 'profiles' / profile}"
        in result.stdout + result.stderr
    )
    return job_settings(result.stdout)


def test_slurm_profile_resources(workflow):
    jobs = dry_run(workflow, "slurm")
    encode = jobs["encode_shard"]
    assert (encode["threads"], encode["gpu"], encode["mem_mb"], encode["runtime"]) == (
        "8", "1", "16000", "240"
    )  # fmt: skip
    # LLM jobs: memory and a long runtime for the embedded model, and one llm_slots unit each.
    for rule in ("atomic_questions", "compose_questions", "filter_questions"):
        assert (jobs[rule]["mem_mb"], jobs[rule]["runtime"], jobs[rule]["llm_slots"]) == (
            "8000", "720", "1"
        ), rule  # fmt: skip
    assert (jobs["cluster"]["mem_mb"], jobs["cluster"]["threads"]) == ("32000", "4")
    # Rules without settings get the defaults (attempt 1 of the retried scaling).
    assert (jobs["sample_candidates"]["mem_mb"], jobs["sample_candidates"]["runtime"]) == (
        "4000", "60"
    )  # fmt: skip
    assert "gpu" not in jobs["sample_candidates"]


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
    assert jobs["filter_questions"]["llm_slots"] == "1"
    assert jobs["sample_candidates"]["disk_mb"] == "20000"
    # The packaged corpus is read in place, not looked up in the storage.
    assert jobs["ingest"]["input"].endswith("summaries_en-us.json")
    assert "(send to storage)" in jobs["ingest"]["output"]


@pytest.mark.parametrize("profile", ["slurm", "kubernetes"])
def test_profiles_retry_failed_jobs(profile):
    text = (REPO / "profiles" / profile / "config.yaml").read_text()
    assert re.search(r"^retries: [1-9]", text, re.M)
    assert "* attempt" in text  # a retried job asks for more memory
