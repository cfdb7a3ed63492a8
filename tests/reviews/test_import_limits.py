"""Each import limit refuses with its own message naming the setting, and changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviews.formats import limits
from reviews.models import Item
from reviews.services.imports.pipeline import ImportFailed, file_import

pytestmark = pytest.mark.django_db


def _jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


ITEMS = [{"type": "item", "item_id": f"i{n}", "input": "q" * 50} for n in range(5)]
REVIEW = {"case_id": "c", "claims": [{"path": "$.total", "expected_value": "1"}]}


@pytest.mark.parametrize(
    ("override", "name", "content", "message"),
    [
        ({"records": 3}, "a.jsonl", ITEMS, "line 4: the number of records is over the limit of 3"),
        ({"file_bytes": 100}, "a.jsonl", ITEMS, "is over the limit of 100 (IMPORT_MAX_FILE_BYTES)"),
        ({"json_bytes": 20}, "c.review.json", REVIEW, "(IMPORT_MAX_JSON_BYTES)"),
        ({"string_chars": 10}, "a.jsonl", ITEMS, "line 1, $.input: a string's length (50)"),
        ({"depth": 2}, "c.review.json", REVIEW, "$.claims[0]: JSON nesting is over the limit of 2"),
        ({"line_bytes": 1024}, "a.jsonl", [{**ITEMS[0], "input": "x" * 2000}], "line 1: a line"),
    ],
)
def test_each_limit_has_its_own_message(project, tmp_path, override, name, content, message):
    path = tmp_path / name
    if isinstance(content, list):
        _jsonl(path, content)
    else:
        path.write_text(json.dumps(content))
    setting = limits.SETTINGS[next(iter(override))]
    with limits.overridden(**override), pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=project, path=path)
    assert message in str(failure.value) and setting in str(failure.value)
    assert str(failure.value).startswith(name)
    assert not Item.objects.exists()


def test_settings_reach_the_readers(settings):
    """reviews.apps hands the configured settings to reviews.formats (which knows no Django)."""
    for field, name in limits.SETTINGS.items():
        assert getattr(limits.current(), field) == getattr(settings, name)


def test_unknown_review_keys_are_reported_not_kept(project, tmp_path):
    review = {
        **REVIEW,
        "secret_blob": "x" * 1000,
        "claims": [{"path": "$.total", "expected_value": "1", "vendor_debug": {"a": 1}}],
    }
    path = tmp_path / "c.review.json"
    path.write_text(json.dumps(review))
    report = file_import(actor=None, project=project, path=path)
    stored = Item.objects.get().metadata["review_file"]
    assert "secret_blob" not in stored and "vendor_debug" not in stored["claims"][0]
    assert 'case "c": unknown keys not kept: $.secret_blob, $.claims[0].vendor_debug' in (
        report.notes
    )
