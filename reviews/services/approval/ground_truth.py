"""The one writer of reference versions and approvals, and the one reader of what was signed.

Every `Reference` (generated or ground truth) and every `Approval` is written here: by the
approve page and batch approval (`approval_sign`), by imports of generated rows
(`generated_add`) and of approved files signed by a trusted key (`approval_import`). Exports,
the API and `verify_approval` render an approval from these rows only (`approval_block`,
`bound_of`), never from the item's metadata or live resolutions.
"""

from __future__ import annotations

from django.db.models import Max
from django.utils import timezone

from reviews.formats.canonical import canonical_rows, rows_sha256
from reviews.formats.review_file import ReviewFile
from reviews.formats.signed import (
    bound_fields,
    citations_of,
    format_approved_at,
    payload_bytes,
    signed_fields,
)
from reviews.models import (
    Approval,
    Authority,
    EventKind,
    Item,
    ItemStatus,
    Reference,
    WebhookEvent,
)
from reviews.services.approval import signing
from reviews.services.approval.references import (
    current_ground_truth,
    latest_reference,
    next_version,
)
from reviews.services.events import event_record
from reviews.services.webhooks.emit import webhook_event_emit

STATEMENT = (
    "I have checked each decision against the evidence, and I approve these rows as the "
    "ground truth for this item."
)
IMPORTED_STATEMENT = "Imported from a file signed by a trusted key."


def generated_add(
    item: Item, rows, *, actor, source_name: str, reason: str = ""
) -> tuple[Reference, bool]:
    """A new generated version when the rows changed; (reference, created)."""
    rows = canonical_rows(rows)
    sha = rows_sha256(rows)
    previous = latest_reference(item, Authority.GENERATED)
    if previous is not None and previous.sha256 == sha:
        return previous, False
    reference = _reference_add(
        item,
        rows,
        authority=Authority.GENERATED,
        supersedes=previous,
        created_by=actor,
        reason=reason,
        source_name=source_name,
    )
    return reference, True


def _reference_add(item, rows, **fields) -> Reference:
    """The item's next reference version of canonical `rows`; `fields` say which authority,
    what it supersedes (the newest of that authority), who added it and why."""
    return Reference.objects.create(
        item=item, version=next_version(item), rows=rows, sha256=rows_sha256(rows), **fields
    )


def signed_version(reference: Reference | None) -> int | None:
    """The version number a ground-truth reference was signed under (None for none)."""
    if reference is None:
        return None
    approval = getattr(reference, "approval", None)
    if approval is not None and approval.signed:
        return approval.signed["version"]
    return reference.version


def _ground_truth(item, rows, *, actor, reason, source_name="") -> Reference:
    return _reference_add(
        item,
        rows,
        authority=Authority.GROUND_TRUTH,
        supersedes=current_ground_truth(item),
        derived_from=latest_reference(item, Authority.GENERATED),
        created_by=actor,
        reason=reason,
        source_name=source_name,
    )


def item_citations(item: Item, rows) -> list[dict]:
    """The evidence the item's review file cites for `rows` (none without a review file):
    what the approver saw beside each row, signed with it (formats/signed.py)."""
    original = item.metadata.get("review_file")
    if original is None:
        return []
    review = ReviewFile.model_validate(original)
    return citations_of(review, (row["path"] for row in rows))


def _next_sequence(item: Item) -> int:
    return (item.approvals.aggregate(n=Max("sequence"))["n"] or 0) + 1


def approval_sign(*, actor, item: Item, rows, reason: str) -> Approval:
    """Sign `rows` as the item's next ground truth with this site's key (caller holds the
    item's row lock and has checked every rule)."""
    rows = canonical_rows(rows)
    previous = current_ground_truth(item)
    reference = _ground_truth(item, rows, actor=actor, reason=reason)
    parent = reference.derived_from
    now = timezone.now()
    approver_name = actor.email or actor.get_username()
    superseded = signed_version(previous)
    bound = bound_fields(
        project=item.project.slug,
        case_id=item.external_id,
        # An imported approval keeps the version it was signed under, which may be ahead of
        # this site's numbering: the next signed version is always newer than it.
        version=max(reference.version, (superseded or 0) + 1),
        supersedes=superseded,
        parent_generated_sha256=parent.sha256 if parent else None,
        approved_by=approver_name,
        approved_at=now,
        citations=item_citations(item, rows),
    )
    signature = signing.sign(payload_bytes(bound, rows))
    approval = _approval_create(
        reference,
        signature,
        signed=bound,
        approver=actor,
        approved_at=now,
        statement=STATEMENT,
        correction_reason=reason,
    )
    _mark_approved(item, actor, reference, kind=EventKind.APPROVED, correction=bool(reason))
    return approval


def approval_import(
    *, actor, item: Item, rows, block: dict, signer: str, source_name: str
) -> Approval:
    """Record a format-2 or 3 approval signed elsewhere; `approval_policy` has already
    accepted it."""
    rows = canonical_rows(rows)
    reference = _ground_truth(
        item, rows, actor=actor, reason="imported approved file", source_name=source_name
    )
    approval = _approval_create(
        reference,
        signing.Signature(block["signature"], block["key_id"], block["algorithm"]),
        signed={name: block[name] for name in signed_fields(block)},
        imported_from=source_name,
        approved_at=block["approved_at"],
        statement=IMPORTED_STATEMENT,
    )
    _mark_approved(item, actor, reference, kind=EventKind.APPROVAL_IMPORTED, signer=signer)
    return approval


def _approval_create(
    reference: Reference, signature: signing.Signature, *, signed: dict, **fields
) -> Approval:
    """The item's next approval of `reference`: `signature` over the `signed` fields, whose
    approver it names; `fields` are what differs between signing here and importing."""
    return Approval.objects.create(
        item=reference.item,
        sequence=_next_sequence(reference.item),
        reference=reference,
        approver_name=signed["approved_by"],
        sha256=reference.sha256,
        signature=signature.signature,
        algorithm=signature.algorithm,
        key_id=signature.key_id,
        signed=signed,
        **fields,
    )


def _mark_approved(item: Item, actor, reference: Reference, *, kind: EventKind, **data) -> None:
    item.status = ItemStatus.APPROVED
    item.save(update_fields=["status", "updated_at"])
    event_record(
        item=item,
        actor=actor,
        kind=kind,
        data={"version": reference.version, "sha256": reference.sha256, **data},
    )
    webhook_event_emit(
        item.project,
        WebhookEvent.ITEM_APPROVED,
        {
            "item": item.external_id,
            "version": reference.version,
            "sha256": reference.sha256,
            "approved_by": actor.get_username() if actor else "",
            "how": str(kind),
        },
    )


def bound_of(approval: Approval) -> dict:
    """The signed fields of an approval (a format-1 approval: the same fields, unsigned)."""
    if approval.signed:
        return dict(approval.signed)
    reference = approval.reference
    return {
        "case_id": approval.item.external_id,
        "version": reference.version,
        "supersedes": reference.supersedes.version if reference.supersedes else None,
        "authority": "ground_truth",
        "parent_generated_sha256": (
            reference.derived_from.sha256 if reference.derived_from else None
        ),
        "approved_by": approval.approver_name,
        "approved_at": format_approved_at(approval.approved_at),
    }


def approval_block(approval: Approval) -> dict:
    """The `approval` object every export carries (format 2: the bound fields too)."""
    block = {
        "sha256": approval.sha256,
        "signature": approval.signature,
        "algorithm": approval.algorithm,
        "key_id": approval.key_id,
    }
    if approval.signed:
        block = {**approval.signed, **block}
    return block
