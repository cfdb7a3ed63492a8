"""The hot path's hand-written statements are prepared on PostgreSQL, nothing else is
(evalsite/backends/postgresql/base.py), and DATABASE_PREPARED_STATEMENTS=false turns it off."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from evalsite import raw_rows
from reviews.models import Project
from tests.factories import ProjectFactory

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]

BY_SLUG = f"SELECT {raw_rows.columns(Project, 'p')} FROM reviews_project p WHERE p.slug = %s"


@pytest.fixture(autouse=True)
def _postgres():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")


def _prepared() -> list[str]:
    with connection.cursor() as cursor:  # Django's cursor: this statement is not prepared
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [statement for (statement,) in cursor.fetchall()]


def test_a_raw_rows_statement_is_prepared_once_and_gives_the_orms_rows():
    project = ProjectFactory(slug="prepared")
    for _ in range(3):
        (found,) = raw_rows.fetch(BY_SLUG, ["prepared"], Project)
        assert found[0] == project and found[0].name == project.name
    mine = [s for s in _prepared() if "FROM reviews_project p WHERE p.slug = $1" in s]
    assert len(mine) == 1


def test_the_orms_statements_are_not_prepared():
    ProjectFactory(slug="orm")
    for _ in range(8):  # past psycopg's usual threshold of 5
        assert Project.objects.filter(slug="orm").exists()
    assert not [s for s in _prepared() if "reviews_project" in s]


def test_the_query_log_shows_the_values():
    ProjectFactory(slug="logged")
    with CaptureQueriesContext(connection) as queries:
        raw_rows.fetch(BY_SLUG, ["logged"], Project)
    assert queries.captured_queries[-1]["sql"].endswith("WHERE p.slug = 'logged'")


def test_a_failed_transaction_leaves_the_prepared_statements_usable():
    ProjectFactory(slug="after")
    raw_rows.fetch(BY_SLUG, ["after"], Project)
    with pytest.raises(DatabaseError), transaction.atomic():
        raw_rows.fetch(BY_SLUG, ["after"], Project)
        raw_rows.fetch("SELECT p.no_such_column FROM reviews_project p", [], Project)
    assert raw_rows.fetch(BY_SLUG, ["after"], Project)[0][0].slug == "after"


def test_turned_off_nothing_is_prepared(transactional_db, settings):
    settings.DATABASE_PREPARED_STATEMENTS = False
    connection.close()  # the setting is read when a connection opens, and by each cursor
    try:
        ProjectFactory(slug="off")
        for _ in range(3):
            assert raw_rows.fetch(BY_SLUG, ["off"], Project)[0][0].slug == "off"
        assert _prepared() == []
    finally:
        connection.close()  # the next test's connection opens with the setting restored


def test_the_item_lists_page_keeps_one_plan_and_is_right_for_any_project():
    """The page's statement is prepared (reviews/selectors_pages.py); whichever plan PostgreSQL
    keeps for it (generic on the bench's 100k items, custom on a table this small), a project
    of another size gets its own rows."""
    from reviews.selectors_pages import ItemFilters, items_page
    from tests.factories import ItemFactory

    small, large = ProjectFactory(), ProjectFactory()
    ItemFactory.create_batch(3, project=small)
    ItemFactory.create_batch(60, project=large)
    for _ in range(8):
        page = items_page(project=large, filters=ItemFilters())
        assert (len(page.rows), page.has_next) == (50, True)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT generic_plans + custom_plans FROM pg_prepared_statements"
            " WHERE statement LIKE 'SELECT i.id, i.external_id%%'"
        )
        assert cursor.fetchone()[0] == 8
    page = items_page(project=small, filters=ItemFilters())
    assert ([r.pk for r in page.rows], page.total) == (
        sorted(small.items.values_list("pk", flat=True)),
        3,
    )
