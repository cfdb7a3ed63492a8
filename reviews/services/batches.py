"""Pre-assigning items to named raters in batches, and how each rater is getting on.

The pull queue (raters claim the next item) is the default; a batch pins chosen items to chosen
raters, e.g. a seeded random sample with overlap 3 for calibration. Pre-assigned places count
against the item's overlap like claims do, so the two never over-assign an item.
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import connection, transaction

from reviews.models import (
    HOLDING_STATUSES,
    Assignment,
    AssignmentBatch,
    AssignmentStatus,
    Event,
    Item,
    ItemStatus,
    Membership,
    Role,
)

SELECTIONS = ("slice", "count", "sample")


def _chosen_items(project, *, selection: str, slice_name: str, count: int, seed: int | None):
    open_items = Item.objects.filter(project=project, status=ItemStatus.OPEN).order_by("id")
    if selection == "slice":
        if not slice_name:
            raise ValidationError("Choose a slice.")
        return list(
            open_items.filter(slices__name=slice_name)[:count]
            if count
            else open_items.filter(slices__name=slice_name)
        )
    if count < 1:
        raise ValidationError("Give how many items to assign.")
    if selection == "count":
        return list(open_items[:count])
    ids = list(open_items.values_list("id", flat=True))
    picked = sorted(random.Random(seed).sample(ids, min(count, len(ids))))
    return list(Item.objects.filter(id__in=picked).order_by("id"))


@transaction.atomic
def batch_create(
    *,
    actor,
    project,
    name: str,
    raters: list,
    selection: str,
    slice_name: str = "",
    count: int = 0,
    seed: int | None = None,
    overlap: int | None = None,
) -> AssignmentBatch:
    """Assign the chosen open items to `raters`, each item to `overlap` of them, round robin."""
    if selection not in SELECTIONS:
        raise ValidationError(f"Choose how to select items: {', '.join(SELECTIONS)}.")
    rater_ids = set(
        Membership.objects.filter(project=project, role=Role.RATER, user__in=raters).values_list(
            "user_id", flat=True
        )
    )
    if not raters or rater_ids != {r.pk for r in raters}:
        raise ValidationError("Every chosen person must be a rater in this project.")
    if overlap is not None and overlap < 1:
        raise ValidationError("Overlap must be at least 1.")
    if selection == "sample" and seed is None:
        seed = random.SystemRandom().randrange(2**31)  # recorded, so the draw can be repeated
    items = _chosen_items(
        project, selection=selection, slice_name=slice_name, count=count, seed=seed
    )
    # Lock the chosen items like a claim does, so a claim running now cannot take a place this
    # batch is about to fill (the holding count in `_assign` is read under the lock).
    items = list(
        Item.objects.select_for_update(no_key=connection.features.has_select_for_no_key_update)
        .filter(pk__in=[item.pk for item in items])
        .order_by("id")
    )
    batch = AssignmentBatch.objects.create(
        project=project,
        name=name.strip() or f"Batch of {len(items)}",
        overlap=overlap,
        created_by=actor,
        selection={"how": selection, "slice": slice_name, "count": count, "seed": seed},
    )
    ordered = sorted(raters, key=lambda r: r.pk)
    created = []
    for index, item in enumerate(items):
        if overlap is not None and item.overlap != overlap:
            item.overlap = overlap
            item.save(update_fields=["overlap", "updated_at"])
        created += _assign(
            item, ordered, start=index, batch=batch, limit=item.overlap or project.overlap
        )
    Assignment.objects.bulk_create(created)
    Event.objects.bulk_create(
        Event(
            item_id=a.item_id,
            actor=actor,
            kind="assigned",
            data={"how": "batch", "batch": batch.name, "rater": a.rater.get_username()},
        )
        for a in created
    )
    return batch


def _assign(item, raters, *, start: int, batch, limit: int) -> list[Assignment]:
    holding = set(
        Assignment.objects.filter(item=item, status__in=HOLDING_STATUSES).values_list(
            "rater_id", flat=True
        )
    )
    free = limit - len(holding)
    rotation = raters[start % len(raters) :] + raters[: start % len(raters)]
    chosen = [r for r in rotation if r.pk not in holding][: max(0, free)]
    return [
        Assignment(item=item, rater=r, batch=batch, status=AssignmentStatus.ASSIGNED)
        for r in chosen
    ]


@dataclass(frozen=True)
class RaterProgress:
    rater: object
    assigned: int
    in_progress: int
    done: int
    skips: int
    median_seconds: float | None


def rater_progress(project) -> list[RaterProgress]:
    """Per rater: waiting, in progress, done, skips, and median seconds per finished item."""
    raters = [
        m.user
        for m in Membership.objects.filter(project=project, role=Role.RATER)
        .select_related("user")
        .order_by("user__username")
    ]
    rows = Assignment.objects.filter(item__project=project).values_list(
        "rater_id", "status", "opened_at", "submitted_at"
    )
    tallies: dict[int, dict] = {
        r.pk: {
            "durations": [],
            AssignmentStatus.ASSIGNED: 0,
            AssignmentStatus.ACTIVE: 0,
            AssignmentStatus.SUBMITTED: 0,
            AssignmentStatus.SKIPPED: 0,
        }
        for r in raters
    }
    for rater_id, status, opened, submitted in rows:
        tally = tallies.get(rater_id)
        if tally is None or status not in tally:
            continue
        tally[status] += 1
        if status == AssignmentStatus.SUBMITTED and opened and submitted:
            tally["durations"].append((submitted - opened).total_seconds())
    return [
        RaterProgress(
            rater=r,
            assigned=tallies[r.pk][AssignmentStatus.ASSIGNED],
            in_progress=tallies[r.pk][AssignmentStatus.ACTIVE],
            done=tallies[r.pk][AssignmentStatus.SUBMITTED],
            skips=tallies[r.pk][AssignmentStatus.SKIPPED],
            median_seconds=statistics.median(tallies[r.pk]["durations"])
            if tallies[r.pk]["durations"]
            else None,
        )
        for r in raters
    ]
