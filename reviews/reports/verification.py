"""Checking exported approvals: does each file still say exactly what was signed?

Works from the files and a public key alone (reviews/reports/verification_files.py reads
them); each block is checked by signature_check.py, as an import checks it. Format 3 binds
project, case, version, superseded version, approver, time and the rows' evidence citations
besides the rows; format 2 the same without citations (reported as such); a format-1 approval
(rows only) is reported as such and fails unless allowed. Where
this site holds the signed version, a changed row is named path by path and the version chain
is checked against it (each `supersedes` exists and is older; the version is one signed here).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from reviews.formats.canonical import canonical_json, rows_sha256
from reviews.formats.signed import payload_format
from reviews.models import Approval
from reviews.reports.verification_files import Signed, read
from reviews.services.approval.ground_truth import bound_of
from reviews.services.approval.signature_check import signature_problem

V1 = "v1: rows only, not bound to the case"
V2 = "v2 (evidence citations not signed)"


@dataclass(frozen=True)
class Verdict:
    case_id: str
    ok: bool
    detail: str
    where: str = ""
    v1: bool = False

    def line(self) -> str:
        where = f" [{self.where}]" if self.where else ""
        return f"{'OK  ' if self.ok else 'FAIL'} {self.case_id}: {self.detail}{where}"


def _same(field: str, stated, signed) -> bool:
    if field == "approved_at" and isinstance(stated, str) and isinstance(signed, str):
        try:
            return datetime.fromisoformat(stated) == datetime.fromisoformat(signed)
        except ValueError:
            return False
    return stated == signed


def _signed_here(project: str | None, case_id: str) -> list[Approval]:
    approvals = Approval.objects.filter(item__external_id=case_id).select_related(
        "item__project", "reference__supersedes", "reference__derived_from"
    )
    if project:
        approvals = approvals.filter(item__project__slug=project)
    return list(approvals)


def _differing_paths(signed: Signed, sha256: str) -> str:
    """Name the paths that differ from the signed rows, when this site holds them."""
    block = signed.block or {}
    here = [a for a in _signed_here(block.get("project"), signed.case_id) if a.sha256 == sha256]
    if not here:
        return "the rows differ from what was signed"
    given = {r["path"]: r["expected_value"] for r in signed.rows}
    original = {r["path"]: r["expected_value"] for r in here[0].reference.rows}
    parts = []
    for path in sorted(set(given) | set(original)):
        if path not in given:
            parts.append(f"{path} missing")
        elif path not in original:
            parts.append(f"{path} added")
        elif canonical_json(given[path]) != canonical_json(original[path]):
            parts.append(f"{path} changed ({original[path]!r} -> {given[path]!r})")
    return "; ".join(parts) or "the rows differ from what was signed"


def _check(signed: Signed, public_key) -> str | None:
    """Why `signed` does not verify, or None."""
    block = signed.block
    if block is None:
        return "carries no approval"
    if block.get("sha256") != rows_sha256(signed.rows):
        return _differing_paths(signed, str(block.get("sha256")))
    problem = signature_problem(block, signed.rows, public_key, citations=signed.citations)
    if problem:
        return problem
    if payload_format(block) > 1:
        for name, stated in signed.claims.items():
            if not _same(name, stated, block[name]):
                return f"$.{name}: the file says {stated!r}, the signature binds {block[name]!r}"
    return None


def _chain_problem(signed: Signed) -> str | None:
    """Each `supersedes` older than its version; against this site: a version signed here."""
    block = signed.block
    version, supersedes = block.get("version"), block.get("supersedes")
    if supersedes is not None and not (isinstance(supersedes, int) and supersedes < version):
        return f"$.approval.supersedes: {supersedes!r} is not an older version than {version}"
    here = _signed_here(block.get("project"), signed.case_id)
    if not here:
        return None  # another site's case: the signature is all there is to check
    versions = {bound_of(a)["version"]: a for a in here}
    mine = versions.get(version)
    if mine is None or mine.sha256 != block["sha256"]:
        return f"$.approval.version: this site signed no version {version} with these rows"
    if supersedes is not None and supersedes not in versions:
        return f"$.approval.supersedes: version {supersedes} was never signed here"
    newest = max(versions)
    if version != newest:
        return f"superseded: this site's current version is {newest}, not {version}"
    return None


def verify_signed(signed: Signed, public_key) -> Verdict:
    if signed.problem:
        return Verdict(signed.case_id, False, signed.problem, signed.where)
    problem = _check(signed, public_key)
    if problem:
        return Verdict(signed.case_id, False, problem, signed.where)
    if payload_format(signed.block) == 1:
        return Verdict(signed.case_id, True, V1, signed.where, v1=True)
    problem = _chain_problem(signed)
    if problem:
        return Verdict(signed.case_id, False, problem, signed.where)
    form = "v3" if payload_format(signed.block) == 3 else V2
    detail = f"{form}, version {signed.block['version']}, sha256 {signed.block['sha256'][:12]}…"
    return Verdict(signed.case_id, True, f"{detail}, key {signed.block['key_id']}", signed.where)


def verify_path(path: Path, public_key) -> list[Verdict]:
    records = list(read(path))
    verdicts = [verify_signed(signed, public_key) for signed in records]
    return _duplicates(records, verdicts)


def _duplicates(records: list[Signed], verdicts: list[Verdict]) -> list[Verdict]:
    """Two verified files giving one case and version other rows: the key signed both, so
    neither can be taken as the version."""
    seen: dict[tuple, set[str]] = defaultdict(set)
    for signed, verdict in zip(records, verdicts, strict=True):
        if verdict.ok:  # a failed one is reported already
            key = (signed.block.get("project"), signed.case_id, signed.block.get("version"))
            seen[key].add(rows_sha256(signed.rows))
    out = []
    for signed, verdict in zip(records, verdicts, strict=True):
        key = (
            (signed.block or {}).get("project"),
            signed.case_id,
            (signed.block or {}).get("version"),
        )
        if verdict.ok and len(seen.get(key, ())) > 1:
            verdict = Verdict(
                signed.case_id,
                False,
                "another file gives other rows for this version",
                verdict.where,
            )
        out.append(verdict)
    return out
