"""The statements of a claim written by hand: the rater's current claim and the next
candidate (and the pool they come from, counted for the review page's trail). They run on every
"next"; built through the ORM they cost more CPU than the rest of the claim (`evalsite/raw_rows.py`, bench/README.md "Hot paths"). `assignment.py` holds the
rules; these hold to them (tests/reviews/test_claim_candidates.py)."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from evalsite import raw_rows
from reviews.models import Assignment, AssignmentBatch, AssignmentStatus, ItemStatus, Project


def current_claim(*, rater, project: Project, now, first: Sequence[str] = ()) -> Assignment | None:
    """The rater's live claim, else the first item assigned to them (an open item, or a gold
    one); "active" sorts before "assigned". Written by hand (`raw_rows`): every next runs it.
    `first`: statements sent with it (`raw_rows.fetch`), the claim's transaction's settings."""
    found = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Assignment, 'a')} FROM reviews_assignment a"  # noqa: S608
        " JOIN reviews_item i ON i.id = a.item_id"
        " WHERE a.rater_id = %s AND i.project_id = %s"
        " AND (a.status = %s OR (a.status = %s AND a.lease_expires_at >= %s))"
        " AND (i.status = %s OR a.gold = %s)"
        " ORDER BY a.status, a.claimed_at, a.id LIMIT 1",
        [
            rater.pk,
            project.pk,
            AssignmentStatus.ASSIGNED,
            AssignmentStatus.ACTIVE,
            connection.ops.adapt_datetimefield_value(now),
            ItemStatus.OPEN,
            True,
        ],
        Assignment,
        first=first,
    )
    return found[0][0] if found else None


# The pool, written by hand: the open items with a free place that the rater has not taken or
# skipped. The hottest query of the app (every claim) and, counted, every review page's trail;
# building it through the ORM (two subqueries, an alias, a coalesce) cost about 2 ms of CPU
# each time, a fifth of the claim. It selects what `available_items` selects (the test
# tests/reviews/test_claim_candidates.py holds the two to each other).
# The scan starts at the project's first open item (a bound every open item meets). Items are
# answered in id order, so the closed ones come first; with statistics taken while they were
# open (an import analyzes its items) PostgreSQL's planner walked the items by id past every
# closed one, on every claim and every review page (690 rows, half the query's time, after
# 700 answers at 2,000 items, and growing). The bound is found on the (project, status, id)
# index, which only it can use: status as a range and in the ORDER BY (an equality would be
# folded away, and the planner would walk the (project, id) index again).
_POOL_SQL = """
SELECT item.id, item.overlap FROM reviews_item item
WHERE item.project_id = %(project)s AND item.status = %(open)s
  AND item.id >= (
    SELECT first.id FROM reviews_item first
    WHERE first.project_id = %(project)s AND first.status BETWEEN %(open)s AND %(open)s
    ORDER BY first.status, first.id LIMIT 1)
  AND item.id NOT IN (
    SELECT mine.item_id FROM reviews_assignment mine
    WHERE mine.rater_id = %(rater)s AND mine.status <> %(expired)s
      AND NOT (mine.status = %(active)s AND mine.lease_expires_at IS NOT NULL
               AND mine.lease_expires_at < %(now)s))
  AND (
    SELECT COUNT(*) FROM reviews_assignment held
    WHERE held.item_id = item.id
      AND (held.status IN (%(assigned)s, %(submitted)s)
           OR (held.status = %(active)s AND held.lease_expires_at >= %(now)s))
  ) < COALESCE(item.overlap, %(overlap)s)
"""
# The claim's candidate: the pool's first item by id.
_CANDIDATE_SQL = (
    _POOL_SQL
    + """  {passed_over}
ORDER BY item.id
LIMIT 1
"""
)


def _pool_params(*, rater_id: int, project: Project, now) -> dict:
    return {
        "project": project.pk,
        "rater": rater_id,
        "now": connection.ops.adapt_datetimefield_value(now),
        "overlap": project.overlap,
        "open": ItemStatus.OPEN,
        "expired": AssignmentStatus.EXPIRED,
        "active": AssignmentStatus.ACTIVE,
        "assigned": AssignmentStatus.ASSIGNED,
        "submitted": AssignmentStatus.SUBMITTED,
    }


def pool_count(*, rater_id: int, project: Project, now, limit: int) -> int:
    """How many items `available_items` gives `rater_id`, counted up to `limit`."""
    params = {**_pool_params(rater_id=rater_id, project=project, now=now), "limit": limit}
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM ({_POOL_SQL} LIMIT %(limit)s) pool", params)  # noqa: S608
        return cursor.fetchone()[0]


def candidate_locked(*, rater, project: Project, now, passed_over: list[int]):
    """(id, overlap) of the first free item for `rater`, locked; or None.

    PostgreSQL: `SKIP LOCKED` first; if every candidate is locked, wait for the first one.
    SQLite: the IMMEDIATE transaction serialises claims, so no lock clause."""
    params = _pool_params(rater_id=rater.pk, project=project, now=now)
    params.update({f"over{n}": pk for n, pk in enumerate(passed_over)})
    names = ", ".join(f"%(over{n})s" for n in range(len(passed_over)))
    sql = _CANDIDATE_SQL.format(passed_over=f"AND item.id NOT IN ({names})" if names else "")
    features, ops = connection.features, connection.ops
    if not features.has_select_for_update:
        tries = [sql]
    else:
        of = ("item",) if features.has_select_for_update_of else ()
        no_key = features.has_select_for_no_key_update
        lock = ops.for_update_sql(of=of, no_key=no_key)
        skip = ops.for_update_sql(of=of, no_key=no_key, skip_locked=True)
        tries = (
            [f"{sql} {skip}", f"{sql} {lock}"]
            if features.has_select_for_update_skip_locked
            else [f"{sql} {lock}"]
        )
    with connection.cursor() as cursor:
        for query in tries:
            cursor.execute(query, params)
            row = cursor.fetchone()
            if row is not None:
                return row
    return None


def live_claim(*, rater_id: int, item_id: int, now) -> Assignment | None:
    """The rater's live claim on the item (active, lease not lapsed) with its batch loaded, or
    None. Written by hand (`raw_rows`): every review page runs it (`queue.active_assignment`)."""
    found = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Assignment, 'a')}, {raw_rows.columns(AssignmentBatch, 'b')}"  # noqa: S608
        " FROM reviews_assignment a LEFT JOIN reviews_assignmentbatch b ON b.id = a.batch_id"
        " WHERE a.rater_id = %s AND a.item_id = %s AND a.status = %s"
        " AND a.lease_expires_at >= %s ORDER BY a.claimed_at DESC, a.id DESC LIMIT 1",
        [rater_id, item_id, AssignmentStatus.ACTIVE, connection.ops.adapt_datetimefield_value(now)],
        Assignment,
        AssignmentBatch,
    )
    if not found:
        return None
    assignment, batch = found[0]
    assignment.batch = batch if assignment.batch_id is not None else None  # as select_related
    return assignment


def item_places(item_pk: int) -> list[tuple]:
    """(status, lease_expires_at) of every assignment of the item, read under its row lock by
    the claim (a handful of rows; by hand: every new claim reads them)."""
    lease = raw_rows.converter(Assignment, "lease_expires_at")
    with connection.prepared_cursor() as cursor:
        cursor.execute(
            "SELECT status, lease_expires_at FROM reviews_assignment WHERE item_id = %s",
            [item_pk],
        )
        return [(status, lease(expires)) for status, expires in cursor.fetchall()]
