"""Checking exported approvals: does each file's content still match what was signed?

Works from the exported file and a public key alone. When the content does not match, the
item's signed version is looked up in this site's database (if it is there) so the report can
name the exact paths that differ; otherwise it says the rows as a whole do not match.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from reviews.formats.canonical import rows_canonical_bytes, rows_sha256
from reviews.formats.errors import FormatError
from reviews.formats.reference import ApprovedReference
from reviews.formats.review_file import Approval, ReviewFile
from reviews.models import Reference
from reviews.services import signing


@dataclass(frozen=True)
class Verdict:
    case_id: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'OK  ' if self.ok else 'FAIL'} {self.case_id}: {self.detail}"


def _documents(path: Path) -> Iterator[tuple[str, dict]]:
    """(where, object) for every approval-carrying JSON object in a file or folder."""
    files = sorted(p for p in path.rglob("*.json")) if path.is_dir() else [path]
    for file in files:
        text = file.read_text(encoding="utf-8")
        if file.suffix == ".jsonl":
            for number, line in enumerate(text.splitlines(), start=1):
                if line.strip():
                    yield f"{file.name}, line {number}", json.loads(line)
        else:
            yield file.name, json.loads(text)


def _rows_of(obj: dict) -> tuple[str, list[dict], dict | None]:
    """Case id, rows and approval block. The approval is validated apart from the content:
    the schema's own sha256 check would hide WHICH paths were changed."""
    content = {k: v for k, v in obj.items() if k != "approval"}
    approval = (
        Approval.model_validate(obj["approval"]).model_dump(mode="json")
        if obj.get("approval")
        else None
    )
    if "review_items" in obj or "claims" in obj:
        review = ReviewFile.model_validate(content)
        return review.case_id, review.reference_rows(), approval
    reference = ApprovedReference.model_validate(content)
    return reference.case_id, [row.model_dump(mode="json") for row in reference.rows], approval


def _differing_paths(case_id: str, sha256: str, rows: list[dict]) -> str:
    """Name the paths that differ from the signed version, when this site holds it."""
    signed = Reference.objects.filter(item__external_id=case_id, sha256=sha256).first()
    if signed is None:
        return "the rows differ from what was signed"
    given = {r["path"]: r["expected_value"] for r in rows}
    original = {r["path"]: r["expected_value"] for r in signed.rows}
    parts = []
    for path in sorted(set(given) | set(original)):
        if path not in given:
            parts.append(f"{path} missing")
        elif path not in original:
            parts.append(f"{path} added")
        elif rows_sha256([{"path": path, "expected_value": given[path]}]) != rows_sha256(
            [{"path": path, "expected_value": original[path]}]
        ):
            parts.append(f"{path} changed ({original[path]!r} -> {given[path]!r})")
    return "; ".join(parts) or "the rows differ from what was signed"


def verify_object(obj: dict, where: str, public_key) -> Verdict:
    try:
        case_id, rows, approval = _rows_of(obj)
    except (ValueError, FormatError) as error:  # pydantic ValidationError is a ValueError
        return Verdict(where, False, f"not a valid exported file: {error}".splitlines()[0])
    if approval is None:
        return Verdict(case_id, False, "carries no approval")
    actual = rows_sha256(rows)
    if actual != approval["sha256"]:
        return Verdict(case_id, False, _differing_paths(case_id, approval["sha256"], rows))
    expected_key = signing.key_id_of(public_key)
    if approval["key_id"] != expected_key:
        return Verdict(
            case_id, False, f"signed with key {approval['key_id']}, not with {expected_key}"
        )
    if not signing.verify(rows_canonical_bytes(rows), approval["signature"], public_key):
        return Verdict(case_id, False, "the signature does not match the rows")
    return Verdict(case_id, True, f"sha256 {actual[:12]}…, key {expected_key}")


def verify_path(path: Path, public_key) -> list[Verdict]:
    return [verify_object(obj, where, public_key) for where, obj in _documents(path)]
