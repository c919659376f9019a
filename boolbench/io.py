"""Artifact writing (Parquet, text, any file or folder, entries of a JSON store) that never
leaves a half-written artifact behind: everything is written beside its target and renamed into
place (`atomic_path`), so a killed job leaves either the old artifact or the new one."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 100_000  # lets later stages read large tables a row group at a time


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = "") -> Iterator[Path]:
    """A fresh temporary path beside `path` (ending in `suffix`, for writers that insist on an
    extension) for the block to write a file or a folder to. If the block succeeds it replaces
    `path` (a folder whole); if it fails it is removed. Unique per call, so concurrent writers
    of one path (the LLM cache) never share a temporary file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}{suffix}")
    try:
        yield temp
        if temp.is_dir():
            _remove(path)  # os.replace cannot replace a non-empty folder
        os.replace(temp, path)
    finally:
        _remove(temp)


def write_table_atomic(table: pa.Table, path: str | os.PathLike) -> None:
    """Write `table` to a temporary file and rename it into place."""
    with parquet_writer(path, table.schema) as writer:
        writer.write_table(table, row_group_size=ROW_GROUP_ROWS)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write a file (table, page, figure) to a temporary file and rename it into place."""
    with atomic_path(path) as temp:
        temp.write_bytes(data)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


@contextmanager
def parquet_writer(path: str | os.PathLike, schema: pa.Schema):
    """A ParquetWriter whose file appears at `path` only if the block succeeds."""
    with atomic_path(path) as temp:
        writer = pq.ParquetWriter(temp, schema)
        try:
            yield writer
        finally:
            writer.close()


def read_row_range(
    path: str | os.PathLike, start: int, stop: int, columns: list[str] | None = None
) -> pa.Table:
    """Rows [start, stop) of a Parquet file, reading only the row groups that hold them."""
    parquet = pq.ParquetFile(path)
    parts, offset = [], 0
    for group in range(parquet.num_row_groups):
        rows = parquet.metadata.row_group(group).num_rows
        if offset < stop and offset + rows > start:
            table = parquet.read_row_group(group, columns=columns)
            lo = max(start, offset) - offset
            parts.append(table.slice(lo, min(stop, offset + rows) - offset - lo))
        offset += rows
    if not parts:
        return parquet.schema_arrow.empty_table().select(columns or parquet.schema_arrow.names)
    return pa.concat_tables(parts)


def row_count(path: str | os.PathLike) -> int:
    """Number of rows of a Parquet file, from its footer."""
    return pq.ParquetFile(path).metadata.num_rows


class JsonStore:
    """Content-addressed JSON entries, one file each: `<root>/<key[:2]>/<key>.json`. The one
    store of the LLM response cache and the PDF extraction cache. Entries are written beside
    their place and renamed in (atomic_path), so a killed job loses only entries not yet
    written, any number of jobs and machines may write at once (a rename is atomic, and two
    writers of one key write the same entry), and it works on NFS, unlike SQLite."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root).expanduser()

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        """The entry of `key`; None if there is none, or if it cannot be read (compute again)."""
        try:
            return json.loads(self.path(key).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None

    def put(self, key: str, entry: dict) -> None:
        with atomic_path(self.path(key)) as temp, open(temp, "w", encoding="utf-8") as out:
            json.dump(entry, out, ensure_ascii=False, sort_keys=True)

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.exists() else 0
