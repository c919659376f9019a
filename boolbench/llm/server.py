"""The embedded llama.cpp server (xllamacpp), serving the OpenAI chat API on 127.0.0.1.

The server runs inside the job's own process (llama.cpp threads), so it cannot outlive the job:
it is stopped when the context exits, on success or error, and dies with the process if the job
is killed.
"""

from __future__ import annotations

import gc
import logging
import socket
import time
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def local_server(
    gguf: Path, threads: int = 2, n_ctx: int = 4096, n_parallel: int = 2
) -> Iterator[str]:
    """Serve `gguf`; yields the base URL (ending in /v1) for an OpenAI client."""
    import xllamacpp as xlc

    from boolbench.llm.native import check_cpu

    check_cpu()
    params = xlc.CommonParams()
    params.model.path = str(gguf)
    params.n_parallel = n_parallel
    params.n_ctx = n_ctx * n_parallel  # llama.cpp splits the context across parallel slots
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = -1
    params.hostnames = ["127.0.0.1"]
    params.port = free_port()
    params.endpoint_metrics = True  # the client reads the server's progress (progress_probe)
    log.info("starting llama.cpp server for %s (%d slots, %d threads)", gguf, n_parallel, threads)
    server = xlc.Server(params)
    try:
        # Until its HTTP loop has answered once, destroying the server can hang (seen when a
        # job needed no call: every answer came from the cache).
        wait_healthy(server.listening_address)
        yield f"{server.listening_address}/v1"
    finally:
        # xllamacpp stops listening when the Server object is destroyed.
        del server
        gc.collect()
        log.info("llama.cpp server stopped")


def wait_healthy(address: str, timeout_s: float = 120.0) -> None:
    """Wait until the server's /health answers 200."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{address}/health", timeout=10) as response:
                if response.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline:
                raise
        time.sleep(0.05)


# Counters of llama.cpp's /metrics that grow while the server works (prompt and decode steps).
PROGRESS_COUNTERS = (
    "llamacpp:prompt_tokens_total",
    "llamacpp:tokens_predicted_total",
    "llamacpp:n_decode_total",
)


def progress_probe(base_url: str, timeout_s: float) -> Callable[[], Awaitable[float | None]]:
    """A probe of a llama.cpp server's work (for LLMClient): the sum of its progress counters,
    read from /metrics beside the OpenAI API at `base_url` (None when unreadable)."""
    import aiohttp

    metrics_url = base_url.removesuffix("/").removesuffix("/v1") + "/metrics"

    async def probe() -> float | None:
        timeout = aiohttp.ClientTimeout(total=timeout_s)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(metrics_url) as response,
        ):
            if response.status != 200:
                return None
            return llama_progress(await response.text())

    return probe


def llama_progress(metrics: str) -> float | None:
    """The sum of PROGRESS_COUNTERS in a Prometheus text page (None when none is there)."""
    values = []
    for line in metrics.splitlines():
        name, _, value = line.partition(" ")
        if name in PROGRESS_COUNTERS:
            values.append(float(value))
    return sum(values) if values else None
