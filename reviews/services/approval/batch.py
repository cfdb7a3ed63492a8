"""Approving many resolved items with one password: each still gets its own signed approval
and timeline event, and every rule (separation of duties included) applies per item.

Corrections are not batched: correcting approved ground truth needs its own reason, on the
item's own approve page. Refused items are listed with their reasons; the others are approved.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from reviews.models import Approval, Authority, Item, ItemStatus, Reference
from reviews.services.approval.approve import (
    ApprovalRefused,
    DiffRow,
    approval_blockers,
    approval_diff,
    approval_record_locked,
    diff_fingerprint,
    plain_password_check,
)
from reviews.services.approval.references import current_ground_truth


@dataclass(frozen=True)
class BatchLine:
    item: Item
    changes: dict[str, int]  # kept / changed / omitted / added -> paths
    refused: str = ""
    shown: str = ""  # the diff's fingerprint: signing refuses the item once it changed
    # The rows that differ from the generated reference, with both values: the approver
    # confirms having checked each decision, so the summary shows every one of them.
    differences: tuple[DiffRow, ...] = ()


@dataclass
class BatchResult:
    approved: list[Approval] = field(default_factory=list)
    refused: list[tuple[Item, str]] = field(default_factory=list)


def _refusal(item: Item, actor) -> str:
    blockers = approval_blockers(item, actor)
    if blockers:
        return " ".join(blockers)
    if current_ground_truth(item) is not None:
        return "This corrects approved ground truth: approve it on its own page, with a reason."
    return ""


def batch_preview(items: Iterable[Item], actor) -> list[BatchLine]:
    """Per item: the diff summary, or why it cannot be approved in this batch."""
    lines = []
    for item in items:
        diff = approval_diff(item)
        changes = Counter(row.change for row in diff)
        differences = tuple(row for row in diff if row.change != "kept")
        lines.append(
            BatchLine(
                item, dict(changes), _refusal(item, actor), diff_fingerprint(diff), differences
            )
        )
    return lines


def approval_batch_record(
    *,
    actor,
    items: Iterable[Item],
    password: str,
    confirmed: bool,
    password_check: Callable[[str], None] | None = None,
    shown: dict[int, str] | None = None,
) -> BatchResult:
    """One password for the batch; one signed approval per approvable item. `shown`: item pk
    -> the fingerprint of the diff the preview showed (the page passes it; "" refuses)."""
    if not confirmed:
        raise ApprovalRefused("Confirm the statement to approve.")
    result = BatchResult()
    approvable = []
    for item in items:
        reason = _refusal(item, actor)
        if reason:
            result.refused.append((item, reason))
        else:
            approvable.append(item)
    if not approvable:
        raise ApprovalRefused("None of the selected items can be approved now.")
    (password_check or plain_password_check(actor))(password)
    for item in approvable:
        try:
            with transaction.atomic():
                seen = None if shown is None else shown.get(item.pk, "")
                approved = approval_record_locked(actor=actor, item=item, reason="", shown=seen)
                result.approved.append(approved)
        except ApprovalRefused as refused:  # changed since the preview
            result.refused.append((item, str(refused)))
        except IntegrityError:
            result.refused.append((item, "Someone else approved this item at the same moment."))
    return result


def approvable(items):
    """Of `items`, those resolved with a generated reference to approve (any project's, or one
    per outer project row when `items` filters on an OuterRef: My queue counts them so)."""
    generated = Reference.objects.filter(item=OuterRef("pk"), authority=Authority.GENERATED)
    return items.filter(status=ItemStatus.RESOLVED).filter(Exists(generated))


def approval_waiting(project):
    """Resolved items with a generated reference to approve (the approval queue), oldest first."""
    return approvable(project.items.all()).order_by("updated_at", "id")
