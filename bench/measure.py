"""Peak memory of a benchmark's child process."""

import resource
from pathlib import Path


def peak_rss_mb() -> float:
    """This process's peak resident memory in MB. VmHWM, not ru_maxrss: ru_maxrss survives
    exec, so a spawned child would report its parent's peak at the time of the fork. Memory-
    mapped file pages that were read count too."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
