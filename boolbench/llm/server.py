"""The embedded llama.cpp server (xllamacpp), serving the OpenAI chat API on 127.0.0.1.

The server runs inside the job's own process (llama.cpp threads), so it cannot outlive the job:
it is stopped when the context exits, on success or error, and dies with the process if the job
is killed.
"""

from __future__ import annotations

import gc
import logging
import socket
from collections.abc import Iterator
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

    params = xlc.CommonParams()
    params.model.path = str(gguf)
    params.n_parallel = n_parallel
    params.n_ctx = n_ctx * n_parallel  # llama.cpp splits the context across parallel slots
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.verbosity = -1
    params.hostnames = ["127.0.0.1"]
    params.port = free_port()
    log.info("starting llama.cpp server for %s (%d slots, %d threads)", gguf, n_parallel, threads)
    server = xlc.Server(params)
    try:
        yield f"{server.listening_address}/v1"
    finally:
        # xllamacpp stops listening when the Server object is destroyed.
        del server
        gc.collect()
        log.info("llama.cpp server stopped")
