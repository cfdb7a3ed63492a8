"""What an approval signature covers: payload formats 3 and 2 (and how format 1 files are told
apart).

Format 3 signs ``canonical_json(payload)`` (see canonical.py; for these values it is the RFC 8785
JCS serialisation) where ``payload`` is

    {"format": 3, "project": slug, "case_id": str, "version": int, "supersedes": int | null,
     "authority": "ground_truth", "parent_generated_sha256": hex | null,
     "citations": [{"path": str, "provider": str | null, "quote": str | null,
                    "bbox": [x0, y0, x1, y1] | null,
                    "source": {"artifact_id": str, "path": str, "page": int | null} | null},
                   ...sorted by their canonical JSON],
     "rows": [{"path": str, "expected_value": any}, ...sorted by path],
     "approved_by": str, "approved_at": "YYYY-MM-DDTHH:MM:SS.ffffffZ"}

``citations`` are the evidence of every approved row as the item's review file gives it
(`citations_of`): a consensus claim's quote (``evidence``), box and cited source with its page,
and, for a disputed path decided ``set``, each candidate's (with its ``provider``). A row with
nothing cited has no entry; an item with no review file signs ``[]``.

Every exported file carries the payload's fields (all but ``rows``) inside its ``approval``
block, beside ``sha256`` (of the rows, as in format 1), ``algorithm``, ``key_id`` and
``signature``; the rows come from the file's content (reference rows, a review file's claims
plus decisions, or a CSV's rows for the case), and a review file's own citations must equal the
signed ones. Format 2 (``"format": 2``) signed the same payload without ``citations``: it still
verifies, as binding no evidence. Format 1 (an approval block without ``format``) signed the
canonical rows alone and binds nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from .canonical import canonical_json, canonical_rows
from .review_file import ReviewFile

FORMAT = 3  # what this site signs
FORMATS = (2, 3)  # what it verifies as bound to the case (format 1: rows only)
CITATIONS = "citations"  # format 3's field beside BOUND_FIELDS
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
    citations: list[dict[str, Any]],
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
        CITATIONS: canonical_citations(citations),
    }


def signed_fields(approval: Mapping[str, Any]) -> tuple[str, ...]:
    """The fields of an approval block its payload binds (besides the rows)."""
    if payload_format(approval) == 3:
        return (*BOUND_FIELDS, CITATIONS)
    return BOUND_FIELDS


def payload_format(approval: Mapping[str, Any]) -> int:
    """3 or 2 for such an approval block, 1 for anything older."""
    given = approval.get("format")
    return given if given in FORMATS and not isinstance(given, bool) else 1


def payload_bytes(bound: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> bytes:
    """The exact message a format-3 (or format-2) signature covers."""
    payload = {name: bound[name] for name in signed_fields(bound)}
    payload["rows"] = canonical_rows(rows)
    return canonical_json(payload)


def signed_message(approval: Mapping[str, Any], rows: Iterable[Mapping[str, Any]]) -> bytes:
    """The message of an approval block of any format (rows from the file's content)."""
    if payload_format(approval) in FORMATS:
        return payload_bytes(approval, rows)
    return canonical_json(canonical_rows(rows))


def canonical_citations(citations: Iterable[Any]) -> list[Any]:
    """Citations in their one order (by canonical JSON), as signed."""
    return sorted(citations, key=canonical_json)


def _citation(path: str, provider: str | None, row, sources: dict) -> list[dict[str, Any]]:
    source = sources.get(row.reference_id) if row.reference_id is not None else None
    cited = {
        "quote": row.evidence,
        "bbox": list(row.bbox) if row.bbox is not None else None,
        "source": None
        if source is None
        else {
            "artifact_id": source.artifact_id,
            "path": source.path,
            "page": source.metadata.page,
        },
    }
    if not any(value is not None for value in cited.values()):
        return []  # nothing cited
    return [{"path": path, "provider": provider, **cited}]


def citations_of(review: ReviewFile, paths: Iterable[str]) -> list[dict[str, Any]]:
    """The evidence of the approved rows at `paths` in `review` (see the module docstring)."""
    approved = set(paths)
    sources = {source.artifact_id: source for source in review.sources}
    found = [
        cited
        for claim in review.claims
        if claim.path in approved
        for cited in _citation(claim.path, None, claim, sources)
    ]
    found += [
        cited
        for disputed in review.review_items
        if disputed.path in approved
        for candidate in disputed.candidates
        for cited in _citation(disputed.path, candidate.provider, candidate, sources)
    ]
    return canonical_citations(found)
