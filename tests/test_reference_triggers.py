"""The four foreign keys checked once a statement on PostgreSQL (migration reviews 0035,
evalsite/reference_triggers.py) refuse what the keys refused, whoever writes: the ORM, raw SQL,
the import's COPY. SQLite keeps its own foreign keys, checked at the COMMIT
(`check_constraints` stands in for it inside the test's transaction)."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import ProtectedError
from django.utils import timezone

from reviews.models import Event, Item, Project, Question
from reviews.services.imports.bulk_insert import insert_rows
from tests.factories import ItemFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db

MISSING = 2**31 - 1  # no row has this id (auth_user.id is an integer)

# (child model, its column, the parent's table)
REFERENCES = [
    (Item, "project_id", "reviews_project"),
    (Question, "item_id", "reviews_item"),
    (Event, "item_id", "reviews_item"),
    (Event, "actor_id", "auth_user"),
]
IDS = [f"{model._meta.db_table}.{column}" for model, column, _ in REFERENCES]


@pytest.fixture
def world():
    """An item with a question, another with an event by a user."""
    item, user = ItemFactory(), UserFactory()
    logged = ItemFactory(project=item.project)
    question = Question.objects.create(item=item, kind="criterion", key="correct")
    event = Event.objects.create(item=logged, kind="imported", actor=user, data={})
    return {Item: item, Question: question, Event: event, "user": user}


def _refused(write) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        write()
        if connection.vendor == "sqlite":
            connection.check_constraints()  # SQLite's deferred keys: checked at the COMMIT


def _sql(sql: str, params: list):
    def run():
        with connection.cursor() as cursor:
            cursor.execute(sql, params)

    return run


def _orphan(row, column: str):
    """A copy of `row` (not saved) naming a missing parent in `column`."""
    row.pk, row._state.adding = None, True
    setattr(row, column, MISSING)
    if isinstance(row, Question):
        row.key = "other"
    if isinstance(row, Item):
        row.external_id = "other"
    return row


@pytest.mark.parametrize(("model", "column", "parent"), REFERENCES, ids=IDS)
def test_a_row_naming_a_missing_parent_is_refused(world, model, column, parent):
    pk = world[model].pk
    _refused(lambda: _orphan(model.objects.get(pk=pk), column).save())
    _refused(lambda: model.objects.bulk_create([_orphan(model.objects.get(pk=pk), column)]))
    table, names = model._meta.db_table, [f.column for f in model._meta.concrete_fields][1:]
    unique = {"key": "key || 'x'", "external_id": "external_id || 'x'"}  # a distinct row
    picked = ", ".join("%s" if n == column else unique.get(n, n) for n in names)
    copy = f"INSERT INTO {table} ({', '.join(names)}) SELECT {picked} FROM {table} WHERE id = %s"  # noqa: S608
    _refused(_sql(copy, [MISSING, pk]))
    assert model.objects.count() == (2 if model is Item else 1)


def test_the_import_path_refuses_a_missing_parent_among_good_rows(world):
    item, user = world[Item], world["user"]
    now, kind = timezone.now(), "imported"

    def events(rows, actor):
        return lambda: insert_rows(
            Event, ("item_id", "data"), rows, actor_id=actor, kind=kind, created_at=now
        )

    _refused(events([(item.pk, {}), (MISSING, {})], user.pk))
    _refused(events([(item.pk, {})], MISSING))
    _refused(
        lambda: insert_rows(
            Question, ("item_id", "key"), [(item.pk, "a"), (MISSING, "b")], kind="criterion"
        )
    )
    _refused(
        lambda: insert_rows(
            Item, ("external_id",), [("x",)], project_id=MISSING, status="open", revision=1,
            created_at=now, updated_at=now,
        )
    )  # fmt: skip
    insert_rows(Event, ("item_id", "data"), [(item.pk, {})], actor_id=None, kind=kind,
                created_at=now)  # fmt: skip
    assert Event.objects.filter(item=item).count() == 1


@pytest.mark.parametrize(("model", "column", "parent"), REFERENCES, ids=IDS)
def test_a_child_cannot_be_pointed_at_a_missing_parent(world, model, column, parent):
    table = model._meta.db_table
    _refused(_sql(f"UPDATE {table} SET {column} = %s WHERE id = %s", [MISSING, world[model].pk]))  # noqa: S608


def _parent_pk(world, model, column):
    row = world[model]
    return world["user"].pk if column == "actor_id" else getattr(row, column)


@pytest.mark.parametrize(("model", "column", "parent"), REFERENCES, ids=IDS)
def test_a_named_parent_cannot_be_deleted_or_renumbered_behind_the_orm(
    world, model, column, parent
):
    pk = _parent_pk(world, model, column)
    _refused(_sql(f"DELETE FROM {parent} WHERE id = %s", [pk]))  # noqa: S608
    _refused(_sql(f"UPDATE {parent} SET id = %s WHERE id = %s", [MISSING, pk]))  # noqa: S608
    assert model.objects.filter(**{column: pk}).exists()


def test_a_parent_nothing_names_can_be_deleted_or_renumbered():
    spare, other = ProjectFactory(), ProjectFactory()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("UPDATE reviews_project SET id = %s WHERE id = %s", [MISSING, spare.pk])
        cursor.execute("DELETE FROM reviews_project WHERE id = %s", [other.pk])
    assert list(Project.objects.values_list("pk", flat=True)) == [MISSING]


def test_the_orms_on_delete_runs_as_before(world):
    item = world[Item]
    item.delete()  # CASCADE: its questions go first
    assert not Question.objects.exists()
    project = ProjectFactory()
    Question.objects.create(item=ItemFactory(project=project), kind="criterion", key="k")
    project.delete()  # CASCADE: items, then their questions
    assert not Item.objects.filter(project_id=project.pk).exists()
    assert Question.objects.count() == 0
    with pytest.raises(ProtectedError):  # an event's actor: PROTECT
        world["user"].delete()
    # An item with a timeline: CASCADE reaches the events, which history refuses to delete.
    with pytest.raises(IntegrityError), transaction.atomic():
        world[Event].item.delete()
    assert Event.objects.count() == 1


def _constraints_checked_now() -> None:
    """The fixture's deferred key checks run now: PostgreSQL truncates no table with pending
    trigger events (the test's transaction stands in for a finished one)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.parametrize(
    "truncate",
    ["TRUNCATE reviews_project CASCADE", "TRUNCATE reviews_item CASCADE", "TRUNCATE auth_user CASCADE"],
)  # fmt: skip
def test_a_truncate_that_leaves_children_is_refused(world, truncate):
    """CASCADE follows foreign keys, and these references have none (PostgreSQL; SQLite has no
    TRUNCATE)."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's TRUNCATE")
    _constraints_checked_now()
    _refused(_sql(truncate, []))
    assert Question.objects.exists() and Event.objects.exists()


def test_a_truncate_that_takes_the_children_too_passes(world):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's TRUNCATE")
    _constraints_checked_now()
    tables = "reviews_project, reviews_item, reviews_item_slices, reviews_question, reviews_event"
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {tables} CASCADE")
    assert not Item.objects.exists() and not Event.objects.exists()


def test_sqlite_keeps_its_own_foreign_keys():
    """The models say db_constraint=False; a migration rebuilding one of these tables on SQLite
    would make it without the key: this fails then (bring the key or triggers back)."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's foreign keys")
    with connection.cursor() as cursor:
        for model, column, parent in REFERENCES:
            cursor.execute(f"PRAGMA foreign_key_list({model._meta.db_table})")
            keys = {(row[2], row[3]) for row in cursor.fetchall()}
            assert (parent, column) in keys, (model, column)


@pytest.mark.django_db(transaction=True)
def test_the_test_suites_wipe_passes_the_triggers():
    """Rows naming each other left for the wipe between transactional tests."""
    item = ItemFactory()
    Question.objects.create(item=item, kind="criterion", key="left")
    Event.objects.create(item=item, kind="imported", actor=UserFactory(), data={})
