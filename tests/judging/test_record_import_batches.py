"""Verdicts and human labels written per batch (issue #33): a fixed number of statements per
batch, the rows as the records gave them, and a rater's second label refused wherever it is in
the file, with memory that does not grow with the file."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging.models import HumanLabel, Verdict
from judging.services.imports import batches
from reviews.formats.errors import FormatError
from reviews.models import Item
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.judging.helpers import (
    criterion_record,
    human_record,
    item_record,
    verdict_record,
    write_jsonl,
)

pytestmark = pytest.mark.django_db

BATCH = 5


@pytest.fixture
def small_batches(monkeypatch):
    monkeypatch.setattr(batches, "BATCH", BATCH)


def _imported(project, path):
    return file_import(actor=None, project=project, path=path)


def _statements(project, tmp_path, name: str, records: list[dict]) -> int:
    path = write_jsonl(tmp_path / name, records)
    with CaptureQueriesContext(connection) as queries:
        _imported(project, path)
    return len(queries)


def test_statements_per_batch_are_pinned(project, tmp_path, small_batches):
    """Per batch of verdicts: the items and their revisions, the stored rows, the insert (a
    COPY on PostgreSQL, where sequential scans are also turned off and on again around the
    stored rows' look-up): none per record."""
    records = [criterion_record()] + [item_record(f"i{n}") for n in range(40)]
    records.append(verdict_record("i0", "pass"))  # the judge is there before the counts
    _imported(project, write_jsonl(tmp_path / "items.jsonl", records))
    one = _statements(project, tmp_path, "one.jsonl", [verdict_record("i0", "pass", sample=1)])
    counts = []
    for batches_of in (2, 6):
        records = [
            verdict_record(f"i{n}", "pass", sample=batches_of) for n in range(BATCH * batches_of)
        ]
        counts.append(_statements(project, tmp_path, f"v{batches_of}.jsonl", records))
    per_batch = 5 if connection.vendor == "postgresql" else 3
    assert counts[1] - counts[0] == 4 * per_batch
    assert counts[0] - one == per_batch
    assert Verdict.objects.count() == 2 + BATCH * 8


def test_labels_per_batch_are_pinned(project, tmp_path, small_batches):
    _imported(project, write_jsonl(tmp_path / "items.jsonl", [criterion_record()] + [
        item_record(f"i{n}") for n in range(40)
    ]))  # fmt: skip
    counts = []
    for rater, batches_of in (("ana", 2), ("ben", 6)):
        records = [human_record(f"i{n}", rater, "pass") for n in range(BATCH * batches_of)]
        counts.append(_statements(project, tmp_path, f"{rater}.jsonl", records))
    per_batch = 5 if connection.vendor == "postgresql" else 3
    assert counts[1] - counts[0] == 4 * per_batch
    assert HumanLabel.objects.count() == BATCH * 8


def test_rows_keep_every_field_and_the_extra_keys(project, tmp_path, small_batches):
    extra = {"tags": ["a", "b"], "meta": {"tokens": 12, "ok": True, "none": None}}
    records = [criterion_record(), item_record("i1")]
    records += [
        verdict_record(
            "i1",
            "fail",
            sample=n,
            confidence=0.25,
            explanation="tab\there",
            raw="RAW\\N",
            **extra,
        )
        for n in range(7)
    ]
    records += [human_record("i1", f"r{n}", "pass", note="a note", source="x") for n in range(7)]
    _imported(project, write_jsonl(tmp_path / "f.jsonl", records))
    verdict = Verdict.objects.get(sample=6)
    assert (verdict.label, verdict.confidence, verdict.explanation, verdict.raw) == (
        "fail",
        0.25,
        "tab\there",
        "RAW\\N",
    )
    assert (verdict.extra, verdict.source_name, verdict.revision) == (extra, "f.jsonl", 1)
    assert verdict.judge.temperature == 0.2 and verdict.created_at is not None
    label = HumanLabel.objects.get(rater="r6")
    assert (label.label, label.note, label.extra, label.revision) == (
        "pass",
        "a note",
        {"source": "x"},
        1,
    )
    assert Item.objects.get(external_id="i1").verdicts.count() == 7


def test_a_second_label_in_a_later_batch_is_refused(project, tmp_path, small_batches):
    records = [criterion_record()] + [item_record(f"i{n}") for n in range(10)]
    records += [human_record(f"i{n}", "ana", "pass") for n in range(10)]
    records.append(human_record("i2", "ana", "pass"))
    with pytest.raises(ImportFailed) as failed:
        _imported(project, write_jsonl(tmp_path / "h.jsonl", records))
    error: FormatError = failed.value.error
    assert (error.file, error.record, error.path) == ("h.jsonl", "line 22", "$.rater")
    assert error.reason == (
        "rater 'ana' labels item 'i2' for criterion 'faithful' twice (also an earlier line)"
    )
    assert HumanLabel.objects.count() == 0


def test_a_label_from_an_earlier_import_is_no_second_label(project, tmp_path, small_batches):
    records = [criterion_record()] + [item_record(f"i{n}") for n in range(10)]
    records += [human_record(f"i{n}", "ana", "pass") for n in range(10)]
    _imported(project, write_jsonl(tmp_path / "a.jsonl", records))
    again = [human_record(f"i{n}", "ana", "pass") for n in range(10)]
    report = _imported(project, write_jsonl(tmp_path / "b.jsonl", again))
    assert (report.counts["human_labels_unchanged"], report.counts["human_labels"]) == (10, 0)
    assert HumanLabel.objects.count() == 10
