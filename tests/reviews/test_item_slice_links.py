"""Item.slices' links keep the promise foreign keys made, checked by triggers once a statement
(migration 0018): no link to a missing item or slice, no deleting or renumbering what a link
names, whichever way the rows are written: the ORM, raw SQL, or the import's COPY."""

import pytest
from django.db import IntegrityError, connection, transaction

from reviews import link_triggers
from reviews.models import Item, ItemSlice, Slice
from reviews.services.imports.bulk_insert import insert_rows
from tests.factories import ItemFactory, ProjectFactory

pytestmark = pytest.mark.django_db

MISSING = 10**12  # no row has this id


@pytest.fixture
def linked():
    """An item in two slices, and a third slice nobody is in."""
    project = ProjectFactory()
    item = ItemFactory(project=project)
    a, b, spare = (Slice.objects.create(project=project, name=n) for n in ("a", "b", "spare"))
    item.slices.add(a, b)
    return item, a, spare


def _refused(sql: str, params: list) -> None:
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


def test_the_orm_links_and_unlinks_as_before(linked):
    item, a, spare = linked
    item.slices.add(spare)
    item.slices.remove(a)
    assert sorted(item.slices.values_list("name", flat=True)) == ["b", "spare"]
    assert list(spare.items.all()) == [item]


@pytest.mark.parametrize("column", ["item_id", "slice_id"])
def test_a_link_to_a_missing_row_is_refused(linked, column):
    item, a, _ = linked
    values = {"item_id": item.pk, "slice_id": a.pk, column: MISSING}
    with pytest.raises(IntegrityError), transaction.atomic():
        ItemSlice.objects.create(**values)
    with pytest.raises(IntegrityError), transaction.atomic():
        ItemSlice.objects.bulk_create([ItemSlice(**values)])
    assert ItemSlice.objects.count() == 2


def test_the_import_path_refuses_a_link_to_a_missing_item_among_good_ones(linked):
    item, _, spare = linked
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_rows(ItemSlice, ("item_id", "slice_id"), [(item.pk, spare.pk), (MISSING, spare.pk)])
    assert not spare.items.exists()


@pytest.mark.parametrize("column", ["item_id", "slice_id"])
def test_a_link_cannot_be_pointed_at_a_missing_row(linked, column):
    _refused(f"UPDATE reviews_item_slices SET {column} = %s", [MISSING])  # noqa: S608


def test_an_item_or_slice_that_links_name_cannot_be_deleted_behind_the_orm(linked):
    item, a, spare = linked
    _refused("DELETE FROM reviews_item WHERE id = %s", [item.pk])
    _refused("DELETE FROM reviews_slice WHERE id = %s", [a.pk])
    with transaction.atomic(), connection.cursor() as cursor:  # nobody links to it: fine
        cursor.execute("DELETE FROM reviews_slice WHERE id = %s", [spare.pk])
    assert Item.objects.filter(pk=item.pk).exists()
    assert item.slices.count() == 2


def test_an_id_that_links_name_does_not_change(linked):
    item, a, _ = linked
    _refused("UPDATE reviews_item SET id = %s WHERE id = %s", [MISSING, item.pk])
    _refused("UPDATE reviews_slice SET id = %s WHERE id = %s", [MISSING, a.pk])


def test_deleting_through_the_orm_takes_the_links_with_it(linked):
    item, a, _ = linked
    a.delete()
    assert list(item.slices.values_list("name", flat=True)) == ["b"]
    item.delete()
    assert not ItemSlice.objects.exists()
    project = ProjectFactory()
    other = ItemFactory(project=project)
    other.slices.add(Slice.objects.create(project=project, name="c"))
    project.delete()
    assert not ItemSlice.objects.exists()


def _constraints_checked_now() -> None:
    """The fixture's deferred key checks run now: PostgreSQL truncates no table with pending
    trigger events (the test's transaction stands in for a finished one)."""
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


@pytest.mark.parametrize(
    "truncate",
    ["TRUNCATE reviews_slice", "TRUNCATE reviews_item CASCADE", "TRUNCATE reviews_slice CASCADE"],
)
def test_a_truncate_that_leaves_links_is_refused(linked, truncate):
    """CASCADE follows foreign keys, and the links have none (PostgreSQL; SQLite has no
    TRUNCATE, and its DELETE without WHERE fires the row triggers)."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's TRUNCATE")
    item, a, _ = linked
    _constraints_checked_now()
    _refused(truncate, [])
    assert item.slices.count() == 2


def test_a_truncate_that_takes_the_links_too_passes(linked):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's TRUNCATE")
    _constraints_checked_now()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("TRUNCATE reviews_slice, reviews_item_slices")
    assert not Slice.objects.exists() and not ItemSlice.objects.exists()


def test_a_sqlite_table_rebuild_gets_the_triggers_back(linked):
    """SQLite drops triggers with the table a migration rebuilds; post-migrate restores them."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite rebuilds tables; PostgreSQL keeps triggers through ALTER TABLE")
    item, _, _ = linked
    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER reviews_item_links_delete")
    link_triggers.ensure_triggers(connection)
    _refused("DELETE FROM reviews_item WHERE id = %s", [item.pk])


@pytest.mark.django_db(transaction=True)
def test_the_test_suites_wipe_passes_the_triggers():
    """Linked rows left for the wipe between transactional tests (a failed wipe errors here)."""
    item = ItemFactory()
    item.slices.add(Slice.objects.create(project=item.project, name="left"))
