"""Artifact writing (Parquet and text) that never leaves a half-written file behind."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 100_000  # lets later stages read large tables a row group at a time


def _temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.tmp-{os.getpid()}")


def write_table_atomic(table: pa.Table, path: str | os.PathLike) -> None:
    """Write `table` to a temporary file and rename it into place."""
    with parquet_writer(path, table.schema) as writer:
        writer.write_table(table, row_group_size=ROW_GROUP_ROWS)


def write_bytes_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write a file (table, page, figure) to a temporary file and rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _temp_path(path)
    temp.write_bytes(data)
    os.replace(temp, path)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


@contextmanager
def parquet_writer(path: str | os.PathLike, schema: pa.Schema):
    """A ParquetWriter whose file appears at `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = _temp_path(path)
    writer = pq.ParquetWriter(temp, schema)
    try:
        yield writer
        writer.close()
        os.replace(temp, path)
    except BaseException:
        writer.close()
        temp.unlink(missing_ok=True)
        raise


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
