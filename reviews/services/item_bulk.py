"""Reviews' bulk actions on the item list (reviews/item_hooks.py): re-open, assign to a rater,
add to a batch. Each takes the chosen item ids (never a request) and returns what it did, in a
sentence; each runs in one transaction, so a refusal changes nothing. Re-open, as the list's
background job, commits in steps instead (`items_reopen_asked`); assign and add to batch stay
one transaction as a job too: assign makes its batch and every place together (a second run
after a crash would make a second batch, not finish the first), and a batch's places are
worked out over all the chosen items at once, under the items' row locks."""

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
from reviews.services.imports.staging import in_short_transactions, staged_writes
from reviews.services.items import items_reopen
from reviews.services.webhooks.emit import webhook_events_emit

SETTLED = (QuestionStatus.RESOLVED, QuestionStatus.ADJUDICATION)
STEP = 1000  # items re-opened per step of the background job


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def items_reopen_asked(*, actor, project, item_ids, progress=None) -> str:
    """The items' settled questions asked again (open, the reason shown to raters), the items
    open and back with their raters (`items_reopen`). Approved items are left as they are:
    correcting signed ground truth starts with a decision on the item's own page.

    One transaction; or, as the item list's background job (`progress` given), STEP items per
    transaction, on SQLite in short ones with a pause between (raters' saves go between, as
    during an import). Running it again after a crash skips what is done: a question asked
    again is no longer settled, and the list's filters are read again."""
    item_ids = list(item_ids)
    counts = {"reopened": 0, "asked": 0, "approved": 0, "chosen": 0}

    def write(start: int) -> None:
        for key, n in _reopen(actor, project, item_ids[start : start + STEP]).items():
            counts[key] += n
        if progress is not None:
            progress(min(start + STEP, len(item_ids)), len(item_ids))

    if progress is None:
        with transaction.atomic():
            for start in range(0, len(item_ids), STEP):
                write(start)
    elif staged_writes():
        in_short_transactions(range(0, len(item_ids), STEP), write)
    else:
        for start in range(0, len(item_ids), STEP):
            with transaction.atomic():
                write(start)
    return _reopened_said(**counts)


def _reopen(actor, project, item_ids: list[int]) -> dict[str, int]:
    items = Item.objects.filter(project=project, pk__in=item_ids)
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
    return {"reopened": len(reopened), "asked": len(asked), "approved": approved,
            "chosen": len(chosen)}  # fmt: skip


def _reopened_said(*, reopened: int, asked: int, approved: int, chosen: int) -> str:
    said = f"Re-opened {_plural(reopened, 'item')} ({_plural(asked, 'question')} asked again)"
    if approved:
        said += f"; {_plural(approved, 'approved item')} left as they are (correct them on their own pages)"
    left = chosen - reopened
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
