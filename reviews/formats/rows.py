"""Row-level exports written as CSV, JSONL or Parquet, a chunk of bytes at a time.

A row kind (`reviews/selectors_rows.py`) declares its columns with a type; the writers here turn
an iterator of tuples into an iterator of bytes without ever holding more than one batch, so a
100k-row export streams in constant memory (docs/formats.md, "Row exports").

Types: `text`, `int`, `float`, `bool`, `time` (ISO 8601 in CSV and JSONL, a UTC timestamp in
Parquet) and `json` (any JSON value: as itself in JSONL, as JSON text in CSV and Parquet).
Parquet goes through pyarrow, an optional extra (`pip install 'evalsite[parquet]'`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from itertools import islice
from typing import Any

from reviews.formats.reference import formula_like

ROW_FORMATS = ("csv", "jsonl", "parquet")
CONTENT_TYPES = {
    "csv": "text/csv; charset=utf-8",
    "jsonl": "application/x-ndjson",
    "parquet": "application/vnd.apache.parquet",
}
BATCH = 2000  # rows per chunk of bytes
PARQUET_GROUP = 5  # batches per Parquet row group: 10,000 rows
PARQUET_MISSING = (
    "Parquet needs pyarrow, an optional extra: pip install 'evalsite[parquet]' "
    "(or choose csv or jsonl)"
)
_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


class RowFormatError(ValueError):
    """An export that cannot be written (unknown format, Parquet without pyarrow)."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # text, int, float, bool, time, json
    description: str = ""


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=_json_default, separators=(",", ":"))


def _batches(rows: Iterable[tuple], size: int = BATCH) -> Iterator[list[tuple]]:
    rows = iter(rows)
    while batch := list(islice(rows, size)):
        yield batch


def _csv_cell(value: Any, type: str) -> Any:
    if value is None:
        return ""
    if type == "json":
        return _json_text(value)
    if type == "time":
        return value.isoformat()
    if type == "bool":
        return "true" if value else "false"
    if type == "text" and formula_like(value) and not _NUMBER.match(value.strip()):
        # A spreadsheet would run it (=, +, -, @ ...): a leading ' keeps it text there. Plain
        # numbers such as a "-1" label stay as they are.
        return "'" + value
    return value


def csv_chunks(columns: list[Column], rows: Iterable[tuple]) -> Iterator[bytes]:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([c.name for c in columns])
    yield buffer.getvalue().encode()
    for batch in _batches(rows):
        buffer.seek(0)
        buffer.truncate()
        for row in batch:
            writer.writerow([_csv_cell(v, c.type) for v, c in zip(row, columns, strict=True)])
        yield buffer.getvalue().encode()


def _jsonl_value(value: Any, type: str) -> Any:
    if value is None:
        return None
    if type == "time":
        return value.isoformat()
    if type == "float":
        return float(value)
    return value


def jsonl_chunks(columns: list[Column], rows: Iterable[tuple]) -> Iterator[bytes]:
    names = [c.name for c in columns]
    for batch in _batches(rows):
        lines = (
            _json_text(
                {n: _jsonl_value(v, c.type) for n, v, c in zip(names, row, columns, strict=True)}
            )
            for row in batch
        )
        yield ("\n".join(lines) + "\n").encode()


def pyarrow_or_error():
    """pyarrow and pyarrow.parquet, or a RowFormatError saying how to install them."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise RowFormatError(PARQUET_MISSING) from None
    return pyarrow, pyarrow.parquet


class _Sink(io.RawIOBase):
    """Where ParquetWriter writes: bytes kept until the next chunk takes them."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.position = 0

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.parts.append(bytes(data))
        self.position += len(data)
        return len(data)

    def tell(self) -> int:
        return self.position

    def take(self) -> bytes:
        data, self.parts = b"".join(self.parts), []
        return data


def _arrow_type(pa, type: str):
    return {
        "text": pa.string(),
        "json": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "time": pa.timestamp("us", tz="UTC"),
    }[type]


def parquet_chunks(columns: list[Column], rows: Iterable[tuple]) -> Iterator[bytes]:
    pa, pq = pyarrow_or_error()
    schema = pa.schema([pa.field(c.name, _arrow_type(pa, c.type)) for c in columns])
    sink = _Sink()
    writer = pq.ParquetWriter(sink, schema, compression="zstd")
    for group in _batches(rows, BATCH * PARQUET_GROUP):
        arrays = []
        for index, column in enumerate(columns):
            values = [row[index] for row in group]
            if column.type == "json":
                values = [None if v is None else _json_text(v) for v in values]
            elif column.type == "float":
                values = [None if v is None else float(v) for v in values]
            arrays.append(pa.array(values, type=schema.field(index).type))
        writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
        yield sink.take()
    writer.close()
    yield sink.take()


def row_chunks(format: str, columns: list[Column], rows: Iterable[tuple]) -> Iterator[bytes]:
    """The export as chunks of bytes. Parquet without pyarrow is refused here, before the
    first row is read, so a caller can answer with the message instead of a broken file."""
    if format == "csv":
        return csv_chunks(columns, rows)
    if format == "jsonl":
        return jsonl_chunks(columns, rows)
    if format == "parquet":
        pyarrow_or_error()
        return parquet_chunks(columns, rows)
    raise RowFormatError(f"format: {format!r} is not one of {', '.join(ROW_FORMATS)}")
