"""The item timeline: the one place that writes Event rows (append-only)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils import timezone

from evalsite import raw_rows
from reviews.models import Event, EventKind, Item
from reviews.services.imports.bulk_insert import insert_rows


def _actor(actor):
    # Anonymous users and system jobs (no pk) are recorded as "no actor".
    return actor if getattr(actor, "pk", None) else None


def _item_id(item: Item | int) -> int:
    return item if isinstance(item, int) else item.pk


def event_record(
    *, item: Item | int, kind: EventKind, actor=None, data: dict[str, Any] | None = None
) -> Event:
    """Append one line to `item`'s timeline. `kind` must be an EventKind (ValueError if not).
    Most rater requests append one: written by hand (`raw_rows.insert`)."""
    return raw_rows.insert(event_new(item=item, kind=kind, actor=actor, data=data))


def event_new(
    *, item: Item | int, kind: EventKind, actor=None, data: dict[str, Any] | None = None
) -> Event:
    """The timeline line `event_record` writes, unsaved: for a caller that writes it together
    with its own row (`raw_rows.insert_all`)."""
    return Event(item_id=_item_id(item), kind=EventKind(kind), actor=_actor(actor), data=data or {})


def events_record(
    *,
    kind: EventKind,
    lines: Iterable[tuple[Item | int, dict[str, Any]]],
    actor=None,
) -> int:
    """One `kind` line per (item, data) pair, in bulk; returns how many were written."""
    kind, actor = EventKind(kind), _actor(actor)
    return insert_rows(
        Event,
        ("item_id", "data"),
        ((_item_id(item), data) for item, data in lines),
        actor_id=actor.pk if actor else None,
        kind=kind,
        created_at=timezone.now(),
    )
