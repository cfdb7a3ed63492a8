"""raw_rows.atomic_with_last_writes: a transaction whose last writes are given rows. Outermost
on PostgreSQL, its COMMIT goes with them (one round trip); a failure there rolls the whole
block back; inside another transaction nothing commits early."""

import pytest
from django.db import IntegrityError, connection, transaction
from psycopg.pq import TransactionStatus

from evalsite import raw_rows
from reviews.models import Slice
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db(transaction=True)  # real commits: no test transaction


def _names(project) -> list[str]:
    return sorted(Slice.objects.filter(project=project).values_list("name", flat=True))


@pytest.fixture
def status_after_rows(monkeypatch):
    """The connection's transaction status right after the rows are written."""
    seen = []
    write = raw_rows._insert_all

    def spied(rows, **kwargs):
        written = write(rows, **kwargs)
        if connection.vendor == "postgresql":
            seen.append(connection.connection.info.transaction_status)
        return written

    monkeypatch.setattr(raw_rows, "_insert_all", spied)
    return seen


def test_the_rows_are_written_last_and_committed(status_after_rows):
    project = ProjectFactory()
    committed = []
    with raw_rows.atomic_with_last_writes() as last_writes:
        Slice.objects.create(project=project, name="first")
        last_writes([Slice(project=project, name="b"), Slice(project=project, name="c")])
        assert _names(project) == ["first"]  # not yet: the block's body goes on
        transaction.on_commit(lambda: committed.append(True))
    assert _names(project) == ["b", "c", "first"]
    assert committed == [True]
    if connection.vendor == "postgresql":  # the COMMIT went with the rows
        assert status_after_rows == [TransactionStatus.IDLE]


def test_a_refused_row_rolls_the_whole_block_back():
    project = ProjectFactory()
    Slice.objects.create(project=project, name="taken")
    with pytest.raises(IntegrityError), raw_rows.atomic_with_last_writes() as last_writes:
        Slice.objects.create(project=project, name="before")
        last_writes([Slice(project=project, name="new"), Slice(project=project, name="taken")])
    assert _names(project) == ["taken"]
    Slice.objects.create(project=project, name="after")  # the connection is usable
    assert _names(project) == ["after", "taken"]


def test_inside_another_transaction_nothing_commits_early(status_after_rows):
    project = ProjectFactory()
    with pytest.raises(RuntimeError), transaction.atomic():
        with raw_rows.atomic_with_last_writes() as last_writes:
            last_writes([Slice(project=project, name="inner")])
        if connection.vendor == "postgresql":
            assert status_after_rows == [TransactionStatus.INTRANS]
        raise RuntimeError("the outer transaction fails")
    assert _names(project) == []


def test_without_rows_it_is_an_atomic_block():
    project = ProjectFactory()
    with raw_rows.atomic_with_last_writes():
        Slice.objects.create(project=project, name="only")
    assert _names(project) == ["only"]


def test_a_check_that_fails_at_commit_rolls_the_whole_block_back():
    """A reference is checked at COMMIT (deferred): refused there, nothing is written."""
    project = ProjectFactory()
    with pytest.raises(IntegrityError), raw_rows.atomic_with_last_writes() as last_writes:
        Slice.objects.create(project=project, name="before")
        last_writes([Slice(project_id=project.pk + 1000, name="nowhere")])
    assert _names(project) == []
    assert not Slice.objects.filter(name="nowhere").exists()
