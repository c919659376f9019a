"""LLM settings: the `llm:` section of the config."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields

from boolbench.errors import ConfigError


@dataclass(frozen=True)
class LLMSettings:
    backend: str = "local"  # local (embedded llama.cpp server) | openai (any compatible endpoint)
    local_model: str = "qwen-0.5b"  # an embedded model name or a GGUF path (backend local)
    base_url: str | None = None  # backend openai; None is OpenAI itself
    model: str | None = None  # backend openai: the model name the endpoint serves
    api_key_env: str | None = None  # name of the environment variable holding the key
    temperature: float = 0.7
    top_p: float | None = None
    max_tokens: int = 128
    seed: int | None = None  # None: the global seed
    timeout_s: float = 120.0  # per call; local: seconds without progress of the server
    max_retries: int = 5
    connect_attempts: int = 3  # a call failing to connect this often in a row stops the batch
    backoff_s: float = 1.0
    backoff_max_s: float = 60.0
    concurrency: int = 2
    max_failed_fraction: float = 0.05
    price_per_1k_prompt_tokens: float = 0.0
    price_per_1k_completion_tokens: float = 0.0
    cache_dir: str = "cache"
    n_ctx: int = 4096  # backend local: context per request

    @classmethod
    def from_config(cls, section: dict, seed: int | None = None) -> LLMSettings:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in section.items() if k in names}
        if values.get("seed") is None and seed is not None:
            values["seed"] = seed
        return cls(**values)

    def api_key(self) -> str | None:
        """The key from the environment variable named by api_key_env (never from config)."""
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(
                f"llm.api_key_env names the environment variable {self.api_key_env!r}, "
                "which is not set; export it before running"
            )
        return key

    def sampling(self) -> dict:
        """The parameters that, with the model and messages, determine an answer."""
        params = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.top_p is not None:
            params["top_p"] = self.top_p
        return params
