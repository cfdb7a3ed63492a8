"""A rater's claim and autosave commit without waiting for PostgreSQL's disk flush; submits
and everything else keep the server's setting (reviews/services/assignment/durability.py)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviews.models import Item, Role
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db
ASYNC = "SET LOCAL synchronous_commit TO OFF"


def _rater_day(client, review_item):
    """The statements of a claim, an autosave and a submit, by name."""
    project = ProjectFactory(overlap=1)
    review_item(project, {"$.total": ["1,200.00", "1,290.00"]})
    client.force_login(member(project, Role.RATER))
    ran = {}
    with CaptureQueriesContext(connection) as queries:
        claimed = client.post(reverse("review_next", args=[project.slug]))
    ran["claim"] = [q["sql"] for q in queries.captured_queries]
    item = Item.objects.get(pk=claimed.url.rstrip("/").split("/")[-2])
    question = item.questions.get()
    save = reverse("answer_save", args=[project.slug, item.pk, question.pk])
    with CaptureQueriesContext(connection) as queries:
        saved = client.post(save, {"choice": f"claim:{question.candidates.first().pk}"})
    assert saved.status_code == 200
    ran["autosave"] = [q["sql"] for q in queries.captured_queries]
    with CaptureQueriesContext(connection) as queries:
        client.post(reverse("review_submit", args=[project.slug, item.pk]))
    ran["submit"] = [q["sql"] for q in queries.captured_queries]
    return ran


def test_claims_and_autosaves_commit_async_on_postgresql_only(client, review_item):
    ran = _rater_day(client, review_item)
    postgres = connection.vendor == "postgresql"
    assert (ASYNC in ran["claim"], ASYNC in ran["autosave"]) == (postgres, postgres)
    # The submit's own transaction waits for the disk; only the claim of the next item after it
    # (same request) does not.
    submit = ran["submit"]
    submitted = next(n for n, sql in enumerate(submit) if "'submitted'" in sql and "event" in sql)
    assert ASYNC not in submit[:submitted]
    assert submit.count(ASYNC) == (1 if postgres else 0)


def test_the_setting_makes_rater_writes_wait_for_the_disk(client, review_item, settings):
    settings.RATER_WRITES_WAIT_FOR_DISK = True
    ran = _rater_day(client, review_item)
    assert not any(ASYNC in sql for sqls in ran.values() for sql in sqls)


@pytest.mark.postgres
def test_the_setting_goes_with_the_transactions_first_read_in_one_round_trip(client, review_item):
    """On PostgreSQL the SET LOCAL, the claim's (or the autosave's) first read and psycopg's
    BEGIN go in one pipeline (evalsite/raw_rows.py `fetch(first=...)`)."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    seen = []

    def record(execute, sql, params, many, context):
        seen.append((sql, context["connection"].connection._pipeline is not None))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        _rater_day(client, review_item)
    for n, (sql, inside) in enumerate(seen):
        if sql == ASYNC:
            assert inside, sql
            assert seen[n + 1][1], seen[n + 1][0]  # the read it went with
    assert sum(sql == ASYNC for sql, _ in seen) == 3  # the claim, the autosave, the next claim
