"""Exporting approved ground truth: review files (§2), reference JSON and CSV (§3).

Only approved items, their CURRENT ground-truth version (older versions stay readable in the
item's history; each export names its version and the one it supersedes). Output is
deterministic: items by external id, rows by path, canonical values.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from reviews.formats.reference import (
    ApprovedReference,
    ReferenceRow,
    dump_reference_json,
    reference_csv_rows,
    write_reference_csv,
)
from reviews.formats.review_file import ReviewFile, dump_review_file
from reviews.formats.signed import FORMAT, SIGNATURES_SUFFIX
from reviews.models import (
    Answer,
    Approval,
    EventKind,
    Item,
    QuestionKind,
    Resolution,
)
from reviews.selectors import current_approvals
from reviews.services.approval.ground_truth import approval_block, bound_of
from reviews.services.events import events_record

EXPORT_FORMATS = ("review", "reference", "csv")
CHUNK = 500  # approvals read at a time by `zip_export` (each with its item and rows)
PROGRESS_EVERY = 100  # items between two progress reports of `zip_export`


@dataclass(frozen=True)
class ApprovedItem:
    item: Item
    approval: Approval


def approved_items(project, *, chunk_size: int | None = None) -> Iterator[ApprovedItem]:
    """Every item whose current ground truth came through an approval, by external id (read
    `chunk_size` rows at a time when given)."""
    approvals = current_approvals(project).select_related("approver")
    for approval in approvals.iterator(chunk_size=chunk_size) if chunk_size else approvals:
        yield ApprovedItem(approval.item, approval)


def reference_document(entry: ApprovedItem) -> ApprovedReference:
    """The §3 document of an approval, from its Reference and Approval rows alone."""
    bound = bound_of(entry.approval)
    return ApprovedReference(
        project=bound.get("project"),
        case_id=bound["case_id"],
        version=bound["version"],
        supersedes=bound["supersedes"],
        parent_generated_sha256=bound["parent_generated_sha256"],
        rows=[ReferenceRow(**row) for row in entry.approval.reference.rows],
        approved_by=bound["approved_by"],
        approved_at=bound["approved_at"],
        approval=approval_block(entry.approval),
    )


def review_document(entry: ApprovedItem) -> ReviewFile | None:
    """The item's review file decided as SIGNED: each disputed path is `set` to its signed
    value or `omit`ted, consensus claims carry the signed values, and the adjudicator's reason
    and the raters' notes ride along (unsigned). None for items that came without one."""
    original = entry.item.metadata.get("review_file")
    if original is None:
        return None
    signed = {row["path"]: row["expected_value"] for row in entry.approval.reference.rows}
    data = dict(original)
    data["claims"] = [
        {**claim, "expected_value": signed[claim["path"]]}
        for claim in original.get("claims", [])
        if claim["path"] in signed
    ]
    notes = _decision_notes(entry.item, entry.approval.approved_at)
    data["review_items"] = [
        _decided(disputed, signed, notes.get(disputed["path"]))
        for disputed in original.get("review_items", [])
    ]
    covered = {c["path"] for c in data["claims"]} | {d["path"] for d in data["review_items"]}
    data["claims"] += [  # rows the file never had (e.g. a later generated version): claims
        {"path": path, "expected_value": value}
        for path, value in signed.items()
        if path not in covered
    ]
    bound = bound_of(entry.approval)
    data.update(
        status="approved",
        approved_by=bound["approved_by"],
        approved_at=bound["approved_at"],
        approval=approval_block(entry.approval),
        ground_truth_version=bound["version"],
    )
    return ReviewFile.model_validate(data)


def _decision_notes(item: Item, approved_at) -> dict[str, dict]:
    """Per disputed path: the adjudicator's reason (as `note`) and the raters' notes, as they
    stood when the approval was signed. Not part of what is signed."""
    notes: dict[str, dict] = {}
    resolutions = Resolution.objects.filter(
        question__item=item, question__kind=QuestionKind.FIELD, created_at__lte=approved_at
    ).select_related("question", "decided_by")
    for resolution in resolutions.order_by("created_at", "pk"):  # the latest one wins
        notes[resolution.question.key] = {"decided_by": _decider_name(resolution)}
        if resolution.reason:
            notes[resolution.question.key]["note"] = resolution.reason
    answers = (
        Answer.objects.filter(
            question__item=item, question__kind=QuestionKind.FIELD, created_at__lte=approved_at
        )
        .exclude(note="")
        .exclude(assignment__gold=True)
    )
    for answer in answers.select_related("question").order_by("seq", "pk"):
        rater_notes = notes.setdefault(answer.question.key, {}).setdefault("rater_notes", [])
        if answer.note not in rater_notes:
            rater_notes.append(answer.note)
    return notes


def _decider_name(resolution: Resolution) -> str:
    if resolution.decided_by is not None:
        return f"{resolution.method} by {resolution.decided_by.get_username()}"
    return str(resolution.method)


def _decided(disputed: dict, signed: dict, notes: dict | None) -> dict:
    decided = dict(disputed)
    path = disputed["path"]
    if path in signed:
        decided.update(decision="set", value=signed[path])
    else:
        decided.update(decision="omit", value=None)
    if notes:
        decided.update(notes)
    return decided


class NothingToExport(Exception):
    """The export would be empty: nothing approved, or no review file among the approved."""


def _format_check(format: str) -> None:
    if format not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {format!r}; choose one of {EXPORT_FORMATS}")


def _nothing_approved(project) -> NothingToExport:
    return NothingToExport(
        f"nothing to export: no item of {project.slug} is approved yet (an approver signs "
        "each item on its Approve page)"
    )


def _no_review_files(approved: int) -> NothingToExport:
    return NothingToExport(
        f"nothing to export as review files: none of the {approved} approved items "
        "came from a review file; export references or CSV"
    )


def _json_member(format: str, entry: ApprovedItem) -> tuple[str, bytes] | None:
    """An item's file in the `review` or `reference` export (None: no review file)."""
    name = _safe_name(entry.item.external_id)
    if format == "reference":
        return f"{name}.reference.json", dump_reference_json(reference_document(entry))
    review = review_document(entry)
    return None if review is None else (f"{name}.review.json", dump_review_file(review))


def files_export(*, actor, project, format: str) -> dict[str, bytes]:
    """{file name: content} for the chosen format; records an `exported` event per item whose
    file it holds (a review export has none for items without a review file).
    Refused (NothingToExport) when it would be empty: an empty export verifies nothing."""
    _format_check(format)
    entries = list(approved_items(project))
    if not entries:
        raise _nothing_approved(project)
    files: dict[str, bytes] = {}
    exported = list(entries) if format == "csv" else []  # the items whose file it holds
    if format == "csv":
        buffer = io.StringIO()
        write_reference_csv(buffer, reference_csv_rows(reference_document(e) for e in entries))
        name = f"{project.slug}-ground-truth.csv"
        files[name] = buffer.getvalue().encode("utf-8")
        files[name + SIGNATURES_SUFFIX] = _csv_signatures(name, [_signed(e) for e in entries])
    for entry in entries if format != "csv" else []:
        if member := _json_member(format, entry):
            files[member[0]] = member[1]
            exported.append(entry)
    if not files:
        raise _no_review_files(len(entries))
    exported_record(actor=actor, format=format, exported=map(_exported, exported))
    return files


def zip_export(
    out: BinaryIO, *, project, format: str, progress: Callable[[int, int], None] | None = None
) -> list[tuple[int, int]]:
    """The export as one .zip written into the binary file `out` a member at a time (the
    approvals read in chunks: never the whole archive in memory); `progress(items, total)`
    as it goes. Returns the (pk, version) of each item whose file is in the archive (a review
    export leaves out items without a review file) for `exported_record`, which the caller
    runs once the file is where it goes. Refused (NothingToExport) when empty."""
    _format_check(format)
    total = current_approvals(project).count()
    if not total:
        raise _nothing_approved(project)
    seen = 0
    exported: list[tuple[int, int]] = []

    def entries() -> Iterator[ApprovedItem]:
        nonlocal seen
        for entry in approved_items(project, chunk_size=CHUNK):
            seen += 1
            if progress and seen % PROGRESS_EVERY == 0:
                progress(seen, total)
            yield entry

    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        if format == "csv":
            _csv_zip(archive, project, entries(), exported)
        for entry in entries() if format != "csv" else ():
            if member := _json_member(format, entry):
                archive.writestr(*member)
                exported.append(_exported(entry))
    if not exported:
        raise _no_review_files(seen)
    if progress:
        progress(seen, seen)
    return exported


def _csv_zip(
    archive: zipfile.ZipFile, project, entries: Iterator[ApprovedItem], exported: list
) -> None:
    """The CSV streamed into the archive, then its signature file (the approval blocks are
    kept meanwhile: a few hundred bytes an item, not its rows); each item's (pk, version)
    appended to `exported`."""
    name = f"{project.slug}-ground-truth.csv"
    signed: list[dict] = []

    def documents() -> Iterator[ApprovedReference]:
        for entry in entries:
            signed.append(_signed(entry))
            exported.append(_exported(entry))
            yield reference_document(entry)

    with archive.open(name, "w") as raw, io.TextIOWrapper(raw, "utf-8", newline="") as text:
        write_reference_csv(text, reference_csv_rows(documents()))
    archive.writestr(name + SIGNATURES_SUFFIX, _csv_signatures(name, signed))


def exported_record(*, actor, format: str, exported: Iterable[tuple[int, int]], **data) -> int:
    """One `exported` event per (item pk, version) exported; `data`: what else each says."""
    return events_record(
        kind=EventKind.EXPORTED,
        actor=actor,
        lines=((pk, {"format": format, "version": version, **data}) for pk, version in exported),
    )


def _exported(entry: ApprovedItem) -> tuple[int, int]:
    return entry.item.pk, entry.approval.reference.version


def _signed(entry: ApprovedItem) -> dict:
    return {**bound_of(entry.approval), **approval_block(entry.approval)}


def _csv_signatures(csv_name: str, approvals: list[dict]) -> bytes:
    """The CSV's signature file: one approval block per case (its rows are the CSV's rows)."""
    data = {"format": FORMAT, "csv": csv_name, "approvals": approvals}
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _safe_name(external_id: str) -> str:
    """A file name for the case: its id when that is already safe, else a cleaned id with a
    short hash of the real one, so `a/b` and `a_b` never overwrite each other's file."""
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in external_id).strip(".")
    if cleaned == external_id:
        return cleaned
    digest = hashlib.sha256(external_id.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned or 'item'}-{digest}"


__all__ = [
    "EXPORT_FORMATS",
    "approved_items",
    "NothingToExport",
    "files_export",
    "zip_export",
    "exported_record",
    "reference_document",
    "review_document",
]
