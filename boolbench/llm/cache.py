"""Persistent LLM response cache: one JSON file per call, keyed by content.

Layout: `<cache_dir>/llm/<key[:2]>/<key>.json`, where key = sha256 of the canonical JSON of
(model, messages, sampling parameters including the seed). Each entry is written to a temporary
file and renamed into place (boolbench.io.JsonStore), so a job killed (even with
SIGKILL) loses only calls whose answer had not arrived yet, and any number of jobs and machines
may share it (NFS too). Entries hold the request and the answer, never credentials.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from boolbench.errors import ConfigError
from boolbench.io import JsonStore


def cache_key(model: str, messages: list[dict], params: dict) -> str:
    """sha256 over the canonical JSON of everything that determines the answer."""
    canonical = json.dumps(
        {"model": model, "messages": messages, "params": params},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CachedResponse:
    content: str | None
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    # The first generated token's most likely alternatives (token -> log probability), when
    # the request asked for logprobs (yes/no judgements).
    top_logprobs: dict[str, float] | None = None


def check_cache_dir(cache_dir: str | os.PathLike) -> None:
    """Raise ConfigError naming llm.cache_dir unless the cache can be written there (creating
    it): checked before the first call, so that no answer is paid for and then lost."""
    root = Path(cache_dir).expanduser()
    try:
        (root / "llm").mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=root / "llm", prefix=".write-check-"):
            pass
    except OSError as err:
        where = next((p for p in (root, *root.parents) if p.exists()), root)
        problem = (
            f"{where} is a file, not a folder"
            if not where.is_dir()
            else f"{err.strerror or err} ({err.filename or root})"
        )
        raise ConfigError(
            f"llm.cache_dir: cannot write the LLM response cache in {root}: {problem}; "
            "set llm.cache_dir to a folder this job can write"
        ) from None


class ResponseCache:
    """Content-addressed store of chat completions (a JsonStore under `<cache_dir>/llm`)."""

    def __init__(self, cache_dir: str | os.PathLike):
        self.store = JsonStore(Path(cache_dir).expanduser() / "llm")

    def get(self, key: str) -> CachedResponse | None:
        entry = self.store.get(key)
        if entry is None:
            return None
        return CachedResponse(
            content=entry["response"]["content"],
            finish_reason=entry["response"]["finish_reason"],
            prompt_tokens=entry["usage"]["prompt_tokens"],
            completion_tokens=entry["usage"]["completion_tokens"],
            top_logprobs=entry["response"].get("top_logprobs"),
        )

    def put(self, key: str, request: dict, response: CachedResponse) -> None:
        self.store.put(
            key,
            {
                "key": key,
                "request": request,
                "response": {
                    "content": response.content,
                    "finish_reason": response.finish_reason,
                    "top_logprobs": response.top_logprobs,
                },
                "usage": {
                    "prompt_tokens": response.prompt_tokens,
                    "completion_tokens": response.completion_tokens,
                },
            },
        )

    def __len__(self) -> int:
        return len(self.store)
