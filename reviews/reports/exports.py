"""Exporting approved ground truth: review files (§2), reference JSON and CSV (§3).

Only approved items, their CURRENT ground-truth version (older versions stay readable in the
item's history; each export names its version and the one it supersedes). Output is
deterministic: items by external id, rows by path, canonical values.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass

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
from reviews.services.approval.ground_truth import approval_block, bound_of
from reviews.services.events import events_record

EXPORT_FORMATS = ("review", "reference", "csv")


@dataclass(frozen=True)
class ApprovedItem:
    item: Item
    approval: Approval


def approved_items(project) -> Iterator[ApprovedItem]:
    """Every item whose current ground truth came through an approval, by external id."""
    approvals = (
        Approval.objects.filter(item__project=project, reference__superseded_by__isnull=True)
        .select_related("item", "reference__supersedes", "reference__derived_from", "approver")
        .order_by("item__external_id")
    )
    for approval in approvals:
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


def files_export(*, actor, project, format: str) -> dict[str, bytes]:
    """{file name: content} for the chosen format; records an `exported` event per item.
    Refused (NothingToExport) when it would be empty: an empty export verifies nothing."""
    if format not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {format!r}; choose one of {EXPORT_FORMATS}")
    entries = list(approved_items(project))
    if not entries:
        raise NothingToExport(
            f"nothing to export: no item of {project.slug} is approved yet (an approver signs "
            "each item on its Approve page)"
        )
    files: dict[str, bytes] = {}
    if format == "csv":
        buffer = io.StringIO()
        write_reference_csv(buffer, reference_csv_rows(reference_document(e) for e in entries))
        name = f"{project.slug}-ground-truth.csv"
        files[name] = buffer.getvalue().encode("utf-8")
        files[name + SIGNATURES_SUFFIX] = _csv_signatures(name, entries)
    for entry in entries if format != "csv" else []:
        name = _safe_name(entry.item.external_id)
        if format == "reference":
            files[f"{name}.reference.json"] = dump_reference_json(reference_document(entry))
        else:
            review = review_document(entry)
            if review is not None:
                files[f"{name}.review.json"] = dump_review_file(review)
    if not files:
        raise NothingToExport(
            f"nothing to export as review files: none of the {len(entries)} approved items "
            "came from a review file; export references or CSV"
        )
    events_record(
        kind=EventKind.EXPORTED,
        actor=actor,
        lines=(
            (e.item, {"format": format, "version": e.approval.reference.version}) for e in entries
        ),
    )
    return files


def _csv_signatures(csv_name: str, entries: list[ApprovedItem]) -> bytes:
    """The CSV's signature file: one approval block per case (its rows are the CSV's rows)."""
    approvals = [{**bound_of(e.approval), **approval_block(e.approval)} for e in entries]
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
    "reference_document",
    "review_document",
]
