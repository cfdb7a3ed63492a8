"""A long review import on SQLite leaves the database writable and stays all-or-nothing
(issue 26, F4; reviews/services/imports/staging.py).

New cases are written in short transactions under a holding project nobody can see and
published at the end; another connection can write between them, never sees half an import,
and a failure (a bad case at the end, a clash with a concurrent import, a process killed on
the way) leaves no row behind. On PostgreSQL the import stays one transaction.
"""

import os
import sqlite3
import threading
import time
import zipfile
from contextlib import contextmanager

import pytest
from django.db import connection

from bench._review_bundle import write_review_bundle
from reviews.models import Document, Event, Item, Project, Reference
from reviews.services.imports import review_files, staging
from reviews.services.imports.pipeline import ImportFailed, file_import
from reviews.services.imports.staging import HOLDING_PREFIX, SLICE_SECONDS
from tests.factories import ProjectFactory

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's one writer")

CASES = 300


def _rows() -> dict[str, int]:
    models = (Item, Reference, Event, Document, Project)
    return {model.__name__: model._base_manager.count() for model in models}


def _waits_for_the_lock(db_file: str, project: int, running: threading.Event):
    """While `running`: take the write lock from a connection of our own (busy timeout 2 s),
    and count the project's items; how long each wait took, and the counts seen."""
    waits, seen = [], []
    other = sqlite3.connect(db_file, timeout=2, isolation_level=None)
    try:
        while running.is_set():
            start = time.perf_counter()
            other.execute("BEGIN IMMEDIATE")
            waits.append(time.perf_counter() - start)
            other.execute("ROLLBACK")
            count = "SELECT count(*) FROM reviews_item WHERE project_id = ?"
            seen.append(other.execute(count, [project]).fetchone()[0])
            time.sleep(0.02)
    finally:
        other.close()
    return waits, seen


@contextmanager
def _another_connection_writing(project):
    """A thread taking the write lock and counting the project's items while the block runs;
    gives {"waits": [...], "seen": [...]} once it ends."""
    running, result = threading.Event(), {}
    running.set()
    db_file = connection.settings_dict["NAME"]

    def watch():
        result.update(zip(("waits", "seen"), _waits_for_the_lock(db_file, project.pk, running)))

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        yield result
    finally:
        running.clear()
        watcher.join()
    # Every attempt got the lock (a locked one raises after 2 s), soon: the import held it a
    # slice at a time (a loaded machine gets some slack), never for the whole import.
    assert len(result["waits"]) > 10
    assert max(result["waits"]) < 1.5, sorted(result["waits"])[-5:]


def test_another_connection_writes_during_the_import_and_sees_all_or_nothing(
    transactional_db, tmp_path
):
    project = ProjectFactory()
    bundle = write_review_bundle(tmp_path / "bundle.zip", CASES)
    with _another_connection_writing(project) as seen_by_the_other:
        start = time.perf_counter()
        report = file_import(actor=None, project=project, path=bundle)
        took = time.perf_counter() - start
    assert report.counts["items_created"] == CASES
    assert took > 4 * SLICE_SECONDS  # long enough to need several transactions
    # Nobody saw part of the file: the project had none of its items, then all of them.
    assert set(seen_by_the_other["seen"]) <= {0, CASES}
    assert Item.objects.filter(project=project).count() == CASES
    assert not Project.objects.filter(slug__startswith=HOLDING_PREFIX).exists()


def _with_bad_last_case(bundle, tmp_path):
    """The bundle plus one last case whose evidence is not a PDF (refused while writing)."""
    target = tmp_path / "bad-last.zip"
    with zipfile.ZipFile(bundle) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "reviews.jsonl":
                data += (
                    data.splitlines()[0]
                    .replace(b'"case-000000"', b'"zz-last"')
                    .replace(b"statement-0912.pdf", b"broken.pdf")
                    + b"\n"
                )
            out.writestr(info, data)
        out.writestr("broken.pdf", b"%PDF-1.4 this is no PDF")
    return target


def test_a_case_refused_after_many_transactions_leaves_nothing(transactional_db, tmp_path):
    project = ProjectFactory()
    before = _rows()
    bundle = _with_bad_last_case(write_review_bundle(tmp_path / "b.zip", CASES), tmp_path)
    refused = pytest.raises(ImportFailed, match=r'case "zz-last"')
    with _another_connection_writing(project) as seen_by_the_other, refused:
        file_import(actor=None, project=project, path=bundle)
    assert set(seen_by_the_other["seen"]) == {0}
    assert _rows() == before


def test_a_case_a_concurrent_import_created_meanwhile_refuses_the_publish(
    transactional_db, tmp_path, monkeypatch
):
    project = ProjectFactory()
    bundle = write_review_bundle(tmp_path / "b.zip", 50)
    write_new = review_files.in_short_transactions

    def another_import_first(units, write):
        write_new(units, write)
        Item.objects.create(project=project, external_id="case-000007", title="theirs")

    monkeypatch.setattr(review_files, "in_short_transactions", another_import_first)
    before = _rows()
    with pytest.raises(ImportFailed, match="case 'case-000007' was imported by another import"):
        file_import(actor=None, project=project, path=bundle)
    after = _rows()
    assert after == {**before, "Item": before["Item"] + 1}  # theirs, none of ours
    assert list(Item.objects.filter(project=project).values_list("title", flat=True)) == ["theirs"]


def test_the_rows_of_an_import_killed_before_publishing_are_discarded_by_the_next(
    transactional_db, tmp_path, monkeypatch
):
    """A killed process cannot discard its holding project; the next import on this machine
    finds its owner dead and does."""
    project = ProjectFactory()
    before = _rows()
    monkeypatch.setattr(staging.Staging, "publish", _killed)
    monkeypatch.setattr("reviews.services.imports.pipeline.holding_discard", lambda staging: None)
    with pytest.raises(KeyboardInterrupt):
        file_import(actor=None, project=project, path=write_review_bundle(tmp_path / "a.zip", 30))
    holding = Project.objects.get(slug__startswith=HOLDING_PREFIX)
    assert Item.objects.filter(project=holding).count() == 30
    holding.description = holding.description.replace(f'"pid": {os.getpid()}', '"pid": 999999999')
    holding.save()
    monkeypatch.undo()

    file_import(actor=None, project=project, path=write_review_bundle(tmp_path / "b.zip", 3))
    assert not Project.objects.filter(slug__startswith=HOLDING_PREFIX).exists()
    assert Item.objects.count() == before["Item"] + 3
    assert Reference.objects.count() == before["Reference"] + 3


def _killed(staging, *, file):
    raise KeyboardInterrupt  # as far as the rows are concerned, the process died here
