"""Item N of M: where an item sits among the rater's items, and its neighbours."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, IntegerField, Q, Subquery
from django.db.models.functions import Coalesce

from reviews.models import Assignment, AssignmentStatus
from reviews.services.assignment.queue import available_items

# Outside batches the trail counts the items still waiting up to here, then says "+". Each one
# counted is checked for a free place (a subquery per item): 1,000 of them were 8.7 ms of the
# review page at 100k items on PostgreSQL, a third of it; "Item 3 of 103+" tells a rater as
# much. The queue page keeps its own, larger bound (POOL_COUNT_LIMIT).
TRAIL_COUNT_LIMIT = 100


@dataclass(frozen=True)
class Trail:
    """Where an item sits among the rater's items: "item 3 of 9", and its neighbours."""

    position: int
    total: int  # in the batch; outside batches: the rater's items so far and those waiting
    total_more: bool  # outside batches, more are waiting than are counted (TRAIL_COUNT_LIMIT)
    batch_name: str
    previous_item_id: int | None
    next_item_id: int | None


def item_trail(assignment: Assignment) -> Trail:
    """The rater's items in the same batch (outside batches: the items they claimed, then the
    ones still waiting for them), in the order they were given. Previous and next are the
    neighbours the rater can open again: submitted items (read-only, or revised until settled)
    and the one in progress; items not opened yet come through "Submit & next". One query at
    any size (subqueries), and outside batches one bounded count of the waiting items."""
    row = _place(assignment)
    batch = assignment.batch if assignment.batch_id else None
    waiting = 0 if batch is not None else _waiting(assignment)
    return Trail(
        position=row["earlier"] + 1,
        total=row["others"] + 1 + min(waiting, TRAIL_COUNT_LIMIT),
        total_more=waiting > TRAIL_COUNT_LIMIT,
        batch_name=batch.name if batch else "",
        previous_item_id=row["previous_item"],
        next_item_id=row["next_item"],
    )


def _place(assignment: Assignment) -> dict:
    """In one query: how many other items the rater has here (`others`), how many of them came
    before this one (`earlier`), and the openable items just before and after it."""
    mine = (
        Assignment.objects.filter(
            rater_id=assignment.rater_id,
            item__project_id=assignment.item.project_id,
            batch_id=assignment.batch_id,
        )
        .exclude(pk=assignment.pk)
        .exclude(status__in=(AssignmentStatus.EXPIRED, AssignmentStatus.SKIPPED))
        .order_by()
    )
    before = Q(claimed_at__lt=assignment.claimed_at) | Q(
        claimed_at=assignment.claimed_at, id__lt=assignment.id
    )
    openable = mine.filter(status__in=(AssignmentStatus.ACTIVE, AssignmentStatus.SUBMITTED))

    def count(rows):
        return Subquery(
            rows.values("rater_id").annotate(n=Count("id")).values("n")[:1],
            output_field=IntegerField(),
        )

    return (
        Assignment.objects.filter(pk=assignment.pk)
        .annotate(
            others=Coalesce(count(mine), 0),
            earlier=Coalesce(count(mine.filter(before)), 0),
            previous_item=Subquery(
                openable.filter(before).order_by("-claimed_at", "-id").values("item_id")[:1]
            ),
            next_item=Subquery(
                openable.exclude(before).order_by("claimed_at", "id").values("item_id")[:1]
            ),
        )
        .values("others", "earlier", "previous_item", "next_item")
        .get()
    )


def _waiting(assignment: Assignment) -> int:
    """Outside batches (the pull queue), how many items still wait for this rater, counted up
    to TRAIL_COUNT_LIMIT + 1 (one bounded count)."""
    project = assignment.item.project
    pool = available_items(rater=assignment.rater_id, project=project).order_by()
    return pool[: TRAIL_COUNT_LIMIT + 1].count()
