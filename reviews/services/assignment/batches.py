"""Pre-assigning items to named raters in batches, and how each rater is getting on.

The pull queue (raters claim the next item) is the default; a batch pins chosen items to chosen
raters, e.g. a seeded random sample with overlap 3 for calibration. Pre-assigned places count
against the item's overlap like claims do, so the two never over-assign an item. With a gold
share, each rater's batch gets that share of gold items mixed in, blind (`gold_queue`).
"""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from reviews.models import (
    HOLDING_STATUSES,
    Assignment,
    AssignmentBatch,
    AssignmentStatus,
    EventKind,
    Item,
    ItemStatus,
    Membership,
    Role,
)
from reviews.services.assignment.gold import gold_mixed_into_batch
from reviews.services.assignment.queue import holding_count
from reviews.services.events import events_record

SELECTIONS = ("slice", "count", "sample")
CHOSEN = "chosen"  # the item list's ticked or filtered items (item_ids)
MAX_COUNT = 2**31 - 1  # more items than any batch holds


def _placeable(project, raters):
    """Open items where one of `raters` can take a free place: the item has fewer holders than
    its overlap and at least one of them has never held, answered or skipped it. An item no batch
    rater can take is left out (it stays in the pull queue), so no batch lists an item that
    none of its raters will ever see."""
    now = timezone.now()
    taken_by_all = (
        Assignment.objects.filter(item=OuterRef("pk"), rater__in=raters)
        .exclude(status=AssignmentStatus.EXPIRED)
        .values("item")
        .annotate(n=Count("rater", distinct=True))
        .values("n")[:1]
    )
    return (
        Item.objects.filter(project=project, status=ItemStatus.OPEN)
        .alias(
            holding=holding_count(now),
            taken=Coalesce(Subquery(taken_by_all, output_field=IntegerField()), Value(0)),
        )
        .filter(holding__lt=Coalesce("overlap", Value(project.overlap)), taken__lt=len(raters))
        .order_by("id")
    )


def _chosen_items(
    project, raters, *, selection: str, slice_name: str, count: int, seed, item_ids=()
):
    open_items = _placeable(project, raters)
    if selection == CHOSEN:  # those of the chosen items the raters can take
        return list(open_items.filter(pk__in=list(item_ids)))
    # A count past every item takes them all: never a LIMIT past the database's 64 bits.
    count = min(count, MAX_COUNT)
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
    rng: random.Random | None = None,
    item_ids=(),
) -> AssignmentBatch:
    """Assign the chosen open items to `raters`, each item to `overlap` of them, round robin.

    The overlap is the number of answers an item needs before it resolves, so it is set only on
    items nobody was assigned yet: an item already claimed or answered keeps the overlap its
    raters were assigned under (lowering it would strand the submitted answers, which were
    counted against the old number and never re-checked), and the batch fills its free places.
    Gold items are mixed in at random places (`rng`: seeded by a sample's seed).
    """
    _batch_check(project, raters, selection=selection, overlap=overlap)
    if selection == "sample" and seed is None:
        seed = random.SystemRandom().randrange(2**31)  # recorded, so the draw can be repeated
    items = _chosen_items(
        project,
        raters,
        selection=selection,
        slice_name=slice_name,
        count=count,
        seed=seed,
        item_ids=item_ids,
    )
    items = _locked(items)
    batch = AssignmentBatch.objects.create(
        project=project,
        name=name.strip() or f"Batch of {len(items)}",
        overlap=overlap,
        created_by=actor,
        selection={"how": selection, "slice": slice_name, "count": count, "seed": seed},
    )
    created, kept = _places(items, sorted(raters, key=lambda r: r.pk), batch, overlap)
    if rng is None:
        rng = random.Random(f"gold {seed}") if seed is not None else random.SystemRandom()
    created = gold_mixed_into_batch(project=project, batch=batch, assigned=created, rng=rng)
    _note(batch, kept=kept if overlap is not None else [], gold=sum(p.gold for p in created))
    _places_save(actor, batch, created)
    return batch


@transaction.atomic
def batch_extend(*, actor, batch: AssignmentBatch, item_ids) -> int:
    """The chosen open items added to `batch`: places for its raters under its overlap, as
    `batch_create` makes them (gold is mixed in only when a batch is made). Items none of its
    raters can take are left out. Returns how many items got places."""
    rater_ids = batch.assignments.filter(gold=False).values("rater_id")
    raters = sorted(
        (m.user for m in Membership.objects.filter(
            project=batch.project, role=Role.RATER, user_id__in=rater_ids
        ).select_related("user")),
        key=lambda r: r.pk,
    )  # fmt: skip
    if not raters:
        raise ValidationError(f"{batch.name} has no raters left to give the items to.")
    items = _chosen_items(
        batch.project, raters, selection=CHOSEN, slice_name="", count=0, seed=None,
        item_ids=item_ids,
    )  # fmt: skip
    created, _ = _places(_locked(items), raters, batch, batch.overlap)
    _places_save(actor, batch, created)
    return len({place.item_id for place in created})


def _locked(items) -> list[Item]:
    """Lock the chosen items like a claim does, so a claim running now cannot take a place
    this batch is about to fill (the holding count in `_assign` is read under the lock)."""
    return list(
        Item.objects.select_for_update(no_key=connection.features.has_select_for_no_key_update)
        .filter(pk__in=[item.pk for item in items])
        .order_by("id")
    )


def _places_save(actor, batch, created) -> None:
    try:  # in order: claimed_at orders each rater's places
        Assignment.objects.bulk_create(created)
    except IntegrityError:  # the rater claimed a gold item (not locked: it is not open) meanwhile
        raise ValidationError(
            "A rater claimed one of these items while the batch was being made; nothing was "
            "assigned. Create the batch again."
        ) from None
    events_record(kind=EventKind.ASSIGNED, actor=actor, lines=_assigned_lines(batch, created))


def _note(batch, *, kept: list[str], gold: int) -> None:
    """Record on the batch the items that kept their overlap and how many gold places it has."""
    noted = {**({"kept_overlap": kept} if kept else {}), **({"gold": gold} if gold else {})}
    if noted:
        batch.selection = {**batch.selection, **noted}
        batch.save(update_fields=["selection"])


def _batch_check(project, raters, *, selection: str, overlap: int | None) -> None:
    if selection not in (*SELECTIONS, CHOSEN):
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
    if overlap is not None and overlap > len(raters):
        raise ValidationError(
            f"Overlap {overlap} needs at least {overlap} raters in the batch ({len(raters)} chosen)."
        )


def _places(items, raters, batch, overlap) -> tuple[list[Assignment], list[str]]:
    """The batch's places on `items`, and the external ids of the items already started (which
    keep their overlap); items nobody started take the batch's overlap."""
    started = set(
        Assignment.objects.filter(item__in=items)
        .exclude(status__in=(AssignmentStatus.EXPIRED, AssignmentStatus.SKIPPED))
        .values_list("item_id", flat=True)
    )
    created = []
    for index, item in enumerate(items):
        if overlap is not None and item.overlap != overlap and item.pk not in started:
            item.overlap = overlap
            item.save(update_fields=["overlap", "updated_at"])
        created += _assign(item, raters, start=index, batch=batch, limit=item.effective_overlap)
    return created, [item.external_id for item in items if item.pk in started]


def _assigned_lines(batch, created):
    """The timeline's line per place (admins read it; raters never see an item's timeline)."""
    for place in created:
        how = "gold" if place.gold else "batch"
        yield place.item_id, {"how": how, "batch": batch.name, "rater": place.rater.get_username()}


def _assign(item, raters, *, start: int, batch, limit: int) -> list[Assignment]:
    """Fill the item's free places from `raters` in rotation, passing over anyone who holds,
    answered or skipped it (as the pull queue does)."""
    present = Assignment.objects.filter(item=item).exclude(status=AssignmentStatus.EXPIRED)
    holding = present.filter(status__in=HOLDING_STATUSES).count()
    seen = set(present.values_list("rater_id", flat=True))
    free = limit - holding
    rotation = raters[start % len(raters) :] + raters[: start % len(raters)]
    chosen = [r for r in rotation if r.pk not in seen][: max(0, free)]
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
