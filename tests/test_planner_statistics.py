"""After an import, the tables it filled have current planner statistics (issue 33): on
PostgreSQL the import ends by analyzing them, timed and logged; on SQLite it does nothing."""

import logging

import pytest
from django.db import connection

from evalsite.planner_statistics import planner_statistics_refresh
from reviews.models import Job
from reviews.services.imports.pipeline import file_import
from reviews.services.jobs.records import job_claim, job_execute
from tests.factories import ProjectFactory
from tests.helpers import write_item_lines

pytestmark = pytest.mark.django_db(transaction=True)


def _statistics(table: str) -> tuple[int, object]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT n_mod_since_analyze, last_analyze FROM pg_stat_user_tables WHERE relname = %s",
            [table],
        )
        return cursor.fetchone()


@pytest.mark.postgres
def test_an_import_leaves_the_tables_it_filled_analyzed(tmp_path, caplog):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    project = ProjectFactory()
    items = write_item_lines(tmp_path / "items.jsonl", 2_000)
    with caplog.at_level(logging.INFO, logger="evalsite.planner_statistics"):
        file_import(actor=None, project=project, path=items)
    changed_since, analyzed_at = _statistics("reviews_item")
    assert analyzed_at is not None and changed_since == 0
    [line] = [r.getMessage() for r in caplog.records if r.name == "evalsite.planner_statistics"]
    assert line.startswith("ANALYZE after importing items.jsonl: ") and "reviews_item" in line
    assert line.endswith(" ms)")
    # Nothing changed since: nothing to analyze, and no line.
    assert planner_statistics_refresh(after="nothing") == []
    # Every column has statistics but the JSON documents no query filters on (migration 0034).
    with connection.cursor() as cursor:
        cursor.execute("SELECT attname FROM pg_stats WHERE tablename = 'reviews_item'")
        columns = {name for (name,) in cursor.fetchall()}
    assert {"id", "project_id", "external_id", "status", "created_at"} <= columns
    assert not columns & {"input", "output", "expected", "metadata"}


@pytest.mark.postgres
def test_a_job_leaves_the_tables_it_filled_analyzed(tmp_path, caplog):
    """Jobs are bulk writes too (a split of every item, questions for 50k items, bulk actions):
    the worker analyzes what one changed when it ends, as an import does."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    project = ProjectFactory()
    file_import(actor=None, project=project, path=write_item_lines(tmp_path / "i.jsonl", 2_000))
    job = Job.objects.create(project=project, kind="split_draw", params={"data": {"seed": ["7"]}})
    with caplog.at_level(logging.INFO, logger="evalsite.planner_statistics"):
        job_execute(job_claim(job.pk))
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    changed_since, analyzed_at = _statistics("judging_itemsplit")
    assert analyzed_at is not None and changed_since == 0
    lines = [r.getMessage() for r in caplog.records if r.name == "evalsite.planner_statistics"]
    assert f"ANALYZE after job {job.pk} (split_draw): judging_itemsplit" in "\n".join(lines)


def test_on_sqlite_nothing_is_analyzed(tmp_path):
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's side")
    items = write_item_lines(tmp_path / "items.jsonl", 100)
    file_import(actor=None, project=ProjectFactory(), path=items)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'")
        assert cursor.fetchone() == (0,)
