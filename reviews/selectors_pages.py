"""Keyset pages of items: the overseer's item list and the adjudication and approval queues.

Constant in project size: a bounded count and one page by an index, whatever the project holds
(query counts pinned at 1k and 100k items in tests/reviews/test_queries_pinned.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Q
from django.utils import timezone

from reviews.models import Item, ItemStatus, Question, QuestionStatus
from reviews.selectors import bounded_count


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


def items_page(
    *,
    project,
    status: str | None,
    query: str,
    after: int | None = None,
    before: int | None = None,
    per_page: int = 50,
) -> ItemsPage:
    """One page of the project's items by id (keyset: `after`/`before` an id), with per-item
    question counts. Three queries whatever the project's size: a bounded count, the page's
    items (one row more than a page, to know if there is a next; LIMIT on the (project, status,
    id) index) and the question counts of those items only."""
    items = Item.objects.filter(project=project)
    if status:
        items = items.filter(status=status)
    if query:
        items = items.filter(external_id__icontains=query)
    total, more = bounded_count(items)
    if before is not None:
        page = list(_item_fields(items.filter(id__lt=before).order_by("-id"))[: per_page + 1])
        has_previous, page = len(page) > per_page, page[:per_page][::-1]
        has_next = True
    else:
        start = items.filter(id__gt=after) if after is not None else items
        page = list(_item_fields(start.order_by("id"))[: per_page + 1])
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


def _item_fields(items):
    return items.values_list("id", "external_id", "status", "updated_at")


def _item_rows(page: list[tuple]) -> list[ItemRow]:
    counts = {
        row["item_id"]: (row["open"], row["total"])
        for row in Question.objects.filter(item_id__in=[pk for pk, *_ in page])
        .values("item_id")
        .annotate(total=Count("id"), open=Count("id", filter=~Q(status=QuestionStatus.RESOLVED)))
        .order_by()
    }
    labels = dict(ItemStatus.choices)
    return [
        ItemRow(
            pk=pk,
            href=f"{pk}/",
            external_id=external_id,
            status=status,
            status_label=labels.get(status, status),
            questions="{} / {}".format(*counts.get(pk, (0, 0))),
            updated=timezone.localtime(updated_at).strftime("%Y-%m-%d %H:%M"),
        )
        for pk, external_id, status, updated_at in page
    ]


@dataclass(frozen=True)
class QueuePage:
    rows: list[Item]
    total: int
    total_more: bool
    next_cursor: str | None  # "<updated_at iso>~<id>" of the last row, when there is more


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
