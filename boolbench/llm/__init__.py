"""The LLM layer: every generation and filtering call of the benchmark goes through here.

    with llm_session(settings, threads=2) as llm:
        results = llm.run([ChatRequest(id="q1", messages=[...])])
        llm.check_failures(results)
        llm.accounting.to_json("...accounting.json")

With backend `local`, the session starts the embedded llama.cpp server in this process and stops
it on exit; with backend `openai`, it talks to the configured endpoint.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from boolbench.errors import ConfigError
from boolbench.llm.cache import check_cache_dir
from boolbench.llm.client import (
    Accounting,
    ChatRequest,
    ChatResult,
    EndpointDownError,
    EndpointUnreachableError,
    LLMBatchError,
    LLMClient,
)
from boolbench.llm.settings import LLMSettings

__all__ = [
    "Accounting",
    "ChatRequest",
    "ChatResult",
    "EndpointDownError",
    "EndpointUnreachableError",
    "LLMBatchError",
    "LLMClient",
    "LLMSettings",
    "llm_session",
]


@contextmanager
def llm_session(settings: LLMSettings, threads: int = 2) -> Iterator[LLMClient]:
    """An LLMClient for the configured backend, with the local server running if needed."""
    check_cache_dir(settings.cache_dir)  # before any call is paid for, or any model file joined
    if settings.backend == "local":
        from boolbench.llm.models import resolve_local_model
        from boolbench.llm.server import local_server, progress_probe

        gguf, model_id = resolve_local_model(settings.local_model, settings.cache_dir)
        with ExitStack() as servers:

            def start() -> tuple:
                # Started at the first call the cache cannot answer (a rerun starts none).
                base_url = servers.enter_context(
                    local_server(
                        gguf, threads=threads, n_ctx=settings.n_ctx, n_parallel=settings.concurrency
                    )
                )
                # The server is this job's own: a call fails only when it stops progressing.
                return base_url, progress_probe(base_url, settings.timeout_s)

            yield LLMClient(
                settings,
                None,
                model_id=model_id,
                endpoint_model="local",
                model_name=f"local:{settings.local_model}",
                start=start,
            )
    elif settings.backend == "openai":
        if not settings.model:
            raise ConfigError("llm.model: backend 'openai' needs the model name to ask for")
        yield LLMClient(
            settings,
            settings.base_url,
            model_id=settings.model,
            endpoint_model=settings.model,
            api_key=settings.api_key(),
        )
    else:
        raise ConfigError(f"llm.backend: expected 'local' or 'openai', got {settings.backend!r}")
