"""The item list's hand-written statements list what the ORM's filters would list.

`items_page` (reviews/selectors_pages.py) writes its count and its page by hand, for speed.
Here the same filters through the ORM (`icontains` on the id or title, `status`, a slice, a
label, an assignee, the split, keyset by id) are the
reference: over awkward ids (`%`, `_`, a backslash, upper and lower case, accents) and every
status, each page's rows, counts and links must be the ORM's.
"""

import itertools

import pytest
from django.db.models import Count, Q
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviews.models import Item, ItemStatus, QuestionStatus
from reviews.selectors_pages import ItemFilters, items_page
from tests.factories import ItemFactory, ProjectFactory

pytestmark = pytest.mark.django_db

IDS = ["Case_1", "case%2", "CASE-3", "back\\slash", "plain", "PLAIN-2", "naïve", "x_y", "x1y"]
QUERIES = ["", "case", "_", "%", "\\", "x_y", "1y", "plain", "NAÏ", "Zzz"]


def _reference(project, status, query, after, before, per_page):
    """The ORM's page: ids, then (id, open, total) per row."""
    items = Item.objects.filter(project=project)
    if status:
        items = items.filter(status=status)
    if query:
        items = items.filter(Q(external_id__icontains=query) | Q(title__icontains=query))
    if before is not None:
        ids = list(items.filter(id__lt=before).order_by("-id").values_list("id", flat=True))
        ids = ids[:per_page][::-1]
    else:
        start = items.filter(id__gt=after) if after is not None else items
        ids = list(start.order_by("id").values_list("id", flat=True))[:per_page]
    counts = {
        row["id"]: (row["open"], row["total"])
        for row in Item.objects.filter(pk__in=ids)
        .values("id")
        .annotate(
            total=Count("questions"),
            open=Count("questions", filter=~Q(questions__status=QuestionStatus.RESOLVED)),
        )
    }
    return items.count(), [(pk, *counts[pk]) for pk in ids]


def test_the_page_is_the_orms_for_every_filter():
    project, other = ProjectFactory(), ProjectFactory()
    statuses = itertools.cycle(ItemStatus.values)
    for n, external_id in enumerate(IDS * 2):
        item = ItemFactory(project=project, external_id=f"{external_id}-{n}", status=next(statuses))
        for k in range(n % 3):
            item.questions.create(key=f"$.q{k}", kind="field", status=("open", "resolved")[k % 2])
        ItemFactory(project=other, external_id=f"{external_id}-{n}")  # never listed
    pks = sorted(project.items.values_list("pk", flat=True))
    cursors = [(None, None), (pks[3], None), (None, pks[-3]), (pks[-1], None), (None, pks[0])]
    for status, query, (after, before) in itertools.product(
        [None, *ItemStatus.values], QUERIES, cursors
    ):
        page = items_page(
            project=project,
            filters=ItemFilters(status=status, query=query or ""),
            after=after,
            before=before,
            per_page=4,
        )
        total, rows = _reference(project, status, query, after, before, 4)
        where = (status, query, after, before)
        assert (page.total, page.total_more) == (total, False), where
        assert [(r.pk, *map(int, r.questions.split(" / "))) for r in page.rows] == rows, where


def test_each_row_is_ready_to_print():
    project = ProjectFactory()
    item = ItemFactory(project=project, external_id="a-1", status=ItemStatus.ADJUDICATION)
    (row,) = items_page(project=project, filters=ItemFilters()).rows
    assert (row.pk, row.href, row.external_id, row.status_label, row.questions) == (
        item.pk,
        f"{item.pk}/",
        "a-1",
        "Needs adjudication",
        "0 / 0",
    )
    assert row.updated == timezone.localtime(item.updated_at).strftime("%Y-%m-%d %H:%M")


@pytest.mark.postgres
def test_a_late_projects_first_page_reads_only_its_own_rows_on_postgresql():
    """PostgreSQL took a walk of the primary key for `project_id = X ORDER BY id LIMIT 51`
    (a project's rows assumed spread over all ids) and skipped every row of the projects made
    before it: the list's first page of a 1M-item project cost 62 ms behind 200k older items.
    Each of the list's statements must read from the project's own first row."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    older, newer = ProjectFactory(), ProjectFactory()
    with connection.cursor() as cursor:
        for project, n in ((older, 20_000), (newer, 60_000)):
            cursor.execute(
                "INSERT INTO reviews_item (project_id, external_id, title, metadata, status,"
                " created_at, updated_at) SELECT %s, 'i' || g, '', '{}', %s, now(), now()"
                " FROM generate_series(1, %s) g",
                [project.pk, ItemStatus.OPEN, n],
            )
        cursor.execute("ANALYZE reviews_item")
        for filters in (ItemFilters(), ItemFilters(status=ItemStatus.OPEN)):
            with CaptureQueriesContext(connection) as statements:
                page = items_page(project=newer, filters=filters)
            assert page.total_more and len(page.rows) == 50
            for statement in statements.captured_queries:
                cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + statement["sql"])
                # the page's scan and its bounded count's, each by the project's index
                item_scans = _scans_of(cursor.fetchone()[0][0]["Plan"], "reviews_item")
                assert item_scans
                for item_scan in item_scans:
                    assert item_scan["Index Name"] == "item_project_id" or (
                        filters.status and item_scan["Index Name"].startswith("reviews_ite_project")
                    ), item_scan
                    assert item_scan.get("Rows Removed by Filter", 0) == 0, item_scan
                    assert item_scan["Actual Rows"] <= 1001, item_scan  # the count's limit


def _scans_of(plan: dict, table: str) -> list[dict]:
    """The plan's nodes that read `table` (EXPLAIN's JSON, walked)."""
    found = [plan] if plan.get("Relation Name") == table else []
    for child in plan.get("Plans", ()):
        found += _scans_of(child, table)
    return found
