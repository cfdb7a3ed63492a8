"""An import keeps the collector off the objects that were there before it (`gc.freeze`,
bench/README.md "Imports") and gives them back when it ends, refused or not."""

from __future__ import annotations

import gc
import json

import pytest

from reviews.services.imports import records as record_import
from reviews.services.imports.pipeline import ImportFailed, file_import

pytestmark = pytest.mark.django_db


def _file(tmp_path, records):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _spy(monkeypatch) -> list[int]:
    """The number of frozen objects while the write step runs."""
    seen: list[int] = []
    write = record_import._Records.write

    def spied(self, path):
        seen.append(gc.get_freeze_count())
        return write(self, path)

    monkeypatch.setattr(record_import._Records, "write", spied)
    return seen


def test_old_objects_are_frozen_during_an_import_and_given_back(project, tmp_path, monkeypatch):
    seen = _spy(monkeypatch)
    item = {"type": "item", "item_id": "a", "output": "x"}
    report = file_import(actor=None, project=project, path=_file(tmp_path, [item]))
    assert report.counts["items_created"] == 1
    assert seen and seen[0] > 1000  # the process's modules, Django, the test's objects...
    assert gc.get_freeze_count() == 0


def test_a_refused_import_gives_them_back_too(project, tmp_path, monkeypatch):
    seen = _spy(monkeypatch)
    twice = [{"type": "item", "item_id": "a", "output": str(n)} for n in range(2)]
    with pytest.raises(ImportFailed):
        file_import(actor=None, project=project, path=_file(tmp_path, twice))
    assert seen and seen[0] > 1000
    assert gc.get_freeze_count() == 0
