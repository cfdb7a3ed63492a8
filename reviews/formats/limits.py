"""Import limits: one place, each with its own error message.

The values come from settings (`IMPORT_*` and `EVIDENCE_*`, documented in `.env.example` and
README); `reviews.apps` installs them with `configure()` at start-up, and the readers in this
package ask `current()`, so a parser never needs Django. A limit that is hit raises
FormatError naming the file, the record and the path, and the setting to raise.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    json_bytes: int = 50 * MB  # one JSON document: a review .json file or zip member
    file_bytes: int = 2048 * MB  # one import file or upload
    depth: int = 64  # nesting of JSON arrays and objects
    records: int = 10_000_000  # records in one import: 2M verdicts of a 1M-item project fit
    string_chars: int = 1_000_000  # one JSON string or CSV cell
    line_bytes: int = 16 * MB  # one JSONL line or CSV row
    zip_bytes: int = 500 * MB  # a bundle, uncompressed
    zip_ratio: int = 200  # a member's uncompressed size over its compressed size
    pages: int = 500  # pages of one evidence PDF
    pixels: int = 50_000_000  # decoded pixels of one evidence image


SETTINGS = {  # Limits field -> the setting (and environment variable) that sets it
    "json_bytes": "IMPORT_MAX_JSON_BYTES",
    "file_bytes": "IMPORT_MAX_FILE_BYTES",
    "depth": "IMPORT_MAX_DEPTH",
    "records": "IMPORT_MAX_RECORDS",
    "string_chars": "IMPORT_MAX_STRING_CHARS",
    "line_bytes": "IMPORT_MAX_LINE_BYTES",
    "zip_bytes": "IMPORT_MAX_ZIP_BYTES",
    "zip_ratio": "IMPORT_MAX_ZIP_RATIO",
    "pages": "EVIDENCE_MAX_PAGES",
    "pixels": "EVIDENCE_MAX_PIXELS",
}

_site = Limits()
_override: ContextVar[Limits | None] = ContextVar("import_limits", default=None)


def configure(limits: Limits) -> None:
    """Set the site-wide limits (from settings, at start-up)."""
    global _site
    _site = limits


def current() -> Limits:
    return _override.get() or _site


@contextmanager
def overridden(**changes: Any) -> Iterator[Limits]:
    """Other limits for a block (tests; callers with bounds of their own)."""
    token = _override.set(replace(current(), **changes))
    try:
        yield current()
    finally:
        _override.reset(token)


def message(field: str, what: str, actual: int | None = None) -> str:
    """`<what> is over the limit of N (setting NAME)`: every limit error reads the same way."""
    limit = getattr(current(), field)
    seen = f" ({actual:,})" if actual is not None else ""
    return f"{what}{seen} is over the limit of {limit:,} ({SETTINGS[field]})"
