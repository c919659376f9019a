"""The embedded llama.cpp server with the real (tiny) SmolLM2 model."""

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

from boolbench.llm import ChatRequest, LLMSettings, llm_session
from boolbench.llm.server import progress_probe

JOB = Path(__file__).with_name("llm_server_job.py")


def port_open(base_url: str) -> bool:
    url = urlparse(base_url)
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((url.hostname, url.port)) == 0


def test_real_embedded_model_answers_and_server_stops(tmp_path):
    settings = LLMSettings(
        local_model="smollm2-135m", cache_dir=str(tmp_path), max_tokens=24, seed=5
    )
    requests = [
        ChatRequest(str(i), [{"role": "user", "content": f"Ask one question about {topic}."}])
        for i, topic in enumerate(["Paris", "the Nile", "jazz"])
    ]
    with llm_session(settings, threads=2) as client:
        assert client.base_url is None  # started at the first call the cache cannot answer
        client.ensure_started()
        assert port_open(client.base_url)
        results = client.run(requests, progress=False)
        url = client.base_url
        # The client reads the server's progress from llama.cpp's counters (/metrics).
        assert asyncio.run(progress_probe(url, timeout_s=10)()) > 0
    assert not port_open(url)
    assert all(r.ok and r.content.strip() and r.completion_tokens > 0 for r in results)
    assert client.model_id.startswith("gguf-sha256:b179c952")
    # A second session answers from the cache without asking the model again.
    with llm_session(settings, threads=2) as again:
        cached = again.run(requests, progress=False)
    assert [r.content for r in cached] == [r.content for r in results]
    assert again.accounting.cache_hits == 3 and again.accounting.api_calls == 0
    assert again.base_url is None  # every answer came from the cache: no server was started


def test_server_stops_when_the_job_fails(tmp_path):
    settings = LLMSettings(local_model="smollm2-135m", cache_dir=str(tmp_path))
    with pytest.raises(RuntimeError), llm_session(settings, threads=1) as client:
        client.ensure_started()
        url = client.base_url
        raise RuntimeError("boom")
    assert not port_open(url)


def children_of(pid: int) -> list[str]:
    out = subprocess.run(["ps", "--ppid", str(pid), "-o", "pid="], capture_output=True, text=True)
    return out.stdout.split()


@pytest.mark.parametrize("how", ["sigkill", "fail"])
def test_no_orphan_server_after_a_job_ends(tmp_path, how):
    env = {**os.environ, "PYTHONPATH": str(JOB.parents[1])}
    mode = "fail" if how == "fail" else "wait"
    job = subprocess.Popen(
        [sys.executable, str(JOB), str(tmp_path), mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    url = job.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:")
    if how == "sigkill":
        assert port_open(url)
        assert children_of(job.pid) == []  # the server is threads of the job, not a process
        job.kill()
    assert job.wait(timeout=30) != 0
    time.sleep(0.2)
    assert not port_open(url)
