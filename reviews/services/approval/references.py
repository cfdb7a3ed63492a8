"""Reading an item's references: versions count across authorities, newest wins."""

from __future__ import annotations

from django.db.models import Max

from reviews.models import Authority, Item, Reference


def next_version(item: Item) -> int:
    return (item.references.aggregate(v=Max("version"))["v"] or 0) + 1


def latest_reference(item: Item, authority: str) -> Reference | None:
    return item.references.filter(authority=authority).order_by("-version").first()


def current_ground_truth(item: Item) -> Reference | None:
    return latest_reference(item, Authority.GROUND_TRUTH)
