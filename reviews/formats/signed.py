"""What an approval signature covers: payload format 2 (and how format 1 files are told apart).

Format 2 signs ``canonical_json(payload)`` (see canonical.py; for these values it is the RFC 8785
JCS serialisation) where ``payload`` is

    {"format": 2, "project": slug, "case_id": str, "version": int, "supersedes": int | null,
     "authority": "ground_truth", "parent_generated_sha256": hex | null,
     "rows": [{"path": str, "expected_value": any}, ...sorted by path],
     "approved_by": str, "approved_at": "YYYY-MM-DDTHH:MM:SS.ffffffZ"}

Every exported file carries the payload's fields (all but ``rows``) inside its ``approval``
block, beside ``sha256`` (of the rows, as in format 1), ``algorithm``, ``key_id`` and
``signature``; the rows come from the file's content (reference rows, a review file's claims
plus decisions, or a CSV's rows for the case). Format 1 (an approval block without
``"format": 2``) signed the canonical rows alone and binds nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from .canonical import canonical_json, canonical_rows

FORMAT = 2
# A CSV export's signature file: `<name>.csv` + this (one approval block per case).
SIGNATURES_SUFFIX = ".sig.json"
# The payload's fields other than `rows`, as they appear in an approval block.
BOUND_FIELDS = (
    "format",
    "project",
    "case_id",
    "version",
    "supersedes",
    "authority",
    "parent_generated_sha256",
    "approved_by",
    "approved_at",
)
# The rest of an approval block: not signed, or the signature itself.
SIGNATURE_FIELDS = ("sha256", "algorithm", "key_id", "signature")


def format_approved_at(moment: datetime) -> str:
    """The one spelling of a signed time: UTC, microseconds, `Z`."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def bound_fields(
    *,
    project: str,
    case_id: str,
    version: int,
    supersedes: int | None,
    parent_generated_sha256: str | None,
    approved_by: str,
    approved_at: datetime,
) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "project": project,
        "case_id": case_id,
        "version": version,
        "supersedes": supersedes,
        "authority": "ground_truth",
        "parent_generated_sha256": parent_generated_sha256,
        "approved_by": approved_by,
        "approved_at": format_approved_at(approved_at),
    }


def payload_format(approval: Mapping[str, Any]) -> int:
    """2 for a format-2 approval block, 1 for anything older."""
    return FORMAT if approval.get("format") == FORMAT else 1


def payload_bytes(bound: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> bytes:
    """The exact message a format-2 signature covers."""
    payload = {name: bound[name] for name in BOUND_FIELDS}
    payload["rows"] = canonical_rows(rows)
    return canonical_json(payload)


def signed_message(approval: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> bytes:
    """The message of an approval block of either format (rows from the file's content)."""
    if payload_format(approval) == FORMAT:
        return payload_bytes(approval, rows)
    return canonical_json(canonical_rows(rows))
