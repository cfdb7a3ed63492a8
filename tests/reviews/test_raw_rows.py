"""`raw_rows` gives what the ORM gives: every field, converted the same way (JSON, datetimes,
booleans, decimals), on SQLite and on PostgreSQL alike."""

from datetime import timedelta

import pytest
from django.utils import timezone

from evalsite import raw_rows
from reviews.models import Assignment, AssignmentStatus, Item, Project

pytestmark = pytest.mark.django_db


def _fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def test_rows_become_the_instances_the_orm_reads(project, rater):
    item = Item.objects.create(
        project=project,
        external_id="raw-1",
        input={"question": "Née à Zürich?", "n": [1, 2.5, None]},
        output="yes",
        metadata={"nested": {"ok": True}},
    )
    lease = timezone.now() + timedelta(minutes=5)
    Assignment.objects.create(
        item=item, rater=rater, status=AssignmentStatus.ACTIVE, lease_expires_at=lease, gold=True
    )
    found = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Item, 'i')}, {raw_rows.columns(Project, 'p')},"  # noqa: S608
        f" {raw_rows.columns(Assignment, 'a')}, a.status FROM reviews_item i"
        " JOIN reviews_project p ON p.id = i.project_id"
        " JOIN reviews_assignment a ON a.item_id = i.id WHERE i.external_id = %s",
        ["raw-1"],
        Item,
        Project,
        Assignment,
        extra=1,
    )
    ((raw_item, raw_project, raw_assignment, status),) = found
    assert _fields(raw_item) == _fields(Item.objects.get(pk=item.pk))
    assert _fields(raw_project) == _fields(Project.objects.get(pk=project.pk))
    assert _fields(raw_assignment) == _fields(Assignment.objects.get(item=item))
    assert raw_assignment.lease_expires_at == lease and raw_assignment.gold is True
    assert status == "active"
    # Saved instances, as the ORM's: they update, they do not insert again.
    assert not raw_assignment._state.adding
    raw_assignment.status = AssignmentStatus.SUBMITTED
    raw_assignment.save(update_fields=["status"])
    assert Assignment.objects.get(item=item).status == AssignmentStatus.SUBMITTED


def test_no_row_is_an_empty_list(project):
    sql = f"SELECT {raw_rows.columns(Item, 'i')} FROM reviews_item i WHERE i.id = %s"  # noqa: S608
    assert raw_rows.fetch(sql, [0], Item) == []


def test_insert_writes_what_save_writes(project, rater):
    from reviews.models import Event, EventKind

    item = Item.objects.create(project=project, external_id="raw-2")
    event = raw_rows.insert(
        Event(item_id=item.pk, kind=EventKind.ANSWERED, actor=rater, data={"seq": 1, "é": [1]})
    )
    assert event.pk and not event._state.adding
    stored = Event.objects.get(pk=event.pk)
    assert _fields(stored) == _fields(event)  # created_at filled in by its pre_save, as save() does
    assert stored.data == {"seq": 1, "é": [1]} and stored.created_at is not None


def test_update_writes_what_save_with_update_fields_writes(project, rater):
    from django.db import DatabaseError

    item = Item.objects.create(project=project, external_id="raw-3", metadata={"a": 1})
    before = Item.objects.get(pk=item.pk).updated_at
    item.status, item.metadata, item.title = "resolved", {"b": [2, "é"]}, "not saved"
    raw_rows.update(item, ["status", "metadata", "updated_at"])
    stored = Item.objects.get(pk=item.pk)
    assert (stored.status, stored.metadata, stored.title) == ("resolved", {"b": [2, "é"]}, "")
    assert stored.updated_at == item.updated_at and stored.updated_at > before  # auto_now
    gone = Item(pk=10**9, project=project, external_id="gone")
    with pytest.raises(DatabaseError):  # as save(update_fields=...) refuses a missing row
        raw_rows.update(gone, ["status"])
