"""Site settings of profiles/slurm, read when Snakemake loads the profile (a YTE template).

Snakemake's command-line --default-resources, --set-resources and --set-threads replace the
profile's whole block, so the site-specific part comes from the environment instead, and the
profile keeps its per-rule requests:

- SBATCH_PARTITION, SBATCH_ACCOUNT (SLURM's own variables): partition and account of every job.
- BOOLBENCH_SLURM_GPU=1: encoding, re-ranking and contrastive training ask for one GPU each
  (off by default: a CPU-only cluster rejects a GPU request), in BOOLBENCH_SLURM_GPU_PARTITION
  if set.
- BOOLBENCH_SLURM_LIMITS="cpus=2,mem_mb=20000,runtime=1440": the most a job may ask for.
  Unset keys come from `sinfo` (the partition's largest node and its time limit), so a request
  never exceeds what the nodes offer (SLURM would keep such a job PENDING forever); `none`
  skips the sinfo query and caps nothing.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field

from boolbench.errors import ConfigError

LIMIT_KEYS = ("cpus", "mem_mb", "runtime")
TRUE = ("1", "true", "yes", "on")
_announced: set[str] = set()  # Snakemake reads a profile more than once per run


@dataclass(frozen=True)
class PartitionLimits:
    """The largest job a partition can run: CPUs and memory of its largest node, time limit."""

    cpus: int | None = None
    mem_mb: int | None = None
    runtime: int | None = None  # minutes; None: no limit
    gpus: bool = False  # a node has a gpu GRES


@dataclass(frozen=True)
class SlurmSite:
    partition: str | None = None
    account: str | None = None
    gpu: bool = False
    gpu_partition: str | None = None
    limits: dict[str | None, PartitionLimits] = field(default_factory=dict)
    default_partition: str | None = None  # sinfo's default, used when partition is None
    notes: tuple[str, ...] = ()

    @classmethod
    def from_environment(
        cls, environ: dict[str, str] | None = None, sinfo: str | None = None
    ) -> SlurmSite:
        """The site from the environment variables above; `sinfo`: that command's output (for
        tests; None runs it)."""
        env = os.environ if environ is None else environ
        partition = env.get("SBATCH_PARTITION") or None
        gpu = env.get("BOOLBENCH_SLURM_GPU", "").strip().lower() in TRUE
        gpu_partition = (env.get("BOOLBENCH_SLURM_GPU_PARTITION") or partition) if gpu else None
        given = parse_limits(env.get("BOOLBENCH_SLURM_LIMITS", ""))
        notes: list[str] = []
        nodes: dict[str, PartitionLimits] = {}
        default = None
        if given is not None:  # also with every limit given: sinfo names the default partition
            if sinfo is None:
                sinfo, problem = run_sinfo()
                if problem and set(given) != set(LIMIT_KEYS):
                    notes.append(f"{problem}; requests are not capped")
            if sinfo:
                nodes, default = parse_sinfo(sinfo)
        limits = {}
        for name in {partition, gpu_partition} if gpu else {partition}:
            found = nodes.get(name or default or "", PartitionLimits())
            if given is None:
                limits[name] = PartitionLimits(gpus=found.gpus)
            else:
                limits[name] = PartitionLimits(
                    **{k: given.get(k, getattr(found, k)) for k in LIMIT_KEYS}, gpus=found.gpus
                )
            if gpu and name == gpu_partition and nodes and not found.gpus:
                notes.append(
                    f"BOOLBENCH_SLURM_GPU is set, but sinfo shows no gpu GRES in partition "
                    f"{name or default}: GPU jobs may be rejected"
                )
        return cls(
            partition=partition,
            account=env.get("SBATCH_ACCOUNT") or None,
            gpu=gpu,
            gpu_partition=gpu_partition,
            limits=limits,
            default_partition=default,
            notes=tuple(notes),
        )

    # -- used by the profile ------------------------------------------------------------------

    def site_resources(self) -> dict[str, str]:
        """slurm_partition / slurm_account of every job (only those that are set)."""
        resources = {}
        if self.partition:
            resources["slurm_partition"] = self.partition
        if self.account:
            resources["slurm_account"] = self.account
        return resources

    def gpu_resources(self) -> dict:
        """What a GPU-capable rule adds when GPUs are asked for: one GPU (and its partition)."""
        if not self.gpu:
            return {}
        resources: dict = {"gpu": 1}
        if self.gpu_partition:
            resources["slurm_partition"] = self.gpu_partition
        return resources

    def threads(self, wanted: int, gpu: bool = False) -> int:
        cap = self._limits(gpu).cpus
        return min(wanted, cap) if cap else wanted

    def mem(self, expression: str, gpu: bool = False) -> str:
        """A mem_mb expression (e.g. "16000 * attempt"), capped at the largest node."""
        return _capped(expression, self._limits(gpu).mem_mb)

    def runtime(self, expression: str, gpu: bool = False) -> str:
        """A runtime expression in minutes, capped at the partition's time limit."""
        return _capped(expression, self._limits(gpu).runtime)

    def announce(self, out=None) -> None:
        """One line (once per process) saying which partition and caps the jobs get."""
        line = self.summary()
        if line in _announced:
            return
        _announced.add(line)
        print(line, file=out or sys.stderr)

    def summary(self) -> str:
        parts = [self._name(self.partition)]
        if self.account:
            parts.append(f"account {self.account}")
        limits = self._limits(False)
        caps = [
            f"{value}{unit}"
            for value, unit in (
                (limits.cpus, " CPUs"),
                (limits.mem_mb, " MB"),
                (limits.runtime, " min"),
            )
            if value
        ]
        parts.append("requests capped at " + ", ".join(caps) if caps else "requests not capped")
        if self.gpu:
            parts.append(f"GPUs asked for ({self._name(self.gpu_partition)})")
        else:
            parts.append("no GPUs asked for (BOOLBENCH_SLURM_GPU=1 to ask)")
        return "profiles/slurm: " + "; ".join([*parts, *self.notes])

    def _name(self, partition: str | None) -> str:
        if partition:
            return f"partition {partition}"
        if self.default_partition:
            return f"partition {self.default_partition} (the default)"
        return "the default partition"  # no sinfo (BOOLBENCH_SLURM_LIMITS=none, or it failed)

    def _limits(self, gpu: bool) -> PartitionLimits:
        name = self.gpu_partition if gpu and self.gpu else self.partition
        return self.limits.get(name, PartitionLimits())


def _capped(expression: str, cap: int | None) -> str:
    return f"min({expression}, {cap})" if cap else expression


def parse_limits(text: str) -> dict[str, int] | None:
    """BOOLBENCH_SLURM_LIMITS: "cpus=2,mem_mb=20000,runtime=1440" (any subset); "none": None."""
    text = text.strip()
    if text.lower() == "none":
        return None
    limits = {}
    for item in filter(None, re.split(r"[,\s]+", text)):
        key, _, value = item.partition("=")
        if key not in LIMIT_KEYS or not value.isdigit() or int(value) < 1:
            raise ConfigError(
                f"BOOLBENCH_SLURM_LIMITS: {item!r}: expected key=positive integer with key one "
                f"of {', '.join(LIMIT_KEYS)} (e.g. cpus=2,mem_mb=20000,runtime=1440), or none"
            )
        limits[key] = int(value)
    return limits


SINFO_FORMAT = "%P|%c|%m|%l|%G"


def run_sinfo(partition: str | None = None) -> tuple[str | None, str | None]:
    """(sinfo's node list, of one partition if given, None), or (None, why it could not be
    read)."""
    only = [f"--partition={partition}"] if partition else []
    try:
        done = subprocess.run(
            ["sinfo", "--noheader", "--Node", "--format", SINFO_FORMAT, *only],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except FileNotFoundError:
        return None, "sinfo not found"
    except subprocess.TimeoutExpired:
        return None, "sinfo did not answer within 30 s"
    if done.returncode != 0:
        return None, f"sinfo failed: {' '.join(done.stderr.split())[:200]}"
    return done.stdout, None


def parse_sinfo(text: str) -> tuple[dict[str, PartitionLimits], str | None]:
    """Per partition the largest node's CPUs and memory, the time limit and whether a node has
    GPUs; and the default partition (marked * by sinfo)."""
    partitions: dict[str, PartitionLimits] = {}
    default = None
    for line in text.splitlines():
        fields = line.strip().split("|")
        if len(fields) != 5:
            continue
        name, cpus, mem, time_limit, gres = fields
        if name.endswith("*"):
            name = name[:-1]
            default = name
        old = partitions.get(name, PartitionLimits())
        partitions[name] = PartitionLimits(
            cpus=max(filter(None, (old.cpus, _number(cpus))), default=None),
            mem_mb=max(filter(None, (old.mem_mb, _number(mem))), default=None),
            runtime=slurm_minutes(time_limit),
            gpus=old.gpus or "gpu" in gres,
        )
    return partitions, default


def _number(text: str) -> int | None:
    match = re.match(r"\d+", text.strip())
    return int(match.group()) if match else None


def slurm_minutes(text: str) -> int | None:
    """A SLURM time limit ("infinite", "30", "1:30:00", "2-00:00:00", "30:00") in minutes."""
    text = text.strip()
    if not text or text.lower() in ("infinite", "unlimited", "n/a"):
        return None
    days = 0
    if "-" in text:
        day_part, text = text.split("-", 1)
        days = int(day_part)
        parts = [int(p) for p in text.split(":")] + [0]
        minutes = parts[0] * 60 + parts[1]  # days-hours[:minutes[:seconds]]
    else:
        parts = [int(p) for p in text.split(":")]
        # minutes, minutes:seconds, hours:minutes:seconds (seconds are dropped: a cap)
        minutes = parts[0] * 60 + parts[1] if len(parts) == 3 else parts[0]
    return days * 24 * 60 + minutes
