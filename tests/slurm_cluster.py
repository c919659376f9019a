"""A real single-node SLURM cluster on loopback for tests: munged, slurmctld and slurmd with a
generated slurm.conf in a private folder (own ports, own munge socket and key), so it touches
nothing of the machine's own SLURM setup and several can run side by side.

Debian's packages: `apt-get install slurmctld slurmd slurm-client munge` (.ci/run does this).
The node is the machine itself (its CPUs, at most 80% of its memory), there is no accounting
database (so no sacct, as on many small clusters), and processes are tracked without cgroups
(works in containers).
"""

from __future__ import annotations

import getpass
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "srun", "scontrol")


def missing_binaries() -> list[str]:
    return [name for name in BINARIES if not shutil.which(name)]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def node_hardware() -> tuple[int, int]:
    """(CPUs, memory MB) as slurmd sees this machine."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    cpus = int(re.search(r"\bCPUs=(\d+)", out).group(1))
    memory = int(re.search(r"\bRealMemory=(\d+)", out).group(1))
    return cpus, memory


class SlurmCluster:
    """`with SlurmCluster() as cluster:` starts the daemons; `cluster.env` is the environment
    for SLURM clients (sbatch, squeue, and Snakemake's executor plugin)."""

    def __init__(
        self,
        node: str = "boolbench",
        max_memory_mb: int | None = None,
        partitions: dict[str, str] | None = None,
    ):
        """`partitions`: more partitions on the node besides `debug` (the default), name ->
        settings, e.g. {"short": "MaxTime=30 MaxCPUsPerNode=1"}."""
        self.node = node
        self.partitions = partitions or {}
        self.cpus, total_mb = node_hardware()
        # A node declares at most what the machine has (here 80%: the rest is the OS's);
        # max_memory_mb makes it a smaller node than the machine.
        self.memory_mb = min(total_mb * 8 // 10, max_memory_mb or total_mb)
        # munged refuses a socket in a folder that is not world-readable and -executable
        # (pytest's tmp_path is 0700), so the cluster gets its own folder under /tmp.
        self.root = Path(tempfile.mkdtemp(prefix="boolbench-slurm-"))
        self.root.chmod(0o755)
        self.conf = self.root / "slurm.conf"
        self.controller_log = self.root / "log" / "slurmctld.log"
        self.bin = self.root / "bin"
        self._pids: list[Path] = []

    @property
    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "SLURM_CONF": str(self.conf),
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', '')}",
        }

    def __enter__(self) -> SlurmCluster:
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _start(self) -> None:
        root = self.root
        for sub in ("state", "log", "bin", f"spool/{self.node}"):
            (root / sub).mkdir(parents=True)
        key = root / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o600)
        socket_path = root / "munge.socket"
        self._run(
            "munged", f"--key-file={key}", f"--socket={socket_path}",
            f"--pid-file={root / 'munged.pid'}", f"--log-file={root / 'log' / 'munged.log'}",
            f"--seed-file={root / 'munged.seed'}",
        )  # fmt: skip
        self._pids.append(root / "munged.pid")
        user = getpass.getuser()
        self.conf.write_text(
            "\n".join(
                [
                    "ClusterName=boolbench",
                    f"SlurmctldHost={socket.gethostname().split('.')[0]}(127.0.0.1)",
                    f"SlurmctldPort={_free_port()}",
                    f"SlurmdPort={_free_port()}",
                    f"SlurmUser={user}",
                    f"SlurmdUser={user}",
                    "AuthType=auth/munge",
                    "CredType=cred/munge",
                    f"AuthInfo=socket={socket_path}",
                    f"StateSaveLocation={root / 'state'}",
                    f"SlurmdSpoolDir={root / 'spool' / '%n'}",
                    f"SlurmctldPidFile={root / 'slurmctld.pid'}",
                    f"SlurmdPidFile={root / 'slurmd.pid'}",
                    f"SlurmctldLogFile={self.controller_log}",
                    f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
                    "SlurmctldDebug=info",
                    "SlurmdDebug=info",
                    # No cgroups (containers), no accounting database, no MPI.
                    "ProctrackType=proctrack/linuxproc",
                    "TaskPlugin=task/none",
                    "JobAcctGatherType=jobacct_gather/none",
                    "AccountingStorageType=accounting_storage/none",
                    "JobCompType=jobcomp/none",
                    "MpiDefault=none",
                    "SchedulerType=sched/backfill",
                    "SelectType=select/cons_tres",
                    "SelectTypeParameters=CR_Core_Memory",
                    "ReturnToService=2",
                    # Finished jobs stay visible to squeue/scontrol for the whole test.
                    "MinJobAge=3600",
                    f"NodeName={self.node} NodeAddr=127.0.0.1 "
                    f"NodeHostname={socket.gethostname().split('.')[0]} "
                    f"CPUs={self.cpus} RealMemory={self.memory_mb} State=UNKNOWN",
                    f"PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
                    *(
                        f"PartitionName={name} Nodes={self.node} {settings} State=UP"
                        for name, settings in self.partitions.items()
                    ),
                    "",
                ]
            )
        )
        # Snakemake's job step drops SLURM_* variables (SLURM_CONF among them) before it calls
        # srun inside the job; a real cluster's clients find /etc/slurm/slurm.conf instead.
        srun = self.bin / "srun"
        srun.write_text(f'#!/bin/sh\nSLURM_CONF={self.conf} exec {shutil.which("srun")} "$@"\n')
        srun.chmod(0o755)
        self._run("slurmctld")
        self._pids.append(root / "slurmctld.pid")
        self._run("slurmd", "-N", self.node)
        self._pids.append(root / "slurmd.pid")
        self._wait_idle()

    def _run(self, *command: str) -> None:
        subprocess.run(command, env=self.env, check=True, capture_output=True, timeout=60)

    def _wait_idle(self, timeout_s: float = 90) -> None:
        deadline = time.monotonic() + timeout_s
        state = ""
        while time.monotonic() < deadline:
            done = subprocess.run(
                ["sinfo", "--noheader", "--format", "%t"], env=self.env, capture_output=True,
                text=True,
            )  # fmt: skip
            state = done.stdout.strip() or done.stderr.strip()
            if state == "idle":
                return
            time.sleep(1)
        logs = "\n".join(p.read_text()[-2000:] for p in (self.root / "log").glob("*.log"))
        raise RuntimeError(f"the test SLURM node did not become idle ({state}):\n{logs}")

    def stop(self) -> None:
        pids = []
        for pid_file in reversed(self._pids):
            try:
                pids.append(int(pid_file.read_text().split()[0]))
                os.kill(pids[-1], signal.SIGTERM)
            except (OSError, ValueError):
                pass
        self._pids.clear()
        deadline = time.monotonic() + 15
        for pid in pids:
            while time.monotonic() < deadline:
                try:
                    os.kill(pid, 0)
                except OSError:
                    break
                time.sleep(0.2)
        shutil.rmtree(self.root, ignore_errors=True)

    def query(self, *command: str) -> str:
        return subprocess.run(
            command, env=self.env, capture_output=True, text=True, check=True
        ).stdout

    def job(self, job_id: str) -> dict[str, str]:
        """`scontrol show job` as a dict (e.g. NumCPUs, MinMemoryNode, JobState, ExitCode)."""
        text = self.query("scontrol", "show", "job", "--oneliner", job_id)
        return dict(re.findall(r"(\S+?)=(\S*)", text))

    def sbatch(self, *options: str) -> str:
        """Submits a job that sleeps a second (its output in the cluster's folder); its id."""
        output = f"--output={self.root / 'log' / 'job-%j.out'}"
        return self.query("sbatch", "--parsable", output, *options, "--wrap", "sleep 1").strip()

    def submitted_jobs(self) -> list[str]:
        """Job ids slurmctld accepted from sbatch, from its log."""
        return re.findall(r"_slurm_rpc_submit_batch_job: JobId=(\d+)", self.log())

    def completed_jobs(self) -> dict[str, int]:
        """Job id -> exit status of the finished batch jobs, from slurmctld's log."""
        found = re.findall(r"_job_complete: JobId=(\d+) WEXITSTATUS (\d+)", self.log())
        return {job: int(status) for job, status in found}

    def log(self) -> str:
        return self.controller_log.read_text()
