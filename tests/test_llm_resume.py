"""Kill a job mid-batch with SIGKILL, rerun it: completed calls are never asked again."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from boolbench.llm.fake_server import FakeOpenAIServer

JOB = Path(__file__).with_name("llm_batch_job.py")


def start_job(server, cache, count, concurrency):
    env = {**os.environ, "PYTHONPATH": str(JOB.parents[1])}
    return subprocess.Popen(
        [sys.executable, str(JOB), server.base_url, str(cache), str(count), str(concurrency)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_sigkill_mid_batch_loses_only_in_flight_calls(tmp_path):
    count, concurrency = 40, 4
    with FakeOpenAIServer(latency_s=0.15) as server:
        job = start_job(server, tmp_path / "cache", count, concurrency)
        deadline = time.time() + 30
        while sum(server.completed.values()) < 12 and time.time() < deadline:
            time.sleep(0.01)
        job.send_signal(signal.SIGKILL)
        job.wait()
        answered_before_kill = sum(server.completed.values())
        assert 12 <= answered_before_kill < count  # really killed mid-batch

        rerun = start_job(server, tmp_path / "cache", count, concurrency)
        out, _ = rerun.communicate(timeout=60)
        ok, cache_hits = map(int, out.split())
        assert ok == count
        repeated = [p for p, n in server.requests.items() if n > 1]
        # Only calls in flight at the kill (at most `concurrency`) may be asked twice.
        assert len(repeated) <= concurrency
        assert sum(server.requests.values()) <= count + concurrency
        assert cache_hits >= answered_before_kill - concurrency
