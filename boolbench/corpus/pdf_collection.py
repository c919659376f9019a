"""A PDF collection -> one passage table and an extraction report (the `pdf` corpus source).

Artifacts:
- pdf/passages.parquet: PASSAGES_SCHEMA: pid ("<doc_id>#<position>"), text, title, doc_id (the
  file's path relative to the collection's folder), position (reading order within the file,
  from 0), page (int32, the 1-based page where the passage starts). Ingestion reads it like any
  Parquet corpus.
- pdf/extraction_report.json: files, pages, passages, extracted (files that gave passages),
  skipped [{file, reason, detail}] and skipped_by_reason, dropped (boxes removed by kind:
  page_numbers, running_headers_footers, table_cells, headings, short_fragments), seconds,
  pages_per_second.
- pdf/extraction_quality.parquet (with a `reference` folder of plain texts): QUALITY_SCHEMA,
  the DRC paper's token precision, recall and F1 per file; its .json holds the means.

Files are read by a pool of worker processes (pebble), each file under a timeout, so a PDF that
makes pdfminer hang or crash costs one worker, not the job. Each file's result is cached under
`<cache_dir>/pdf/` by the sha256 of its bytes and the extraction settings: adding files to a
collection extracts only the new ones.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures import as_completed
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pyarrow as pa

from boolbench.corpus.pdf import EXTRACTOR_VERSION, ExtractionSettings, FileResult, extract_file
from boolbench.errors import ConfigError, InputError, located
from boolbench.io import JsonStore, write_table_atomic, write_text_atomic

log = logging.getLogger(__name__)

PASSAGES_SCHEMA = pa.schema(
    [
        ("pid", pa.string()),
        ("text", pa.string()),
        ("title", pa.string()),
        ("doc_id", pa.string()),
        ("position", pa.int64()),
        ("page", pa.int32()),
    ]
)
QUALITY_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("precision", pa.float64()),
        ("recall", pa.float64()),
        ("f1", pa.float64()),
        ("extracted_tokens", pa.int64()),
        ("reference_tokens", pa.int64()),
    ]
)
TOKEN = re.compile(r"\w+")


def pdf_files(path: str | list[str], where: str = "pdf corpus") -> dict[str, Path]:
    """doc_id -> file for a folder (searched recursively) or a list of PDF files.

    doc_id is the file's path relative to the folder (for a list, to the files' common
    folder), so it stays the same wherever the collection is mounted. `where` names the
    config key in errors.
    """
    if isinstance(path, str):
        root = Path(path)
        if not root.exists():
            raise ConfigError(f"{where}: {root} not found")
        if root.is_file():
            files = [root]
            root = root.parent
        else:
            files = sorted(p for p in root.rglob("*") if p.suffix.lower() == ".pdf" and p.is_file())
        if not files:
            raise ConfigError(f"{where}: no .pdf files under {root}")
    else:
        files = [Path(p) for p in path]
        missing = [str(p) for p in files if not p.is_file()]
        if missing:
            raise ConfigError(f"{where}: file(s) not found: {', '.join(missing[:5])}")
        root = Path(os.path.commonpath([p.resolve().parent for p in files]))
        files = [p.resolve() for p in files]
    return {p.relative_to(root).as_posix(): p for p in files}


class ResultCache:
    """`<cache_dir>/pdf/<key[:2]>/<key>.json` (a JsonStore), key = sha256(file bytes, settings,
    version); no cache_dir: nothing is kept."""

    def __init__(self, cache_dir: str | os.PathLike | None, settings: ExtractionSettings):
        self.store = JsonStore(Path(cache_dir) / "pdf") if cache_dir else None
        self.salt = json.dumps([EXTRACTOR_VERSION, asdict(settings)], sort_keys=True).encode()

    def key(self, path: Path) -> str:
        digest = hashlib.sha256(self.salt)
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()

    def get(self, key: str) -> FileResult | None:
        entry = self.store.get(key) if self.store else None
        return None if entry is None else FileResult(**entry)

    def put(self, key: str, result: FileResult) -> None:
        if self.store is not None:
            self.store.put(key, asdict(result))


def _run_pool(
    todo: dict[str, Path], settings: ExtractionSettings, workers: int, timeout_s: float
) -> Iterator[tuple[str, FileResult]]:
    """(doc_id, result) as files finish; a file past its timeout (or crashing) is skipped."""
    from pebble import ProcessExpired, ProcessPool

    # The default start method (fork on Linux): spawn would re-run the job's Snakemake script,
    # which is the workers' __main__. The job starts no threads before the pool.
    with ProcessPool(max_workers=max(1, min(workers, len(todo)))) as pool:
        futures = {
            pool.schedule(extract_file, args=(str(path), settings), timeout=timeout_s): doc_id
            for doc_id, path in todo.items()
        }
        for future in as_completed(futures):
            try:
                result = future.result()
            except FutureTimeout:
                result = FileResult(
                    reason="timeout", detail=f"extraction took over {timeout_s:g} s"
                )
            except ProcessExpired as err:
                result = FileResult(reason="crashed", detail=f"the extraction process died ({err})")
            yield futures[future], result


def extract_step(
    path: str | list[str],
    extraction: dict,
    *,
    passages_out: str | os.PathLike,
    report_out: str | os.PathLike,
    workers: int = 1,
) -> dict:
    """The extract_pdf job: every PDF of a corpus's `path`, extracted with its `extraction`
    section (timeout and cache folder included)."""
    return extract_collection(
        pdf_files(path),
        ExtractionSettings.from_config(extraction),
        passages_out=passages_out,
        report_out=report_out,
        workers=workers,
        timeout_s=extraction["timeout_s"],
        cache_dir=extraction["cache_dir"],
    )


def extract_collection(
    files: dict[str, Path],
    settings: ExtractionSettings,
    *,
    passages_out: str | os.PathLike,
    report_out: str | os.PathLike,
    workers: int = 1,
    timeout_s: float = 60,
    cache_dir: str | os.PathLike | None = None,
) -> dict:
    """Extract every file, write passages.parquet and the report; fail only if none gave text."""
    start = time.perf_counter()
    cache = ResultCache(cache_dir, settings)
    keys = {doc_id: cache.key(path) for doc_id, path in files.items()}
    results = {doc_id: cache.get(key) for doc_id, key in keys.items()}
    todo = {doc_id: files[doc_id] for doc_id, result in results.items() if result is None}
    if todo:
        log.info("extracting %d PDFs (%d more cached)", len(todo), len(files) - len(todo))
        # Cached as each file finishes, so a killed job keeps what it had extracted.
        for doc_id, result in _run_pool(todo, settings, workers, timeout_s):
            if result.reason not in ("timeout", "crashed"):  # may succeed on a later run
                cache.put(keys[doc_id], result)
            results[doc_id] = result

    rows, dropped, skipped = [], Counter(), []
    for doc_id in files:
        result = results[doc_id]
        dropped.update(result.dropped or {})
        if result.reason:
            log.warning("skipped %s (%s): %s", files[doc_id], result.reason, result.detail)
            skipped.append({"file": doc_id, "reason": result.reason, "detail": result.detail})
            continue
        for position, (text, page) in enumerate(result.passages):
            rows.append((f"{doc_id}#{position}", text, result.title, doc_id, position, page))
    pages = sum(r.pages for r in results.values())
    seconds = time.perf_counter() - start
    report = {
        "files": len(files),
        "pages": pages,
        "passages": len(rows),
        "extracted": len(files) - len(skipped),
        "skipped": skipped,
        "skipped_by_reason": dict(Counter(s["reason"] for s in skipped)),
        "dropped": dict(sorted(dropped.items())),
        "extracted_now": len(todo),
        "seconds": round(seconds, 3),
        "pages_per_second": round(pages / seconds, 2) if seconds else None,
    }
    write_text_atomic(report_out, json.dumps(report, indent=2) + "\n")
    if not rows:
        reasons = ", ".join(f"{n} {r}" for r, n in report["skipped_by_reason"].items())
        raise InputError(f"pdf corpus: no passage from {len(files)} PDF file(s) ({reasons})")
    frame = pd.DataFrame(rows, columns=PASSAGES_SCHEMA.names)
    write_table_atomic(
        pa.Table.from_pandas(frame, PASSAGES_SCHEMA, preserve_index=False), passages_out
    )
    log.info(
        "%d passages from %d of %d PDFs (%d pages, %.1f pages/s); skipped: %s",
        len(rows),
        report["extracted"],
        len(files),
        pages,
        report["pages_per_second"] or 0,
        report["skipped_by_reason"] or "none",
    )
    return report


# ---------------------------------------------------------------------------------------------
# Extraction quality against reference plain texts (the DRC paper's Table 3)


def tokens(text: str) -> Counter:
    return Counter(t.lower() for t in TOKEN.findall(text))


def token_prf(extracted: str, reference: str) -> tuple[float, float, float]:
    """Precision, recall and F1 of the extracted tokens against the reference's (as multisets)."""
    return _prf(tokens(extracted), tokens(reference))


def _prf(got: Counter, want: Counter) -> tuple[float, float, float]:
    overlap = sum((got & want).values())
    precision = overlap / got.total() if got else 0.0
    recall = overlap / want.total() if want else 0.0
    f1 = 2 * precision * recall / (precision + recall) if overlap else 0.0
    return precision, recall, f1


def reference_file(reference_dir: str | os.PathLike, doc_id: str) -> Path:
    """The plain text of a PDF: its doc_id under the reference folder, with .txt for .pdf."""
    return (Path(reference_dir) / doc_id).with_suffix(".txt")


def extraction_quality(
    passages: pd.DataFrame,
    doc_ids: list[str],
    reference_dir: str | os.PathLike,
    out: str | os.PathLike,
    summary_out: str | os.PathLike,
) -> dict:
    """Token P/R/F1 per file with a reference text (a skipped file scores 0); means in summary."""
    texts = passages.sort_values(["doc_id", "position"]).groupby("doc_id")["text"].agg(" ".join)
    rows, missing = [], []
    for doc_id in doc_ids:
        path = reference_file(reference_dir, doc_id)
        if not path.exists():
            missing.append(doc_id)
            continue
        try:
            reference = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise InputError(located(path, "reference text is not UTF-8")) from None
        got, want = tokens(texts.get(doc_id, "")), tokens(reference)
        rows.append((doc_id, *_prf(got, want), got.total(), want.total()))
    if not rows:
        raise InputError(
            f"{reference_dir}: no reference text for any PDF (expected e.g. "
            f"{reference_file(reference_dir, doc_ids[0])})"
        )
    frame = pd.DataFrame(rows, columns=QUALITY_SCHEMA.names)
    write_table_atomic(pa.Table.from_pandas(frame, QUALITY_SCHEMA, preserve_index=False), out)
    summary = {
        "files": len(frame),
        "without_reference": missing,
        **{m: round(float(frame[m].mean()), 4) for m in ("precision", "recall", "f1")},
    }
    write_text_atomic(summary_out, json.dumps(summary, indent=2) + "\n")
    return summary


def extraction_quality_step(
    passages_path: str | os.PathLike,
    pdf_path: str | list[str],
    reference_dir: str | os.PathLike,
    out: str | os.PathLike,
    summary_out: str | os.PathLike,
) -> dict:
    """pdf/extraction_quality.{parquet,json}: the extracted passages of the corpus's PDFs
    (`pdf_path`, as the corpus entry names them) scored against their reference texts."""
    return extraction_quality(
        pd.read_parquet(passages_path), list(pdf_files(pdf_path)), reference_dir, out, summary_out
    )
