"""Canonical forms: canonical JSON, the digest approvals sign, JSON paths, bundle paths.

Canonical JSON (this module's definition, used for every signature):
  * ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    allow_nan=False)`` encoded as UTF-8 (no BOM, no trailing newline);
  * object keys sorted by Python string order (Unicode code points);
  * strings are written exactly as given (no Unicode normalisation) with the minimal JSON
    escapes; numbers as Python writes them (``1`` and ``1.0`` are different values and stay so);
  * NaN and Infinity are refused (they are not JSON).

Reference rows (what an approval covers):
  * a list of ``{"path": <JSON path>, "expected_value": <any JSON value>}`` objects, one per
    field, with exactly those two keys (anything else is dropped before hashing);
  * sorted by ``path`` (code-point order), paths unique;
  * fields decided ``omit`` are absent (not present with null).
``rows_canonical_bytes(rows)`` returns the exact bytes; ``rows_sha256(rows)`` is the lowercase
hex SHA-256 of those bytes, stored as ``approval.sha256``. An Ed25519 signature should be computed
over the same canonical bytes (the message), so a verifier recomputes them from the rows alone.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, PlainSerializer

__all__ = [
    "JsonPath",
    "RelativePath",
    "UtcTime",
    "canonical_json",
    "canonical_rows",
    "check_json_path",
    "normalise_relative_path",
    "resolve_evidence_path",
    "rows_canonical_bytes",
    "rows_sha256",
]

# `$` then dotted names, [index] or ['quoted'] / ["quoted"] segments; at least one segment.
_JSON_PATH = re.compile(
    r"""^\$(?:\.[^.\[\]\s'"]+|\[\d+\]|\['(?:[^'\\]|\\.)*'\]|\["(?:[^"\\]|\\.)*"\])+$"""
)
_DRIVE_OR_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def check_json_path(value: str) -> str:
    if not _JSON_PATH.match(value):
        raise ValueError(f"not a JSON path like '$.field' or '$.items[0].name': {value!r}")
    return value


def normalise_relative_path(value: str) -> str:
    """Validate a bundle-relative POSIX path and return it without ``.``/empty segments.

    Refused: empty, absolute (``/x``), backslashes (Windows separators would escape on
    extraction), drive letters or URL schemes (``C:``, ``file:``), NUL, and any ``..`` segment.
    """
    if not isinstance(value, str) or not value.strip():
        raise ValueError("empty path")
    if "\x00" in value or "\\" in value:
        raise ValueError(f"path must use '/' and no control characters: {value!r}")
    if value.startswith("/") or _DRIVE_OR_SCHEME.match(value):
        raise ValueError(f"path must be relative: {value!r}")
    parts = [p for p in value.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"path escapes the bundle root: {value!r}")
    if not parts:
        raise ValueError(f"path names no file: {value!r}")
    return "/".join(parts)


def _check_relative(value: str) -> str:
    normalise_relative_path(value)
    return value  # keep the author's spelling; lookups normalise


def _utc_z(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


# pydantic field types for the two path kinds, and for a file's times (read with their offset,
# written back in UTC with `Z`).
JsonPath = Annotated[str, AfterValidator(check_json_path)]
RelativePath = Annotated[str, AfterValidator(_check_relative)]
UtcTime = Annotated[AwareDatetime, PlainSerializer(_utc_z)]


def resolve_evidence_path(base_dir: str | os.PathLike[str], path: str) -> Path:
    """Evidence of a loose .json/.jsonl: ``path`` relative to the file's folder, never outside
    it (symlinks are resolved before the check)."""
    base = Path(base_dir).resolve()
    target = (base / normalise_relative_path(path)).resolve()
    if not target.is_relative_to(base):
        raise ValueError(f"path escapes the file's folder: {path!r}")
    return target


def canonical_json(value: Any) -> bytes:
    """Canonical UTF-8 JSON bytes of a JSON-compatible value."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def canonical_rows(rows: Iterable[Mapping[str, Any] | Any]) -> list[dict[str, Any]]:
    """Normalise reference rows (dicts or objects with ``path``/``expected_value``).

    Raises ValueError on a missing key, a non-string path, or a duplicate path: two values for
    one field would make the signed statement ambiguous.
    """
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        if isinstance(row, Mapping):
            if "path" not in row or "expected_value" not in row:
                raise ValueError("a reference row needs 'path' and 'expected_value'")
            path, value = row["path"], row["expected_value"]
        else:
            path, value = row.path, row.expected_value
        if not isinstance(path, str):
            raise ValueError(f"reference row path must be a string, got {path!r}")
        if path in out:
            raise ValueError(f"duplicate reference row path {path!r}")
        out[path] = {"path": path, "expected_value": value}
    return [out[p] for p in sorted(out)]


def rows_canonical_bytes(rows: Iterable[Mapping[str, Any] | Any]) -> bytes:
    """The exact bytes an approval covers (see module docstring)."""
    return canonical_json(canonical_rows(rows))


def rows_sha256(rows: Iterable[Mapping[str, Any] | Any]) -> str:
    """Lowercase hex SHA-256 of ``rows_canonical_bytes(rows)``."""
    return hashlib.sha256(rows_canonical_bytes(rows)).hexdigest()
