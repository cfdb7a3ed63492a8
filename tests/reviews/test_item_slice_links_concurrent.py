"""The link triggers under concurrency (PostgreSQL): like a foreign key, a link being written
and its slice being deleted cannot both succeed, whichever starts first (migration 0018).

Each pair runs in two threads (two connections); the first holds its transaction open until
PostgreSQL shows the second waiting on its lock, then commits.
"""

import threading
import time

import pytest
from django.db import IntegrityError, connection, transaction

from reviews.models import ItemSlice, Slice
from tests.factories import ItemFactory

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")


def _waiting_on_a_lock(statement: str) -> None:
    """Return once another backend running `statement…` waits for a lock (60 s at most)."""
    for _ in range(600):
        with connection.cursor() as cursor:
            # Statistics views hold still for a transaction unless their snapshot is cleared.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND query LIKE %s",
                [statement + "%"],
            )
            if cursor.fetchone()[0]:
                return
        time.sleep(0.1)
    raise AssertionError(f"nobody waited on a lock running {statement!r}")


def _both(first, second) -> dict:
    """Run `first(ready)` and `second()` in threads; `second` starts once `first` sets ready.
    Returns what each raised (or None)."""
    ready = threading.Event()
    outcome: dict = {}

    def run(name, target, *args):
        try:
            target(*args)
            outcome[name] = None
        except Exception as error:  # noqa: BLE001 - handed to the test
            outcome[name] = error
        finally:
            ready.set()  # never leave the other thread waiting
            connection.close()

    threads = [
        threading.Thread(target=run, args=("first", first, ready)),
        threading.Thread(target=lambda: (ready.wait(60), run("second", second))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return outcome


@pytest.fixture
def item_and_slice():
    item = ItemFactory()
    return item, Slice.objects.create(project=item.project, name="contested")


def test_deleting_a_slice_while_a_link_to_it_is_written_fails(item_and_slice):
    item, piece = item_and_slice

    def link(ready):
        with transaction.atomic():
            item.slices.add(piece)
            ready.set()
            _waiting_on_a_lock("DELETE FROM reviews_slice")

    def delete():
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM reviews_slice WHERE id = %s", [piece.pk])

    outcome = _both(link, delete)
    assert outcome["first"] is None
    assert isinstance(outcome["second"], IntegrityError), outcome
    assert list(item.slices.all()) == [piece]


def test_linking_to_a_slice_being_deleted_fails(item_and_slice):
    item, piece = item_and_slice

    def delete(ready):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM reviews_slice WHERE id = %s", [piece.pk])
            ready.set()
            _waiting_on_a_lock("INSERT INTO")

    def link():
        with transaction.atomic():
            ItemSlice.objects.create(item=item, slice_id=piece.pk)

    outcome = _both(delete, link)
    assert outcome["first"] is None
    assert isinstance(outcome["second"], IntegrityError), outcome
    assert not Slice.objects.filter(pk=piece.pk).exists()
    assert not ItemSlice.objects.exists()
