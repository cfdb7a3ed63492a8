"""The adjudication and approval queues (keyset pages by last change) and the rater's queues
across projects (My queue). Constant in project size: bounded counts and one page by an index
(query counts pinned in tests/reviews/test_queries_pinned.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from reviews.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ItemStatus,
    Membership,
    Project,
    Role,
)
from reviews.selectors import bounded_count
from reviews.services.approval.batch import approvable
from reviews.services.assignment.queue import items_available


@dataclass(frozen=True)
class QueuePage:
    rows: list[Item]
    total: int
    total_more: bool
    next_cursor: str | None  # "<updated_at iso>~<id>" of the last row, when there is more


def adjudication_waiting(project) -> QuerySet:
    """The project's items waiting for an adjudicator."""
    return project.items.filter(status=ItemStatus.ADJUDICATION)


def waiting_items_page(items, *, cursor: str | None = None, per_page: int = 50) -> QueuePage:
    """`items` (those waiting for adjudication or approval), longest waiting first.

    Keyset pagination on (updated_at, id), which the (project, status, updated_at, id) index
    serves in order: two queries (a bounded count and the page) whatever the project's size.
    A cursor that does not parse starts from the beginning.
    """
    total, more = bounded_count(items)
    page = items.order_by("updated_at", "id")
    after = _parse_cursor(cursor)
    if after is not None:
        when, pk = after
        page = page.filter(Q(updated_at__gt=when) | Q(updated_at=when, id__gt=pk))
    # project_id too: a queryset from project.items sets each row's project (a query per row
    # if the field were deferred).
    rows = list(page.only("id", "project_id", "external_id", "title", "updated_at")[: per_page + 1])
    has_next, rows = len(rows) > per_page, rows[:per_page]
    last = rows[-1] if rows else None
    return QueuePage(
        rows=rows,
        total=total,
        total_more=more,
        next_cursor=f"{last.updated_at.isoformat()}~{last.pk}" if has_next else None,
    )


def _parse_cursor(cursor: str | None):
    when, _, pk = (cursor or "").partition("~")
    try:
        parsed = datetime.fromisoformat(when)
    except ValueError:
        return None
    return (parsed, int(pk)) if pk.isdigit() and parsed.tzinfo else None


# My queue counts each project's pool up to this many items, then says "1,000+".
POOL_COUNT_LIMIT = 1000


class _BoundedCount(Subquery):
    """COUNT(*) over a sliced subquery: what `bounded_count` counts, as a column of the outer
    query (the slice keeps the cost at LIMIT rows, whatever the project holds)."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) bounded)"
    output_field = IntegerField()


def queue_summary(*, rater) -> list[dict]:
    """Per project where `rater` rates: items waiting for them, in progress, done today. Two
    queries, whatever the number of projects: the projects with their bounded pool counts, and
    the rater's assignments counted per project."""
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    # Counted up to a limit: the count evaluates every open item (0.6 s at 100k items on
    # PostgreSQL); "1,000+" waiting says as much to a rater as the exact figure.
    pool = items_available(
        Item.objects.filter(project=OuterRef("pk")), rater=rater, overlap=OuterRef("overlap")
    )
    projects = (
        Project.objects.filter(memberships__user=rater, memberships__role=Role.RATER)
        .annotate(pool=_BoundedCount(pool.order_by().values("pk")[: POOL_COUNT_LIMIT + 1]))
        .order_by("name")
    )
    counts = (
        Assignment.objects.filter(rater=rater, item__project__in=[p.pk for p in projects])
        .values("item__project_id")
        .annotate(
            active=Count("id", filter=Q(status=AssignmentStatus.ACTIVE)),
            assigned=Count(
                "id", filter=Q(status=AssignmentStatus.ASSIGNED, item__status=ItemStatus.OPEN)
            ),
            done_today=Count(
                "id", filter=Q(status=AssignmentStatus.SUBMITTED, submitted_at__gte=today)
            ),
        )
    )
    mine = {row.pop("item__project_id"): row for row in counts}
    none = {"active": 0, "assigned": 0, "done_today": 0}
    return [
        {
            "project": project,
            "waiting": min(project.pool, POOL_COUNT_LIMIT) + mine.get(project.pk, none)["assigned"],
            "waiting_more": project.pool > POOL_COUNT_LIMIT,
            **mine.get(project.pk, none),
        }
        for project in projects
    ]


@dataclass(frozen=True)
class WorkQueue:
    project: Project
    kind: str  # "adjudication" | "approval"
    waiting: int
    waiting_more: bool  # more than POOL_COUNT_LIMIT


def work_queues(*, user) -> list[WorkQueue]:
    """The adjudication and approval queues `user` holds a role for, with what waits in each
    (counted up to POOL_COUNT_LIMIT, as the rater's pool is), empty ones included. One query,
    whatever the number of projects."""
    kinds = {Role.ADJUDICATOR: "adjudication", Role.APPROVER: "approval"}
    items = Item.objects.filter(project=OuterRef("project_id")).order_by().values("pk")
    limit = POOL_COUNT_LIMIT + 1
    memberships = (
        Membership.objects.filter(user_id=user.pk, role__in=kinds)
        .select_related("project")
        .annotate(
            adjudication=_BoundedCount(items.filter(status=ItemStatus.ADJUDICATION)[:limit]),
            approval=_BoundedCount(approvable(items)[:limit]),
        )
        .order_by("project__name", "role")
    )
    queues = []
    for membership in memberships:
        kind = kinds[membership.role]
        waiting = getattr(membership, kind)
        queues.append(
            WorkQueue(
                membership.project, kind, min(waiting, POOL_COUNT_LIMIT), waiting > POOL_COUNT_LIMIT
            )
        )
    return queues


@dataclass(frozen=True)
class MyWork:
    rating: list[dict]  # queue_summary: every project the user rates in
    queues: list[WorkQueue]  # the adjudication and approval queues with something waiting
    overseer: bool  # adjudicator or approver somewhere (their queues may all be empty)


def my_work(*, user) -> MyWork:
    """My queue: what waits for this user in every role that has a queue. Three queries."""
    queues = work_queues(user=user)
    return MyWork(
        rating=queue_summary(rater=user),
        queues=[queue for queue in queues if queue.waiting],
        overseer=bool(queues),
    )
