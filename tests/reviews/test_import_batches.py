"""Items written in batches (`reviews/services/imports/item_batch.py`, BATCH made 3 here) stay all or
nothing: an item named twice is refused wherever the two lines fall (same batch, the next
one, several batches on, on a batch edge), with the same error; a row the database refuses in
the middle of an import fails it with the database's own error and writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from django.db import DatabaseError, IntegrityError, connection

from reviews.models import Event, Item, Slice
from reviews.services.imports import item_batch
from reviews.services.imports.copy_text import JsonText
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.factories import ProjectFactory
from tests.helpers import row_counts

pytestmark = pytest.mark.django_db


def _items(n: int) -> list[dict]:
    return [
        {
            "type": "item",
            "item_id": f"item-{i:03d}",
            "input": {"question": f"q{i}"},
            "output": f"answer {i}",
            "slices": ["all", f"mod-{i % 3}"],
        }
        for i in range(n)
    ]


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _import(project, path: Path):
    return file_import(
        actor=None, project=project, path=path, options={"questions": ["criterion:correct"]}
    )


@pytest.fixture
def small_batches(monkeypatch, project, tmp_path):
    """Batches of 3 items, and a criterion so the import adds questions too."""
    monkeypatch.setattr(item_batch, "BATCH", 3)
    for name in ("all", "mod-0"):
        Slice.objects.create(project=project, name=name)
    criterion = {"type": "criterion", "name": "correct", "labels": ["pass", "fail"]}
    file_import(actor=None, project=project, path=_jsonl(tmp_path / "c.jsonl", [criterion]))


# Lines (1-based) of the first and second mention; batches of 3: lines 1-3, 4-6, 7-9...
@pytest.mark.parametrize(
    ("first", "second"),
    [(1, 3), (1, 5), (3, 4), (4, 9), (1, 8), (2, 14), (6, 14)],
    ids=["same", "next", "edge", "next-last", "two-on", "four-on", "two-on-edge"],
)
def test_an_item_named_twice_across_batches_is_refused(
    project, tmp_path, small_batches, first, second
):
    records = _items(16)
    records.insert(second - 1, {**records[first - 1], "output": "again"})
    rows = row_counts()
    with pytest.raises(ImportFailed) as failure:
        _import(project, _jsonl(tmp_path / "twice.jsonl", records))
    error = failure.value.error
    assert (error.file, error.record, error.path) == ("twice.jsonl", f"line {second}", "$.item_id")
    assert error.reason == f"item 'item-{first - 1:03d}' appears twice (also on line {first})"
    assert row_counts() == rows


def test_small_batches_import_every_item_once(project, tmp_path, small_batches):
    report = _import(project, _jsonl(tmp_path / "items.jsonl", _items(17)))
    assert (report.counts["items_created"], report.counts["questions"]) == (17, 17)
    assert Item.objects.filter(project=project).count() == 17
    assert Event.objects.filter(item__project=project, kind="imported").count() == 17
    again = _import(project, _jsonl(tmp_path / "items.jsonl", _items(17)))
    assert again.counts == {"items_unchanged": 17, "questions": 0}


def test_a_row_the_database_refuses_mid_import_writes_nothing(
    project, tmp_path, small_batches, monkeypatch
):
    real = item_batch._imported

    def broken(file: str, where: str, asked: str) -> JsonText:  # line 8 (third batch): not JSON
        return JsonText("{not json") if where == "line 8" else real(file, where, asked)

    monkeypatch.setattr(item_batch, "_imported", broken)
    rows = row_counts()
    with pytest.raises(DatabaseError) as failure:
        _import(project, _jsonl(tmp_path / "items.jsonl", _items(16)))
    if connection.vendor == "postgresql":
        assert isinstance(failure.value.__cause__, psycopg.errors.InvalidTextRepresentation)
        assert "json" in str(failure.value)
    else:
        assert "CHECK constraint failed" in str(failure.value)
    assert row_counts() == rows


@pytest.mark.skipif(connection.vendor != "postgresql", reason="pks drawn from a sequence")
def test_a_refused_item_row_raises_integrity_error_naming_the_constraint(
    project, tmp_path, small_batches, monkeypatch
):
    taken = Item.objects.create(project=ProjectFactory(), external_id="elsewhere").pk
    real = item_batch.next_pks
    calls = iter(range(100))

    def clashing(model, count):  # the third batch's first item gets a pk already used
        pks = real(model, count)
        return [taken, *pks[1:]] if model is Item and next(calls) == 2 else pks

    monkeypatch.setattr(item_batch, "next_pks", clashing)
    rows = row_counts()
    with pytest.raises(IntegrityError, match="reviews_item_pkey") as failure:
        _import(project, _jsonl(tmp_path / "items.jsonl", _items(16)))
    assert isinstance(failure.value.__cause__, psycopg.errors.UniqueViolation)
    assert row_counts() == rows


@pytest.mark.skipif(connection.vendor != "postgresql", reason="COPYs from a helper thread")
def test_background_copies_keep_their_order_raise_at_wait_and_start_none_after_close(project):
    import threading

    from django.db import transaction

    from reviews.services.imports.background_copies import BackgroundCopies
    from reviews.services.imports.bulk_insert import insert_rows

    def names():
        return list(Slice.objects.filter(project=project).order_by("pk").values_list("name"))

    def add(copies, *names):
        insert_rows(
            Slice, ("name",), [(n,) for n in names], copies=copies, project_id=project.pk,
            critical=False,
        )  # fmt: skip

    copies = BackgroundCopies(connection)
    try:
        add(copies, "a", "b")
        add(copies, "c")
        copies.wait()
        assert names() == [("a",), ("b",), ("c",)]  # in the order given
        with pytest.raises(IntegrityError, match="slice_unique"), transaction.atomic():
            add(copies, "a")  # refused: the error comes at the next wait
            copies.wait()
    finally:
        copies.close()
    assert names() == [("a",), ("b",), ("c",)]

    copies = BackgroundCopies(connection)
    gate = threading.Event()
    copies.pool.submit(gate.wait)  # the helper is busy...
    add(copies, "late")  # ...so this COPY waits its turn
    threading.Timer(0.2, gate.set).start()
    copies.close()  # the transaction is ending: the waiting COPY never starts
    assert names() == [("a",), ("b",), ("c",)]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="COPYs from a helper thread")
def test_background_copies_hold_a_few_copies_texts_at_most(project, monkeypatch):
    from reviews.services.imports.background_copies import BackgroundCopies
    from reviews.services.imports.bulk_insert import insert_rows

    copies = BackgroundCopies(connection)
    held = []
    submit = copies.pool.submit
    monkeypatch.setattr(
        copies.pool, "submit", lambda f: held.append(len(copies.pending)) or submit(f)
    )
    import threading

    gate = threading.Event()
    copies.pending.append(submit(gate.wait))  # the server is slow to store...
    threading.Timer(0.3, gate.set).start()
    try:
        for n in range(20):  # ...and the caller never waits: the texts held must not grow
            insert_rows(Slice, ("name",), [(f"s{n}",)], copies=copies, project_id=project.pk,
                        critical=False)  # fmt: skip
        copies.wait()
    finally:
        copies.close()
    assert max(held) < BackgroundCopies.MAX_PENDING
    assert Slice.objects.filter(project=project).count() == 20


def test_new_items_around_one_already_there_are_written_as_the_file_says(
    project, tmp_path, small_batches
):
    """On PostgreSQL a batch's rows are made before the look-up says which items are new, and
    no longer once an item of the file was already there: a new item before, beside and after
    one already there is stored with its own values either way."""
    records = _items(9)
    _import(project, _jsonl(tmp_path / "one.jsonl", [records[4]]))
    before = Item.objects.get(project=project, external_id="item-004")
    report = _import(project, _jsonl(tmp_path / "all.jsonl", records))
    assert (report.counts["items_created"], report.counts["items_unchanged"]) == (8, 1)
    items = {i.external_id: i for i in Item.objects.filter(project=project)}
    assert items["item-004"].pk == before.pk
    for record in records:
        item = items[record["item_id"]]
        assert (item.input, item.output) == (record["input"], record["output"])
        assert sorted(s.name for s in item.slices.all()) == sorted(record["slices"])
        assert item.questions.count() == 1
