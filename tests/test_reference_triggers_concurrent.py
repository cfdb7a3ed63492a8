"""The reference triggers under concurrency (PostgreSQL): like a foreign key, a question being
written and its item being deleted cannot both succeed, whichever starts first (migration
reviews 0035). The same harness as the link triggers'."""

import pytest
from django.db import IntegrityError, connection, transaction

from reviews.models import Item, Question
from tests.factories import ItemFactory
from tests.reviews.test_item_slice_links_concurrent import _both, _waiting_on_a_lock

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _postgres_only():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")


def _delete(pk: int) -> None:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DELETE FROM reviews_item WHERE id = %s", [pk])


def test_deleting_an_item_while_a_question_on_it_is_written_fails():
    item = ItemFactory()

    def ask(ready):
        with transaction.atomic():
            Question.objects.create(item=item, kind="criterion", key="k")
            ready.set()
            _waiting_on_a_lock("DELETE FROM reviews_item")

    outcome = _both(ask, lambda: _delete(item.pk))
    assert outcome["first"] is None
    assert isinstance(outcome["second"], IntegrityError), outcome
    assert Question.objects.filter(item=item).exists()


def test_asking_on_an_item_being_deleted_fails():
    item = ItemFactory()

    def delete(ready):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM reviews_item WHERE id = %s", [item.pk])
            ready.set()
            _waiting_on_a_lock("INSERT INTO")

    def ask():
        with transaction.atomic():
            Question.objects.create(item_id=item.pk, kind="criterion", key="k")

    outcome = _both(delete, ask)
    assert outcome["first"] is None
    assert isinstance(outcome["second"], IntegrityError), outcome
    assert not Item.objects.filter(pk=item.pk).exists()
    assert not Question.objects.exists()
