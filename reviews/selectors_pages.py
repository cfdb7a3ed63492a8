"""Keyset pages of items: the overseer's item list (the queues are in selectors_queues.py).

Constant in project size: a bounded count and one page by an index, whatever the project holds
(query counts pinned at 1k and 100k items in tests/reviews/test_queries_pinned.py)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from django.db.models import Exists, OuterRef
from django.utils import timezone

from evalsite import raw_rows
from reviews import item_hooks
from reviews.models import (
    AssignmentStatus,
    Item,
    ItemStatus,
    QuestionKind,
    QuestionStatus,
    Resolution,
)
from reviews.selectors import COUNT_LIMIT, recent_jobs_statement
from reviews.selectors_options import list_options_statement

PER_PAGE = 50  # items on a page of the list


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
    per_page: int = PER_PAGE,
) -> ItemsPage:
    """One page of the project's items by id (keyset: `after`/`before` an id), with per-item
    question counts. One statement whatever the project's size: the page's items with their
    counts (one row more than a page, to know if there is a next; LIMIT on the (project,
    status, id) index; the counts for those rows only) and, computed once, the bounded count
    of all that match (a second statement only for a page without rows).

    Written by hand (`evalsite/raw_rows.py` says why): the list is every overseer's first page.
    tests/reviews/test_items_page.py holds it to the same filters through the ORM."""
    where, params = _items_where(project, filters)
    counted = (where, params)
    if before is not None:
        keyset = (f"{where} AND i.id < %s", [*params, before])
        page = _page_rows(project, *keyset, "DESC", per_page + 1, counted)
        has_previous, page = len(page) > per_page, page[:per_page][::-1]
        has_next = True
    else:
        keyset = (
            (f"{where} AND i.id > %s", [*params, after]) if after is not None else (where, params)
        )
        page = _page_rows(project, *keyset, "ASC", per_page + 1, counted)
        has_next, page = len(page) > per_page, page[:per_page]
        has_previous = after is not None  # an `after` link comes from a page with items
    if page:
        matching = page[0][-1]
        total, more = min(matching, COUNT_LIMIT), matching > COUNT_LIMIT
    else:
        total, more = _bounded_total(where, params)
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


def _page_rows(
    project, where: str, params: list, direction: str, limit: int, counted: tuple[str, list]
) -> list[tuple]:
    """(id, external_id, status, updated_at, open questions, questions, matching) of up to
    `limit` items by id; the counts are computed for those rows only, `matching` (the bounded
    count of `counted`'s items, as `_bounded_total` reads it) once for the statement."""
    rows = raw_rows.fetch_kept(project, *_page_statement(where, params, direction, limit, counted))
    updated = raw_rows.converter(Item, "updated_at")
    return [
        (pk, external_id, status, updated(at), *counts)
        for pk, external_id, status, at, *counts in rows
    ]


def _page_statement(
    where: str, params: list, direction: str, limit: int, counted: tuple[str, list]
) -> tuple[str, list]:
    """`_page_rows`' statement. Prepared (`evalsite/backends/postgresql/base.py`): planning it
    took longer than running it (0.38 ms against 0.63 at 100k items). Its two limits are
    written into the statement, not passed: a generic plan sees them as they are (a limit it
    cannot see is planned as a tenth of the table), so PostgreSQL can keep one plan."""
    count_where, count_params = counted
    sql = (
        "SELECT i.id, i.external_id, i.status, i.updated_at,"  # noqa: S608
        " (SELECT COUNT(*) FROM reviews_question q WHERE q.item_id = i.id AND q.status <> %s),"
        " (SELECT COUNT(*) FROM reviews_question q WHERE q.item_id = i.id),"
        f" (SELECT COUNT(*) FROM (SELECT 1 FROM reviews_item i WHERE {count_where} {_BY_ID}"
        f" LIMIT {int(COUNT_LIMIT) + 1}) t)"
        f" FROM reviews_item i WHERE {where}"
        f" ORDER BY i.project_id {direction}, i.id {direction} LIMIT {int(limit)}"
    )
    return sql, [QuestionStatus.RESOLVED, *count_params, *params]


def first_page_statement(project, *, per_page: int = PER_PAGE) -> tuple[str, list]:
    """The statement `items_page` runs for the unfiltered first page (the item list reads it
    ahead with the page's other reads: raw_rows.read_ahead)."""
    where, params = _items_where(project, ItemFilters())
    return _page_statement(where, params, "ASC", per_page + 1, (where, params))


def item_list_reads(project, *, filtered: bool, admin: bool) -> list[tuple[str, list]]:
    """What the item list's page reads that depends on nothing else it reads: the choice lists,
    for an admin the recent jobs and what the bulk actions' forms read, and without filters or
    a page asked for (the page a user opens first) the page's rows. `raw_rows.read_ahead`
    sends them together: one round trip instead of four."""
    reads = [list_options_statement(project)]
    if admin:
        reads.append(recent_jobs_statement(project))
        reads += [r for action in item_hooks.ACTIONS.values() if action.reads
                  for r in action.reads(project)]  # fmt: skip
    if not filtered:
        reads.append(first_page_statement(project))
    return reads


def _item_rows(page: list[tuple]) -> list[ItemRow]:
    # Once per page, not per row: the labels' translation and the current time zone (each a
    # look-up in the request's local state).
    labels = {value: str(label) for value, label in ItemStatus.choices}
    zone = timezone.get_current_timezone()
    return [
        ItemRow(
            pk=pk,
            href=f"{pk}/",
            external_id=external_id,
            status=status,
            status_label=labels.get(status, status),
            questions=f"{open_count} / {total}",
            updated=timezone.localtime(updated_at, zone).strftime("%Y-%m-%d %H:%M"),
        )
        for pk, external_id, status, updated_at, open_count, total, _matching in page
    ]
