"""Keyset pages of items: the overseer's item list and the adjudication and approval queues;
the rater's queues across projects (My queue).

Constant in project size: a bounded count and one page by an index, whatever the project holds
(query counts pinned at 1k and 100k items in tests/reviews/test_queries_pinned.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from evalsite import raw_rows
from reviews import item_hooks
from reviews.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ItemStatus,
    Membership,
    Project,
    QuestionKind,
    QuestionStatus,
    Resolution,
    Role,
)
from reviews.selectors import COUNT_LIMIT, bounded_count
from reviews.services.approval.batch import approvable
from reviews.services.assignment.queue import items_available


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One line of the item list, ready to print: fifty per page, so the template does no
    lookups, number or date formatting per row (two thirds of the page's CPU before)."""

    pk: int
    href: str  # relative to the list: the item's page
    external_id: str
    status: str
    status_label: str
    questions: str  # "open / total"
    updated: str  # local time, to the minute


@dataclass(frozen=True)
class ItemsPage:
    rows: list[ItemRow]
    total: int
    total_more: bool  # more than `total` (a bounded count)
    first_id: int | None
    last_id: int | None
    has_previous: bool
    has_next: bool


@dataclass(frozen=True)
class ItemFilters:
    """The item list's filters, each checked by the list's form (a slice or rater of the
    project, a registered filter's listed value)."""

    status: str | None = None
    query: str = ""  # a piece of the id or the title
    slice_id: int | None = None
    label: str = ""  # the newest resolution of one of the item's label questions
    assignee_id: int | None = None  # a rater who holds, held or answered it
    extra: tuple[tuple[str, str], ...] = ()  # (registered filter, value): reviews/item_hooks.py

    @property
    def any(self) -> bool:
        return bool(
            self.status or self.query or self.slice_id or self.label or self.assignee_id
        ) or bool(self.extra)


def items_page(
    *,
    project,
    filters: ItemFilters,
    after: int | None = None,
    before: int | None = None,
    per_page: int = 50,
) -> ItemsPage:
    """One page of the project's items by id (keyset: `after`/`before` an id), with per-item
    question counts. Two statements whatever the project's size: a bounded count, and the
    page's items with their counts (one row more than a page, to know if there is a next;
    LIMIT on the (project, status, id) index; the counts for those rows only).

    Written by hand (`evalsite/raw_rows.py` says why): the list is every overseer's first page.
    tests/reviews/test_items_page.py holds it to the same filters through the ORM."""
    where, params = _items_where(project, filters)
    total, more = _bounded_total(where, params)
    if before is not None:
        page = _page_rows(f"{where} AND i.id < %s", [*params, before], "DESC", per_page + 1)
        has_previous, page = len(page) > per_page, page[:per_page][::-1]
        has_next = True
    else:
        keyset = (
            (f"{where} AND i.id > %s", [*params, after]) if after is not None else (where, params)
        )
        page = _page_rows(*keyset, "ASC", per_page + 1)
        has_next, page = len(page) > per_page, page[:per_page]
        has_previous = after is not None  # an `after` link comes from a page with items
    rows = _item_rows(page)
    return ItemsPage(
        rows=rows,
        total=total,
        total_more=more,
        first_id=rows[0].pk if rows else None,
        last_id=rows[-1].pk if rows else None,
        has_previous=has_previous,
        has_next=has_next,
    )


# PostgreSQL walked the primary key for `project_id = X ORDER BY id` (rows assumed spread over
# all ids), skipping every older project's rows; an equality is also dropped from the ORDER BY.
# `= ANY(ARRAY[...])` is no constant, so _BY_ID's order comes from the (project, id) index.
def _project_condition(project) -> tuple[str, object]:
    if connection.vendor == "postgresql":
        return "i.project_id = ANY(%s)", [project.pk]
    return "i.project_id = %s", project.pk


def _items_where(project, filters: ItemFilters) -> tuple[str, list]:
    """The list's filters as SQL on `reviews_item i`: the project, a status, a piece of the id
    or title (case-insensitive, `%`, `_` and `\\` taken literally, as the ORM's `icontains`),
    a slice, a label, an assignee, and the registered filters' conditions."""
    condition, value = _project_condition(project)
    where, params = [condition], [value]
    if filters.status:
        where.append("i.status = %s")
        params.append(filters.status)
    if filters.query:
        literal = filters.query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        where.append(
            "(UPPER(i.external_id) LIKE UPPER(%s) ESCAPE '\\'"
            " OR UPPER(i.title) LIKE UPPER(%s) ESCAPE '\\')"
        )
        params += [f"%{literal}%"] * 2
    if filters.slice_id:
        where.append(
            "EXISTS (SELECT 1 FROM reviews_item_slices l WHERE l.item_id = i.id AND l.slice_id = %s)"
        )
        params.append(filters.slice_id)
    if filters.assignee_id:
        where.append(
            "EXISTS (SELECT 1 FROM reviews_assignment a WHERE a.item_id = i.id"
            " AND a.rater_id = %s AND a.status <> %s)"
        )
        params += [filters.assignee_id, AssignmentStatus.EXPIRED]
    if filters.label:
        sql, label_params = _labelled(project, filters.label)
        where.append(f"i.id IN ({sql})")
        params += label_params
    for name, value in filters.extra:
        sql, extra_params = item_hooks.FILTERS[name].condition(value)
        where.append(sql)
        params += extra_params
    return " AND ".join(where), params


def _labelled(project, label: str) -> tuple[str, list]:
    """Items whose label (criterion or pairwise) question's newest resolution is `label`, as
    SQL: the ORM writes the JSON comparison each database needs."""
    newer = Resolution.objects.filter(question=OuterRef("question"), pk__gt=OuterRef("pk"))
    newest = (
        Resolution.objects.filter(
            question__item__project=project,
            question__kind__in=(QuestionKind.CRITERION, QuestionKind.PAIRWISE),
            value=label,
        )
        .filter(~Exists(newer))
        .values("question__item_id")
    )
    sql, params = newest.query.sql_with_params()
    return sql, list(params)


def items_chosen(*, project, filters: ItemFilters, every: bool, ticked: list[int]) -> list[int]:
    """The ids a bulk action acts on: every item the filters match ("all N matching"), or the
    ticked ones that are the project's and still match (a row that left the filter since the
    page showed it is not acted on)."""
    where, params = _items_where(project, filters)
    if not every:
        if not ticked:
            return []
        where = f"{where} AND i.id IN ({', '.join(['%s'] * len(ticked))})"
        params = [*params, *ticked]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT i.id FROM reviews_item i WHERE {where} {_BY_ID}", params)  # noqa: S608
        return [pk for (pk,) in cursor.fetchall()]


def items_more_than(*, project, filters: ItemFilters, limit: int) -> bool:
    """Whether more than `limit` items match the filters (at most limit + 1 rows read)."""
    return _bounded_total(*_items_where(project, filters), limit=limit)[1]


# The (project, id) index's order, for the pages and the bounded count (see _project_condition).
_BY_ID = "ORDER BY i.project_id, i.id"


def _bounded_total(where: str, params: list, limit: int = COUNT_LIMIT) -> tuple[int, bool]:
    """`bounded_count` of the filtered items: at most `limit` + 1 rows read."""
    sql = f"SELECT COUNT(*) FROM (SELECT 1 FROM reviews_item i WHERE {where} {_BY_ID} LIMIT %s) t"  # noqa: S608
    with connection.cursor() as cursor:
        cursor.execute(sql, [*params, limit + 1])
        (n,) = cursor.fetchone()
    return min(n, limit), n > limit


def _page_rows(where: str, params: list, direction: str, limit: int) -> list[tuple]:
    """(id, external_id, status, updated_at, open questions, questions) of up to `limit`
    items by id; the counts are computed for those rows only."""
    sql = (
        "SELECT i.id, i.external_id, i.status, i.updated_at,"  # noqa: S608
        " (SELECT COUNT(*) FROM reviews_question q WHERE q.item_id = i.id AND q.status <> %s),"
        " (SELECT COUNT(*) FROM reviews_question q WHERE q.item_id = i.id)"
        f" FROM reviews_item i WHERE {where}"
        f" ORDER BY i.project_id {direction}, i.id {direction} LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [QuestionStatus.RESOLVED, *params, limit])
        rows = cursor.fetchall()
    updated = raw_rows.converter(Item, "updated_at")
    return [
        (pk, external_id, status, updated(at), *counts)
        for pk, external_id, status, at, *counts in rows
    ]


def _item_rows(page: list[tuple]) -> list[ItemRow]:
    labels = dict(ItemStatus.choices)
    return [
        ItemRow(
            pk=pk,
            href=f"{pk}/",
            external_id=external_id,
            status=status,
            status_label=labels.get(status, status),
            questions=f"{open_count} / {total}",
            updated=timezone.localtime(updated_at).strftime("%Y-%m-%d %H:%M"),
        )
        for pk, external_id, status, updated_at, open_count, total in page
    ]


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
