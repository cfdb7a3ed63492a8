"""Independent reads sent together (evalsite/raw_rows.py `read_ahead`): one round trip on
PostgreSQL (a pipeline), the rows kept for the statement that asks for them, and the item
list's page the same with its reads ahead as without."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evalsite import raw_rows
from judging.models import Criterion
from reviews.models import Role, Slice
from tests.factories import ItemFactory, ProjectFactory, member

pytestmark = pytest.mark.django_db

NAMES = ("SELECT name FROM reviews_slice WHERE project_id = %s ORDER BY name", None)


class Holder:
    """Anything with a __dict__ lives as long as the request: here, a plain object."""


def _without_csrf(response) -> str:
    """The page less its CSRF tokens (masked afresh for every response)."""
    return CSRF.sub("", response.content.decode())


CSRF = re.compile(r'(?<="X-CSRFToken": ")[^"]+|(?<=name="csrfmiddlewaretoken" value=")[^"]+')


def _in_pipeline(record: list):
    def wrapper(execute, sql, params, many, context):
        pipeline = getattr(context["connection"].connection, "_pipeline", None)
        record.append((sql, pipeline is not None))
        return execute(sql, params, many, context)

    return wrapper


def test_rows_read_ahead_are_given_once_then_read_again():
    project = ProjectFactory()
    Slice.objects.create(project=project, name="b")
    Slice.objects.create(project=project, name="a")
    statement = (NAMES[0], [project.pk])
    holder = Holder()
    raw_rows.read_ahead(holder, [statement, ("SELECT %s + 1", [41])])
    with CaptureQueriesContext(connection) as queries:
        assert raw_rows.fetch_kept(holder, *statement) == [("a",), ("b",)]
        assert raw_rows.fetch_kept(holder, "SELECT %s + 1", [41]) == [(42,)]
    assert queries.captured_queries == []  # both were read ahead
    Slice.objects.create(project=project, name="c")
    with CaptureQueriesContext(connection) as queries:
        assert raw_rows.fetch_kept(holder, *statement) == [("a",), ("b",), ("c",)]
    assert len(queries.captured_queries) == 1  # taken once: the second call reads again


def test_a_statement_not_read_ahead_is_read_now():
    holder = Holder()
    raw_rows.read_ahead(holder, [("SELECT %s + 1", [1])])
    assert raw_rows.fetch_kept(holder, "SELECT %s + 1", [2]) == [(3,)]  # other parameters


@pytest.mark.postgres
def test_postgresql_sends_them_in_one_pipeline():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    seen = []
    with connection.execute_wrapper(_in_pipeline(seen)):
        raw_rows.read_ahead(Holder(), [("SELECT %s + 1", [1]), ("SELECT %s * 2", [4])])
    assert [inside for _, inside in seen] == [True, True]
    assert connection.connection._pipeline is None  # over: the connection is as before


def test_a_failing_statement_read_ahead_raises_and_leaves_the_connection_usable():
    with pytest.raises(Exception, match="no_such_table"):
        raw_rows.read_ahead(Holder(), [("SELECT 1", []), ("SELECT * FROM no_such_table", [])])
    if connection.vendor == "postgresql":  # the test's transaction is aborted: roll it back
        connection.needs_rollback = True
        return
    assert raw_rows.fetch_kept(Holder(), "SELECT %s + 1", [1]) == [(2,)]


def test_the_item_list_reads_ahead_and_shows_what_it_did_without(client, project):
    admin = member(project, Role.ADMIN, username="boss")
    member(project, Role.RATER, username="ada")
    Slice.objects.create(project=project, name="urgent")
    Criterion.objects.create(project=project, name="tone", labels=["y", "n"], sha256="0")
    ItemFactory.create_batch(3, project=project)
    client.force_login(admin)
    url = reverse("item_list", args=[project.slug])
    seen = []
    with connection.execute_wrapper(_in_pipeline(seen)):
        ahead = client.get(url)  # the first page: its reads go ahead together
    behind = client.get(url, {"q": ""})  # a query string: read one by one, as before
    assert ahead.status_code == behind.status_code == 200
    assert _without_csrf(ahead) == _without_csrf(behind)
    if connection.vendor == "postgresql":
        together = [sql for sql, inside in seen if inside]
        assert len(together) == 4  # the options, the jobs, the criteria, the page's rows
        for table in ("reviews_slice", "reviews_job", "judging_criterion", "reviews_item i"):
            assert any(f"FROM {table}" in sql for sql in together), table


def test_rows_inserted_together_get_their_keys_and_a_refused_one_raises(project):
    from django.db import IntegrityError, transaction

    from reviews.models import Event, EventKind
    from reviews.services.events import event_new

    item = ItemFactory(project=project)
    lines = [event_new(item=item, kind=EventKind.UPDATED, data={"n": n}) for n in range(2)]
    assert raw_rows.insert_all(lines) == lines
    assert [e.pk for e in lines] == list(
        Event.objects.filter(item=item).order_by("pk").values_list("pk", flat=True)
    )
    assert [Event.objects.get(pk=e.pk).data for e in lines] == [{"n": 0}, {"n": 1}]
    Slice.objects.create(project=project, name="taken")
    refused = [Slice(project=project, name="taken"), Slice(project=project, name="after")]
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_rows.insert_all(refused)  # the first breaks the unique name: neither is written
    assert list(Slice.objects.filter(project=project).values_list("name", flat=True)) == ["taken"]


@pytest.mark.postgres
def test_an_autosave_reads_its_question_with_the_access_check_and_writes_its_line_with_it(
    client, project, review_item
):
    """The save's round trips (issue #33): the membership and the question in one, the claim
    locked and the latest answer in one, the answer and its timeline line in another."""
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    from reviews.models import Answer

    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]})
    question = item.questions.get()
    client.force_login(member(project, Role.RATER))
    assert client.post(reverse("review_next", args=[project.slug])).status_code == 302
    url = reverse("answer_save", args=[project.slug, item.pk, question.pk])
    choice = {"choice": f"claim:{question.candidates.first().pk}", "expected_seq": "0"}
    seen = []
    with connection.execute_wrapper(_in_pipeline(seen)):
        response = client.post(url, choice, headers={"HX-Request": "true"})
    assert response.status_code == 200
    together = [sql.split()[0:4] for sql, inside in seen if inside]
    assert ["SELECT", 'p."id",', 'p."slug",', 'p."name",'] in together  # the membership
    assert any(sql.startswith("SELECT q.") for sql, inside in seen if inside)
    inside = [sql for sql, piped in seen if piped]
    assert any("FOR UPDATE" in sql for sql in inside)  # the claim locked, with its latest answer
    assert any(sql.startswith('SELECT a."id", a."question_id"') for sql in inside)
    assert [s[:3] for s in together if s[0] == "INSERT"] == [
        ["INSERT", "INTO", '"reviews_answer"'],
        ["INSERT", "INTO", '"reviews_event"'],
    ]
    assert Answer.objects.get(question=question).seq == 1
