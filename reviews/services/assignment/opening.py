"""A new claim: an active Assignment and the "assigned" line on the item's timeline.

Shared by the pull queue's ordinary claim (`assignment._claim_new`) and its gold claim
(`gold_queue.gold_claim`), so that both open a claim the same way.
"""

from __future__ import annotations

from evalsite import raw_rows
from reviews.models import Assignment, AssignmentStatus, EventKind, Item
from reviews.services.events import event_new


def assignment_open(
    *, item: Item | int, rater, now, lease_until, gold: bool = False, write=raw_rows.insert_all
) -> Assignment:
    """Open `rater`'s active claim on `item` (a row or its pk), leased until `lease_until`;
    the timeline says how: "claimed", or "gold" for a gold item served blind. `write` inserts
    the two rows (at once, or as the transaction's last writes)."""
    on_item = {"item_id": item} if isinstance(item, int) else {"item": item}
    assignment = Assignment(
        **on_item,
        rater=rater,
        gold=gold,
        status=AssignmentStatus.ACTIVE,
        opened_at=now,
        lease_expires_at=lease_until,
    )
    how = "gold" if gold else "claimed"
    line = event_new(item=item, actor=rater, kind=EventKind.ASSIGNED, data={"how": how})
    write([assignment, line])  # by hand (evalsite/raw_rows.py), together: every claim writes both
    return assignment
