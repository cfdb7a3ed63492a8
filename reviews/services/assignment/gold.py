"""Gold items served blind, in the pull queue and in pre-assigned batches.

A gold item is already settled (its known answer is snapshotted in its latest `GoldMark`).
With the project's `gold_share` above 0, `assignment_claim_next` serves one with that probability,
and `batch_create` mixes that share into each rater's batch: an ordinary `Assignment` with
`gold=True` (only the server knows; the rater's page, URL and markup are those of any item).
Its answers are scored against the known answer (`rater_accuracy`) and never take part in the
item's resolution or agreement figures.
"""

from __future__ import annotations

import math
from collections import defaultdict

from django.db import IntegrityError, transaction

from reviews.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ItemStatus,
    Membership,
    Project,
    Role,
)
from reviews.services.assignment.opening import assignment_open
from reviews.services.rating.quality import gold_items


def gold_unseen(*, rater, gold) -> list[int]:
    """The gold items (pks in `gold`) the rater has never held, in pk order."""
    held = Assignment.objects.filter(rater=rater, item_id__in=gold).exclude(
        status=AssignmentStatus.EXPIRED
    )
    unseen = (
        Item.objects.filter(pk__in=gold)
        .exclude(status=ItemStatus.OPEN)  # an item reopened by new questions is ordinary again
        .exclude(pk__in=held.values("item_id"))
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    return list(unseen)


def overseers(project: Project) -> set[int]:
    """Who may open the project's item pages (admins, adjudicators, approvers): never served
    gold, since a gold item is not open and its page shows them the known answer."""
    roles = (Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER)
    memberships = Membership.objects.filter(project=project, role__in=roles)
    return set(memberships.values_list("user_id", flat=True))


def gold_claim(*, rater, project: Project, now, lease_until, rng) -> Assignment | None:
    """A new claim on a gold item the rater has never held, picked at random; or None."""
    gold = gold_items(project) if rater.pk not in overseers(project) else {}
    candidates = gold_unseen(rater=rater, gold=gold) if gold else []
    if not candidates:
        return None
    item = Item.objects.get(pk=rng.choice(candidates))
    try:
        with transaction.atomic():  # the same rater claiming twice at once: one claim wins
            return assignment_open(
                item=item, rater=rater, now=now, lease_until=lease_until, gold=True
            )
    except IntegrityError:
        return None


def gold_mixed_into_batch(
    *, project: Project, batch, assigned: list[Assignment], rng
) -> list[Assignment]:
    """A batch's new `assigned` places with gold items mixed in, blind: a rater with n places
    gets n * s / (1 - s) gold items they never held, rounded half up (so about s of their batch
    is gold, s the project's gold share; all of them at s = 1), each at a random place in their
    order.
    A rater with no ordinary place gets none, as the pull queue serves gold only while ordinary
    items wait. Returned in the order to insert: the queue serves a rater's places in it."""
    share = project.gold_share
    gold = gold_items(project) if share and assigned else {}
    if not gold:
        return assigned
    by_rater: dict[int, list[Assignment]] = defaultdict(list)
    for place in assigned:
        by_rater[place.rater_id].append(place)
    mixed, overseeing = [], overseers(project)
    for own in by_rater.values():
        rater = own[0].rater
        unseen = gold_unseen(rater=rater, gold=gold) if rater.pk not in overseeing else []
        wanted = len(unseen) if share >= 1 else math.floor(len(own) * share / (1 - share) + 0.5)
        for pk in rng.sample(unseen, min(wanted, len(unseen))):
            place = Assignment(
                item_id=pk, rater=rater, batch=batch, status=AssignmentStatus.ASSIGNED, gold=True
            )
            own.insert(rng.randrange(len(own) + 1), place)
        mixed += own
    return mixed
