"""The database itself refuses to change history: raw SQL, `_base_manager`, upserts, `Model.save`.

Runs on SQLite and, in the PostgreSQL run (`DATABASE_URL=postgres://…`), on PostgreSQL: the
triggers differ per backend (reviews/history_triggers.py), the promise does not.
"""

import pytest
from django.db import IntegrityError, connection, models, transaction

from judging.models import (
    Criterion,
    DashboardSnapshot,
    FailureTag,
    HeldOutAccess,
    HumanLabel,
    JudgeConfig,
    JudgeVersion,
    ScoreRun,
)
from reviews.history_triggers import HISTORY_TABLES, ensure_triggers, history_unlocked
from reviews.models import (
    Answer,
    Approval,
    Event,
    GoldMark,
    KeyRevocation,
    Reference,
    Resolution,
    ResolutionSource,
    Role,
    TrustedKey,
)
from reviews.services.approval import approval_record
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
    HeldOutAccess,
    DashboardSnapshot,
    FailureTag,
    JudgeVersion,
    ScoreRun,
    TrustedKey,
    KeyRevocation,
    GoldMark,
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


def test_every_history_model_is_covered():
    tables = {m._meta.db_table for m in HISTORY}
    assert tables == {t for ts in HISTORY_TABLES.values() for t in ts}


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
    ensure_triggers(connection)
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
