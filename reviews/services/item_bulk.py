"""Reviews' bulk actions on the item list (reviews/item_hooks.py): re-open, assign to a rater,
add to a batch. Each takes the chosen item ids (never a request) and returns what it did, in a
sentence; each runs in one transaction, so a refusal changes nothing."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from reviews.models import (
    EventKind,
    Item,
    ItemStatus,
    Question,
    QuestionReason,
    QuestionStatus,
    WebhookEvent,
)
from reviews.services.assignment.batches import CHOSEN, batch_create, batch_extend
from reviews.services.events import events_record
from reviews.services.items import items_reopen
from reviews.services.webhooks.emit import webhook_events_emit

SETTLED = (QuestionStatus.RESOLVED, QuestionStatus.ADJUDICATION)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@transaction.atomic
def items_reopen_asked(*, actor, project, item_ids) -> str:
    """The items' settled questions asked again (open, the reason shown to raters), the items
    open and back with their raters (`items_reopen`). Approved items are left as they are:
    correcting signed ground truth starts with a decision on the item's own page."""
    items = Item.objects.filter(project=project, pk__in=list(item_ids))
    approved = items.filter(status=ItemStatus.APPROVED).count()
    chosen = list(items.exclude(status=ItemStatus.APPROVED).values_list("pk", flat=True))
    questions = Question.objects.filter(item_id__in=chosen, status__in=SETTLED)
    asked = list(questions.values_list("item_id", "key"))
    questions.update(status=QuestionStatus.OPEN, reason=QuestionReason.REOPENED)
    reopened = sorted({item_id for item_id, _ in asked})
    items_reopen(reopened)
    events_record(
        kind=EventKind.REOPENED,
        actor=actor,
        lines=(
            (item_id, {"questions": [key for i, key in asked if i == item_id]})
            for item_id in reopened
        ),
    )
    Item.objects.filter(pk__in=reopened).update(updated_at=timezone.now())
    webhook_events_emit(
        project,
        WebhookEvent.ITEM_REOPENED,
        [
            {
                "item": external_id,
                "questions": [key for i, key in asked if i == item_id],
                "reopened_by": actor.get_username(),
            }
            for item_id, external_id in items.filter(pk__in=reopened).values_list(
                "pk", "external_id"
            )
        ],
    )
    said = f"Re-opened {_plural(len(reopened), 'item')} ({_plural(len(asked), 'question')} asked again)"
    if approved:
        said += f"; {_plural(approved, 'approved item')} left as they are (correct them on their own pages)"
    left = len(chosen) - len(reopened)
    if left:
        said += f"; {_plural(left, 'item')} had nothing settled to ask again"
    return said + "."


def items_assign(*, actor, project, item_ids, rater) -> str:
    """The open items `rater` can take, pre-assigned to them in a batch of their own."""
    batch = batch_create(
        actor=actor,
        project=project,
        name=f"Assigned to {rater.get_username()}",
        raters=[rater],
        selection=CHOSEN,
        item_ids=item_ids,
    )
    given = batch.assignments.values("item_id").distinct().count()
    return _placed(given, len(item_ids), f"assigned to {rater.get_username()} (batch {batch.name})")


def items_add_to_batch(*, actor, project, item_ids, batch) -> str:
    given = batch_extend(actor=actor, batch=batch, item_ids=item_ids)
    return _placed(given, len(item_ids), f"added to {batch.name}")


def _placed(given: int, chosen: int, what: str) -> str:
    said = f"{_plural(given, 'item')} {what}"
    if chosen > given:
        said += (
            f"; {_plural(chosen - given, 'item')} left out (not open, or every place taken, or "
            "already with these raters)"
        )
    return said + "."
