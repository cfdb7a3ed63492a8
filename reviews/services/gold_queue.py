"""Gold items served blind in the pull queue.

A gold item is already settled (its known answer is snapshotted in its latest `GoldMark`).
With the project's `gold_share` above 0, `assignment_claim_next` serves one with that probability: an
ordinary `Assignment` with `gold=True` (only the server knows; the rater's page, URL and
markup are those of any item). Its answers are scored against the known answer
(`rater_quality`) and never take part in the item's resolution or agreement figures.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction

from reviews.models import Assignment, AssignmentStatus, Item, ItemStatus, Project
from reviews.services.assignment_open import assignment_open
from reviews.services.rater_quality import gold_items


def gold_claim(*, rater, project: Project, now, lease_until, rng) -> Assignment | None:
    """A new claim on a gold item the rater has never held, picked at random; or None."""
    gold = gold_items(project)
    if not gold:
        return None
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
    candidates = list(unseen)
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
