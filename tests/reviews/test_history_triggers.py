"""The database itself refuses to change history: raw SQL, `_base_manager`, upserts, `Model.save`.

Runs on SQLite and, in the PostgreSQL run (`DATABASE_URL=postgres://…`), on PostgreSQL: the
triggers differ per backend (evalsite/history_triggers.py), the promise does not.
"""

import sqlite3

import pytest
from django.apps import apps
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from evalsite.history_triggers import (
    create_statements,
    history_tables,
    history_unlocked,
    triggers_after_migrate,
)
from judging.models import (
    Criterion,
    DashboardSnapshot,
    FailureTag,
    HeldOutAccess,
    HumanLabel,
    JudgeConfig,
    JudgeVersion,
    LabelRequest,
    ModelPrice,
    ScoreRun,
)
from reviews.models import (
    Answer,
    Approval,
    Event,
    GoldMark,
    ItemRevision,
    KeyRevocation,
    ProjectAction,
    ProjectEvent,
    Reference,
    Resolution,
    ResolutionSource,
    Role,
    TrustedKey,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
)
from reviews.models.append_only import AppendOnlyModel
from reviews.services.approval.approve import approval_record
from reviews.services.projects.audit import project_event_record
from tests import builders
from tests.factories import PASSWORD, ProjectFactory, member
from tests.helpers import per_test_copy

HISTORY = [
    Answer,
    Resolution,
    ResolutionSource,
    Approval,
    Reference,
    Event,
    HumanLabel,
    LabelRequest,
    HeldOutAccess,
    DashboardSnapshot,
    FailureTag,
    JudgeVersion,
    ScoreRun,
    TrustedKey,
    KeyRevocation,
    GoldMark,
    ItemRevision,
    ModelPrice,
    ProjectEvent,
    WebhookAttempt,
]


def _history():
    """One row (at least) in every history table."""
    project = ProjectFactory()
    item = builders.review_item_builder()(project)
    for n in (1, 2):
        builders.rate(member(project, Role.RATER, username=f"r{n}"), item, {"$.total": "1200"})
    approval_record(
        actor=member(project, Role.APPROVER), item=item, password=PASSWORD, confirmed=True
    )
    criterion = Criterion.objects.create(project=project, name="faithful", labels=["yes", "no"])
    HumanLabel.objects.create(item=item, criterion=criterion, rater="ann", label="yes")
    LabelRequest.objects.create(item=item, criterion=criterion, selection="held_out")
    HeldOutAccess.objects.create(project=project, what="dashboard")
    DashboardSnapshot.objects.create(project=project, fingerprint="f", payload={})
    FailureTag.objects.create(item=item, criterion="faithful", judge="j")
    config = JudgeConfig.objects.create(project=project, name="j")
    JudgeVersion.objects.create(config=config, number=1, provider="openai", model="m", prompt="p")
    ScoreRun.objects.create(project=project, source_name="p.jsonl", n_records=0, report={})
    admin = member(project, Role.ADMIN)
    key = TrustedKey.objects.create(
        project=project, key_id="k", public_key_pem="-", registered_by=admin
    )
    KeyRevocation.objects.create(key=key, reason="leaked", revoked_by=admin)
    GoldMark.objects.create(item=item, gold=True, answers={})
    ItemRevision.objects.create(item=item, number=1, sha256="0" * 64)
    ModelPrice.objects.create(provider="openai", model="m", input_per_million=1)
    project_event_record(project, admin, ProjectAction.SETTINGS_CHANGED, after={"overlap": 3})
    hook = Webhook.objects.create(project=project, url="https://hooks.example.org/", secret="s")
    delivery = WebhookDelivery.objects.create(hook=hook, event="item.approved", body="{}")
    WebhookAttempt.objects.create(delivery=delivery, number=1, started_at=timezone.now(),
                                  duration_ms=5, status_code=500)  # fmt: skip
    return item


@pytest.fixture(scope="module")
def _shared_history(module_db):
    return module_db.build(_history)


# One row (at least) in every history table, built once for the module.
history = per_test_copy("_shared_history")


@pytest.fixture
def own_history(transactional_db):
    """The same rows, built by the test itself (a transactional test commits them)."""
    return _history()


def _refused(sql, params=()):
    with (
        pytest.raises(IntegrityError, match="append-only"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, params)


def _append_only_models():
    return {m for m in apps.get_models() if issubclass(m, AppendOnlyModel)}


def test_every_history_model_is_covered():
    """Every append-only model has its triggers and is tested here: none can be missed."""
    assert set(HISTORY) == _append_only_models()
    tables = {m._meta.db_table for m in _append_only_models()}
    assert tables == {t for ts in history_tables().values() for t in ts}


def test_each_app_names_only_its_own_history_tables():
    """The trigger code knows no app: reviews and judging each list their own tables."""
    for label, tables in history_tables().items():
        assert all(t.startswith(f"{label}_") for t in tables), label
        owned = {m._meta.db_table for m in apps.get_app_config(label).get_models()}
        assert set(tables) <= owned, label


def _columns(model, without_id=False):
    names = [f.column for f in model._meta.concrete_fields]
    return ", ".join(c for c in names if not (without_id and c == "id"))


def _other_unique_keys(model, row):
    """Every unique set of columns but the id, as the database has them, that `row` fills
    (NULLs never collide)."""
    values = {f.column: getattr(row, f.attname) for f in model._meta.concrete_fields}
    with connection.cursor() as cursor:
        found = connection.introspection.get_constraints(cursor, model._meta.db_table)
    return [
        tuple(c["columns"])
        for c in found.values()
        if (c["unique"] or c["primary_key"])
        and c["columns"] not in ([], ["id"])
        and all(values[column] is not None for column in c["columns"])
    ]


def _rewrites(model):
    """Each way SQL can put a row over an existing history row on this backend."""
    table, row = model._meta.db_table, model._base_manager.order_by("pk").first()
    columns, rest = _columns(model), _columns(model, without_id=True)
    copy = f"SELECT {columns} FROM {table} WHERE id = {row.pk}"  # noqa: S608
    new_id = f"SELECT {row.pk + 10**6}, {rest} FROM {table} WHERE id = {row.pk}"  # noqa: S608
    upsert = f"INSERT INTO {table} ({columns}) {copy} AND true ON CONFLICT"  # noqa: S608
    statements = [
        f"{upsert} (id) DO UPDATE SET id = excluded.id",
        # A copy under a new id collides with the row on its other unique columns, if any.
        *(
            f"INSERT INTO {table} ({columns}) {new_id} AND true ON CONFLICT ({', '.join(u)}) "
            f"DO UPDATE SET id = excluded.id"
            for u in _other_unique_keys(model, row)
        ),
    ]
    if connection.vendor == "sqlite":
        statements += [
            f"INSERT OR REPLACE INTO {table} ({columns}) {copy}",
            f"REPLACE INTO {table} ({columns}) {copy}",
        ]
        if _other_unique_keys(model, row):
            statements.append(f"REPLACE INTO {table} ({columns}) {new_id}")
    return statements


@pytest.mark.django_db
@pytest.mark.parametrize("model", HISTORY, ids=lambda m: m.__name__)
def test_replace_and_upsert_cannot_rewrite(history, model):
    """REPLACE deletes the row it collides with without firing delete triggers (SQLite);
    an UPSERT updates it. Every unique key of every history table, on both databases."""
    before = list(model.objects.order_by("pk").values())
    for sql in _rewrites(model):
        _refused(sql)
    assert list(model.objects.order_by("pk").values()) == before


@pytest.mark.django_db(transaction=True)
def test_the_sqlite3_shell_cannot_replace_history_either(own_history):
    """Outside Django: no flag function, no recursive triggers; appending still works."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's REPLACE; PostgreSQL has none")
    shell = sqlite3.connect(connection.settings_dict["NAME"])
    try:
        for model in HISTORY:
            rewrites = [s for s in _rewrites(model) if "REPLACE" in s]
            before = shell.execute(f"SELECT * FROM {model._meta.db_table}").fetchall()  # noqa: S608
            for sql in rewrites:
                with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                    shell.execute(sql)
            after = shell.execute(f"SELECT * FROM {model._meta.db_table}").fetchall()  # noqa: S608
            assert after == before, model.__name__
        shell.execute(
            "INSERT INTO reviews_event (item_id, kind, data, created_at) "
            "SELECT item_id, 'note', '{}', created_at FROM reviews_event LIMIT 1"
        )
        shell.commit()
    finally:
        shell.close()


@pytest.mark.django_db
def test_a_partial_unique_index_is_guarded_only_where_it_applies():
    """The guard reads unique indexes from the schema, conditions included (future tables)."""
    if connection.vendor != "sqlite":
        pytest.skip("the insert guard is SQLite's")
    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE t_hist (id integer PRIMARY KEY, k int, live bool)")
        cursor.execute("CREATE UNIQUE INDEX t_hist_live ON t_hist (k) WHERE live")
        for sql in create_statements(connection, ["t_hist"]):
            cursor.execute(sql)
        cursor.execute("INSERT INTO t_hist VALUES (1, 7, 1), (2, 7, 0)")
        cursor.execute("INSERT INTO t_hist VALUES (3, 7, 0)")  # outside the index: no collision
        _refused("REPLACE INTO t_hist VALUES (4, 7, 1)")
        _refused("REPLACE INTO t_hist VALUES (2, 8, 0)")
        cursor.execute("SELECT id, k, live FROM t_hist ORDER BY id")
        assert cursor.fetchall() == [(1, 7, 1), (2, 7, 0), (3, 7, 0)]


@pytest.mark.django_db
@pytest.mark.parametrize("model", HISTORY, ids=lambda m: m.__name__)
def test_raw_sql_update_and_delete_are_refused(history, model):
    table = model._meta.db_table
    before = list(model.objects.order_by("pk").values())
    assert before, f"no {model.__name__} row to test with"
    pk = before[0]["id"]
    _refused(f"UPDATE {table} SET id = id WHERE id = %s", [pk])  # noqa: S608
    _refused(f"DELETE FROM {table} WHERE id = %s", [pk])  # noqa: S608
    _refused(f"DELETE FROM {table}")  # noqa: S608
    assert list(model.objects.order_by("pk").values()) == before


@pytest.mark.django_db
@pytest.mark.parametrize("model", HISTORY, ids=lambda m: m.__name__)
def test_orm_back_doors_are_refused(history, model):
    """The paths that go around the model's own guard."""
    before = list(model.objects.order_by("pk").values())
    row = model._base_manager.order_by("pk").first()
    with pytest.raises(IntegrityError), transaction.atomic():
        model._base_manager.filter(pk=row.pk).update(id=row.pk)
    with pytest.raises(IntegrityError), transaction.atomic():
        model._base_manager.filter(pk=row.pk)._raw_delete(connection.alias)
    with pytest.raises(IntegrityError), transaction.atomic():
        models.Model.save(row)  # skips AppendOnlyModel.save: a plain UPDATE by pk
    assert list(model.objects.order_by("pk").values()) == before


@pytest.mark.django_db
def test_upsert_cannot_rewrite_an_event(history):
    event = Event.objects.order_by("pk").first()
    clone = Event(pk=event.pk, item=event.item, kind="rewritten", data={})
    with pytest.raises(IntegrityError), transaction.atomic():
        Event._base_manager.bulk_create(
            [clone], update_conflicts=True, unique_fields=["id"], update_fields=["kind"]
        )
    event.refresh_from_db()
    assert event.kind != "rewritten"


@pytest.mark.django_db
def test_deleting_a_project_with_history_is_refused(history):
    with pytest.raises(IntegrityError), transaction.atomic():
        history.project.delete()
    assert Event.objects.filter(item=history).exists()


@pytest.mark.django_db
def test_unlocking_is_sqlite_only_and_for_python_callers(history):
    """The switch the test flush uses; on PostgreSQL it does nothing (TRUNCATE is the wipe)."""
    with history_unlocked(connection):
        if connection.vendor == "sqlite":
            with connection.cursor() as cursor:
                cursor.execute("DELETE FROM judging_heldoutaccess")
            assert not HeldOutAccess.objects.exists()
        else:
            _refused("DELETE FROM judging_heldoutaccess")
    _refused("DELETE FROM reviews_event")


@pytest.mark.django_db
def test_sqlite_table_rebuild_gets_its_triggers_back(history):
    """SQLite drops triggers with the table a migration rebuilds; post-migrate restores them."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite rebuilds tables; PostgreSQL keeps triggers through ALTER TABLE")
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER reviews_event_no_delete")
    triggers_after_migrate(sender=apps.get_app_config("reviews"), using=connection.alias)
    _refused("DELETE FROM reviews_event")


@pytest.mark.django_db(transaction=True)
def test_transactional_tests_still_start_empty_and_end_clean(own_history):
    """Reaching here twice (see the next test) proves the flush between them wiped history."""
    assert Event.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_flush_before_this_one_emptied_history():
    assert not any(m.objects.exists() for m in HISTORY)


@pytest.mark.postgres
@pytest.mark.django_db
def test_postgres_truncate_is_the_only_wipe(history):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_trigger WHERE tgname LIKE %s AND NOT tgisinternal",
            ["%_append_only"],
        )
        assert cursor.fetchone()[0] == len(HISTORY)
