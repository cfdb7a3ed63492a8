"""Item N of M: where an item sits among the rater's items, and its neighbours."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from django.utils import timezone

from reviews.models import Assignment, AssignmentStatus
from reviews.services.assignment.claim_queries import pool_count

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
    any size (subqueries), and outside batches one bounded count of the waiting items.

    Both are written by hand: every review page runs them, and building them through the ORM
    (four subqueries; the pool's two) was half of the page's CPU (bench/README.md, issue #33)."""
    others, earlier, previous_item, next_item = _place(assignment)
    batch = assignment.batch if assignment.batch_id else None
    waiting = 0 if batch is not None else _waiting(assignment)
    return Trail(
        position=earlier + 1,
        total=others + 1 + min(waiting, TRAIL_COUNT_LIMIT),
        total_more=waiting > TRAIL_COUNT_LIMIT,
        batch_name=batch.name if batch else "",
        previous_item_id=previous_item,
        next_item_id=next_item,
    )


# The rater's other assignments here, in the same batch (or outside batches), not lapsed or
# skipped, read once (`mine`: PostgreSQL keeps a CTE used more than once, SQLite may read it
# again); "before" this one in the order they were given (claimed_at, then id). Each one's
# project is looked up by the item's key, in a scalar subquery the planner cannot turn into a
# join: as a join, with statistics taken while the assignments table was still empty (a new
# project's first minutes, before autovacuum analyzes it), PostgreSQL walked every item of
# the project once per assignment, 39 ms a review page after 100 answers each under 16 raters
# (bench/README.md, issue #33), and growing with every answer.
_BEFORE = "(a.claimed_at < %(claimed)s OR (a.claimed_at = %(claimed)s AND a.id < %(id)s))"
_OPENABLE = "status IN (%(active)s, %(submitted)s)"
_PLACE_SQL = f"""WITH mine AS (
  SELECT a.id, a.item_id, a.status, a.claimed_at, {_BEFORE} AS before
  FROM reviews_assignment a
  WHERE a.rater_id = %(rater)s AND {{batch}} AND a.id <> %(id)s
    AND a.status NOT IN (%(expired)s, %(skipped)s)
    AND (SELECT i.project_id FROM reviews_item i WHERE i.id = a.item_id) = %(project)s)
SELECT
  (SELECT COUNT(*) FROM mine),
  (SELECT COUNT(*) FROM mine WHERE before),
  (SELECT item_id FROM mine WHERE {_OPENABLE} AND before
     ORDER BY claimed_at DESC, id DESC LIMIT 1),
  (SELECT item_id FROM mine WHERE {_OPENABLE} AND NOT before
     ORDER BY claimed_at, id LIMIT 1)"""  # noqa: S608 (names only; values are parameters)


def _place(assignment: Assignment) -> tuple[int, int, int | None, int | None]:
    """In one query: how many other items the rater has here (`others`), how many of them came
    before this one (`earlier`), and the openable items just before and after it."""
    batch = "a.batch_id IS NULL" if assignment.batch_id is None else "a.batch_id = %(batch)s"
    params = {
        "rater": assignment.rater_id,
        "project": assignment.item.project_id,
        "batch": assignment.batch_id,
        "id": assignment.pk,
        "claimed": connection.ops.adapt_datetimefield_value(assignment.claimed_at),
        "expired": AssignmentStatus.EXPIRED,
        "skipped": AssignmentStatus.SKIPPED,
        "active": AssignmentStatus.ACTIVE,
        "submitted": AssignmentStatus.SUBMITTED,
    }
    with connection.prepared_cursor() as cursor:
        cursor.execute(_PLACE_SQL.format(batch=batch), params)
        return cursor.fetchone()


def _waiting(assignment: Assignment) -> int:
    """Outside batches (the pull queue), how many items still wait for this rater, counted up
    to TRAIL_COUNT_LIMIT + 1 (one bounded count of `available_items`)."""
    return pool_count(
        rater_id=assignment.rater_id,
        project=assignment.item.project,
        now=timezone.now(),
        limit=TRAIL_COUNT_LIMIT + 1,
    )
