"""Exporting approved ground truth: review files (§2), reference JSON and CSV (§3).

Only approved items, their CURRENT ground-truth version (older versions stay readable in the
item's history; each export names its version and the one it supersedes). Output is
deterministic: items by external id, rows by path, canonical values.
"""

from __future__ import annotations

import io
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
from reviews.models import Approval, Decision, Event, Item, QuestionKind
from reviews.services.resolution import current_resolution

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


def _approval_block(approval: Approval) -> dict:
    return {
        "sha256": approval.sha256,
        "signature": approval.signature,
        "algorithm": approval.algorithm,
        "key_id": approval.key_id,
    }


def reference_document(entry: ApprovedItem) -> ApprovedReference:
    reference = entry.approval.reference
    parent = reference.derived_from
    return ApprovedReference(
        case_id=entry.item.external_id,
        version=reference.version,
        supersedes=reference.supersedes.version if reference.supersedes else None,
        parent_generated_sha256=parent.sha256 if parent else None,
        rows=[ReferenceRow(**row) for row in reference.rows],
        approved_by=entry.approval.approver_name,
        approved_at=entry.approval.approved_at,
        approval=_approval_block(entry.approval),
    )


def review_document(entry: ApprovedItem) -> ReviewFile | None:
    """The item's review file with its decisions and approval; None for non-review items."""
    original = entry.item.metadata.get("review_file")
    if original is None:
        return None
    decisions = {}
    for question in entry.item.questions.filter(kind=QuestionKind.FIELD):
        resolution = current_resolution(question)
        if resolution is not None:
            decisions[question.key] = resolution
    data = dict(original)
    data["review_items"] = []
    for disputed in original.get("review_items", []):
        resolution = decisions.get(disputed["path"])
        decided = dict(disputed)
        if resolution is not None and resolution.decision == Decision.SET:
            decided.update(decision="set", value=resolution.value)
        else:
            decided.update(decision="omit", value=None)
        data["review_items"].append(decided)
    data.update(
        status="approved",
        approved_by=entry.approval.approver_name,
        approved_at=entry.approval.approved_at.isoformat(),
        approval=_approval_block(entry.approval),
        ground_truth_version=entry.approval.reference.version,
    )
    return ReviewFile.model_validate(data)


def export_files(*, actor, project, format: str) -> dict[str, bytes]:
    """{file name: content} for the chosen format; records an `exported` event per item."""
    if format not in EXPORT_FORMATS:
        raise ValueError(f"unknown export format {format!r}; choose one of {EXPORT_FORMATS}")
    entries = list(approved_items(project))
    files: dict[str, bytes] = {}
    if format == "csv":
        buffer = io.StringIO()
        write_reference_csv(buffer, reference_csv_rows(reference_document(e) for e in entries))
        files[f"{project.slug}-ground-truth.csv"] = buffer.getvalue().encode("utf-8")
    for entry in entries if format != "csv" else []:
        name = _safe_name(entry.item.external_id)
        if format == "reference":
            files[f"{name}.reference.json"] = dump_reference_json(reference_document(entry))
        else:
            review = review_document(entry)
            if review is not None:
                files[f"{name}.review.json"] = dump_review_file(review)
    Event.objects.bulk_create(
        Event(
            item=e.item,
            actor=actor,
            kind="exported",
            data={"format": format, "version": e.approval.reference.version},
        )
        for e in entries
    )
    return files


def _safe_name(external_id: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "-_." else "_" for c in external_id).strip(".")
    return cleaned or "item"


__all__ = [
    "EXPORT_FORMATS",
    "approved_items",
    "export_files",
    "reference_document",
    "review_document",
]
