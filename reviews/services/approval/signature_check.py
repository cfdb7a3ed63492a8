"""The one check of an approval block against its rows and a public key: `verify_approval`
(verification.py) and imports of approved files (approved_imports.py) both ask it, so the
algorithm, key id, rows' digest, signed fields, evidence citations and signature are checked the
same way. Each problem is named by the block's field, as the files spell it.
"""

from __future__ import annotations

from typing import Any

from reviews.formats.canonical import canonical_json, rows_sha256
from reviews.formats.signed import CITATIONS, payload_format, signed_fields, signed_message
from reviews.services.approval import signing


def _citations_problem(signed: Any, stated: list[dict]) -> str | None:
    """The file's own evidence against the signed citations (a review file's claims and
    candidates): the first path whose quote, box or source differs."""
    if not isinstance(signed, list):
        return f"$.approval.{CITATIONS}: not a list"
    by_path: dict[str, tuple[list[bytes], list[bytes]]] = {}
    for side, citations in enumerate((signed, stated)):
        for cited in citations:
            path = cited.get("path") if isinstance(cited, dict) else None
            by_path.setdefault(str(path), ([], []))[side].append(canonical_json(cited))
    for path, (bound, given) in sorted(by_path.items()):
        if sorted(bound) != sorted(given):
            return (
                f"the evidence of {path} (quote, bbox, source or page) is not what was signed: "
                f"the file cites {[c.decode() for c in sorted(given)]}, the signature binds "
                f"{[c.decode() for c in sorted(bound)]}"
            )
    return None


def signature_problem(
    block: dict, rows: list[dict], public_key, *, citations: list[dict] | None = None
) -> str | None:
    """Why `block` does not sign `rows` with `public_key`, or None. `citations`: the evidence
    the file itself states for its rows (review files), which must equal the signed ones."""
    algorithm = block.get("algorithm", signing.ALGORITHM)
    if algorithm != signing.ALGORITHM:
        return f"$.approval.algorithm: {algorithm!r} is not {signing.ALGORITHM!r}"
    if block.get("sha256") != rows_sha256(rows):
        return "$.approval.sha256: does not match the rows"
    expected_key = signing.key_id_of(public_key)
    if block.get("key_id") != expected_key:
        return f"$.approval.key_id: signed with key {block.get('key_id')}, not {expected_key}"
    missing = [name for name in signed_fields(block) if name not in block]
    if payload_format(block) > 1 and missing:
        return f"$.approval: lacks {', '.join(missing)}"
    if not signing.verify(signed_message(block, rows), str(block.get("signature", "")), public_key):
        what = "the signed fields or rows" if payload_format(block) > 1 else "the rows"
        return f"$.approval.signature: does not match {what}"
    if payload_format(block) == 3 and citations is not None:
        return _citations_problem(block[CITATIONS], citations)
    return None
