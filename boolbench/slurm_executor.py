"""What profiles/slurm changes in snakemake-executor-plugin-slurm, installed by the profile.

- `--slurm-no-account` (set by the profile when SBATCH_ACCOUNT is not): no account and no
  guess. The plugin declares the setting but (2.8.0) ignores it, and its guess runs
  `sacct ... | tail -1` without a shell, which prints "not able to get a SLURM account via
  sacct" on every run (and needs an accounting database anyway).
- A job PENDING for a reason SLURM never lifts (a request above the partition's limits, e.g.
  PartitionConfig after BOOLBENCH_SLURM_LIMITS raised the caps) is cancelled and failed with one
  line naming the rule, the request and the limit; the plugin would wait for it forever.
"""

from __future__ import annotations

import asyncio
import re
import subprocess
from pathlib import Path

from boolbench.slurm import LIMIT_KEYS, PartitionLimits, parse_sinfo, run_sinfo, slurm_minutes

# Pending reasons that stay until someone changes the job or the cluster's configuration
# (squeue(1), "JOB REASON CODES"); Resources, Priority, ReqNodeNotAvail etc. pass.
NEVER_STARTING = {
    "PartitionConfig", "PartitionTimeLimit", "MaxMemPerLimit", "BadConstraints",
    "InvalidAccount", "InvalidQOS",
}  # fmt: skip
# Per-job limits of a QOS or association (QOSMaxCpuPerJobLimit, AssocMaxMemPerJob, ...) and
# QOS minimums (QOSMinCpuNotSatisfied).
NEVER_STARTING_PATTERN = re.compile(r"(QOS|Assoc)Max\w*PerJob|QOSMin")
UNITS = {"mem_mb": " MB", "runtime": " min"}
QUERY_TIMEOUT_S = 30


def never_starts(reason: str) -> bool:
    """Whether a PENDING job's reason is one SLURM never lifts by itself."""
    return reason in NEVER_STARTING or bool(NEVER_STARTING_PATTERN.match(reason))


def megabytes(text: str) -> int | None:
    """A SLURM memory size ("16000M", "16G", "4000") in MB; None for 0 or unlimited."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([KMGT]?)", text.strip().upper())
    if not match or float(match.group(1)) == 0:
        return None
    scale = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024**2}[match.group(2) or "M"]
    return round(float(match.group(1)) * scale)


def job_request(job: dict[str, str]) -> PartitionLimits:
    """CPUs, memory (MB) and time limit (minutes) of `scontrol show job` output."""
    cpus = int(job.get("NumCPUs") or job.get("MinCPUsNode") or 1)
    mem = megabytes(job.get("MinMemoryNode", ""))
    if mem is None and megabytes(job.get("MinMemoryCPU", "")):
        mem = megabytes(job["MinMemoryCPU"]) * cpus
    return PartitionLimits(cpus=cpus, mem_mb=mem, runtime=slurm_minutes(job.get("TimeLimit", "")))


def partition_limits(
    partition: dict[str, str], nodes: PartitionLimits, cpus: int = 1
) -> PartitionLimits:
    """The most one job gets in a partition (`scontrol show partition`): its largest node
    (`nodes`, from sinfo), MaxCPUsPerNode, MaxMemPerNode or MaxMemPerCPU, and MaxTime."""
    max_cpus = _number(partition.get("MaxCPUsPerNode", ""))
    max_mem = megabytes(partition.get("MaxMemPerNode", ""))
    per_cpu = megabytes(partition.get("MaxMemPerCPU", ""))
    if per_cpu:
        max_mem = min(filter(None, (max_mem, per_cpu * cpus)))
    return PartitionLimits(
        cpus=min(filter(None, (nodes.cpus, max_cpus)), default=None),
        mem_mb=min(filter(None, (nodes.mem_mb, max_mem)), default=None),
        runtime=slurm_minutes(partition.get("MaxTime", "")),
    )


def explain(job: dict[str, str], partition: dict[str, str], nodes: PartitionLimits) -> str:
    """Why a job never starts: its request, and the partition's limits it exceeds."""
    request = job_request(job)
    limits = partition_limits(partition, nodes, request.cpus or 1)
    over = [
        key
        for key in LIMIT_KEYS
        if getattr(request, key) and getattr(limits, key)
        and getattr(request, key) > getattr(limits, key)
    ]  # fmt: skip
    if over:
        asks = " and ".join(_amount(request, key) for key in over)
        allows = f"the partition allows {' and '.join(_amount(limits, key) for key in over)}"
    else:  # a QOS or account limit: what it asks for, and SLURM's word for why not
        asks = ", ".join(_amount(request, key) for key in LIMIT_KEYS if getattr(request, key))
        allows = "more than the cluster grants"
    return (
        f"SLURM job {job['JobId']} can never start in partition {job.get('Partition', '?')} "
        f"({job.get('Reason', '?')}): it asks for {asks}, {allows}; cancelled "
        f"(BOOLBENCH_SLURM_LIMITS sets the most a job asks for, see docs/running.md)"
    )


def _amount(values: PartitionLimits, key: str) -> str:
    value = getattr(values, key)
    return f"{value} CPU{'' if value == 1 else 's'}" if key == "cpus" else f"{value}{UNITS[key]}"


def _number(text: str) -> int | None:
    return int(text) if text.strip().isdigit() else None


def _fields(text: str) -> dict[str, str]:
    """`scontrol show ... --oneliner` as a dict."""
    return dict(re.findall(r"(\S+?)=(\S*)", text))


def _query(*command: str) -> str | None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=QUERY_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def never_starting_jobs(job_name: str) -> dict[str, str]:
    """Job id -> `explain` line, for this run's PENDING jobs (sbatch --job-name) that never
    start; {} when there are none or squeue cannot be asked (the plugin's check goes on)."""
    pending = _query(
        "squeue", "--noheader", "--states=PENDING", f"--name={job_name}", "--format=%i|%r"
    )
    stuck = {}
    for line in (pending or "").splitlines():
        job_id, _, reason = line.strip().partition("|")
        if not never_starts(reason):
            continue
        job = _fields(_query("scontrol", "show", "job", "--oneliner", job_id) or "")
        if job.get("JobState") != "PENDING":
            continue
        name = job.get("Partition", "")
        partition = _fields(_query("scontrol", "show", "partition", "--oneliner", name) or "")
        sinfo, _ = run_sinfo(name)
        nodes = parse_sinfo(sinfo or "")[0].get(name, PartitionLimits())
        stuck[job_id] = explain({**job, "JobId": job_id}, partition, nodes)
    return stuck


def fail_never_starting(executor, active_jobs: list, stuck: dict[str, str]) -> list:
    """Cancel and report as failed the active jobs in `stuck` (the line in the console and in
    the rule's log); the others, to be checked as usual."""
    waiting = []
    for info in active_jobs:
        line = stuck.get(info.external_jobid)
        if line is None:
            waiting.append(info)
            continue
        _query("scancel", info.external_jobid)
        job = info.job
        wildcards = ", ".join(f"{k}={v}" for k, v in (job.wildcards_dict or {}).items())
        line = f"rule {job.name}{f' ({wildcards})' if wildcards else ''}: {line}"
        for log in job.log:
            try:
                Path(log).parent.mkdir(parents=True, exist_ok=True)
                Path(log).write_text(line + "\n")
            except OSError:
                pass
        # Snakemake appends "For further error details ..." to the message: a line of its own.
        executor.report_job_error(info, msg=line + "\n")
    return waiting


def adapt_executor() -> None:
    """Install the two changes above into the plugin's Executor (once per process; nothing
    where the plugin is not installed)."""
    try:
        from snakemake_executor_plugin_slurm import Executor
    except ImportError:
        return
    if getattr(Executor, "_boolbench_adapted", False):
        return
    post_init, check_active_jobs = Executor.__post_init__, Executor.check_active_jobs

    def __post_init__(self, *args, **kwargs):
        post_init(self, *args, **kwargs)
        if getattr(self.workflow.executor_settings, "no_account", False):
            self._fallback_account_arg = ""  # what the plugin uses once its guess failed

    async def checked(self, active_jobs):
        # The executor interface starts its wait thread before __post_init__ names the run
        # (run_uuid); on a loaded machine the first check came first, and its AttributeError
        # (the plugin's own check reads run_uuid too) ended the thread: Snakemake then waited
        # for ever. Until the run is named no job is submitted: nothing to check.
        run_uuid = getattr(self, "run_uuid", None)
        if run_uuid is None:
            for job in active_jobs:
                yield job
            return
        stuck = await asyncio.to_thread(never_starting_jobs, run_uuid)
        waiting = fail_never_starting(self, active_jobs, stuck) if stuck else active_jobs
        async for job in check_active_jobs(self, waiting):
            yield job

    Executor.__post_init__ = __post_init__
    Executor.check_active_jobs = checked
    Executor._boolbench_adapted = True
