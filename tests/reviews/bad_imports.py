"""The bad-import corpus's shared parts: the baseline project, cases and what a refusal leaves.

Used by test_import_bad_inputs.py (bad records and formats) and test_import_bad_evidence.py
(bad evidence files): each case must raise ImportFailed naming the file, record and JSON path,
and leave every table's row count and MEDIA_ROOT's files as they were.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.factories import ProjectFactory
from tests.helpers import media_files, row_counts

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLES = DATA / "examples"


def import_baseline(folder: Path):
    project = ProjectFactory()
    for name in ("statement-0912.review.json", "statement-0912.pdf"):
        shutil.copy(EXAMPLES / name, folder / name)
    report = file_import(actor=None, project=project, path=folder / "statement-0912.review.json")
    assert report.counts["items_created"] == 1 and report.counts["documents"] == 1
    assert media_files(), "the baseline stored its evidence"
    return project


@dataclass(frozen=True)
class Expected:
    file: str
    record: str | None
    path: str | None
    reason: str  # a fragment of the reason, case-insensitive


@dataclass(frozen=True)
class Case:
    build: Callable[[Path], tuple[Path, str | None]]  # folder -> (file to import, --format)
    expected: Expected


def review_case(case_id: str, evidence: list[str]) -> dict:
    """A pending review citing `evidence` (one source per path, page 1)."""
    sources = [
        {"artifact_id": f"src-{i}", "path": path, "authority": "evidence", "metadata": {"page": 1}}
        for i, path in enumerate(evidence)
    ]
    last = f"src-{len(evidence) - 1}"
    return {
        "case_id": case_id,
        "status": "pending",
        "approved_by": None,
        "expected_fields": ["$.currency", "$.total"],
        "sources": sources,
        "claims": [
            {
                "path": "$.currency",
                "expected_value": "USD",
                "reference_id": "src-0",
                "evidence": "USD",
                "confidence": 0.95,
                "providers": ["openai", "claude"],
            },
        ],
        "review_items": [
            {
                "path": "$.total",
                "reason": "disagreement",
                "decision": None,
                "value": None,
                "note": None,
                "candidates": [
                    {
                        "provider": "openai",
                        "expected_value": "1,200.00",
                        "reference_id": "src-0",
                        "evidence": "Total 1,200.00",
                        "confidence": 0.8,
                    },
                    {
                        "provider": "claude",
                        "expected_value": "1,290.00",
                        "reference_id": last,
                        "evidence": "Total 1,290.00",
                        "confidence": 0.6,
                    },
                ],
            },
        ],
    }


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj, indent=2), encoding="utf-8")
    return path


def write_jsonl(path: Path, objs) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for obj in objs:
            handle.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    return path


GOOD_PDF = "good-statement.pdf"  # stored before the bad file is met: must be removed again
GOOD_PNG = "good-receipt.png"


def assert_refused_and_unchanged(case: Case, project, tmp_path: Path) -> None:
    """The case's file is refused with its expected error, and nothing is written or left."""
    folder = tmp_path / "input"
    folder.mkdir()
    path, format = case.build(folder)
    rows_before, files_before = row_counts(), media_files()

    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=project, path=path, format=format)

    error, want = failure.value.error, case.expected
    assert (error.file, error.record, error.path) == (want.file, want.record, want.path), repr(
        error
    )
    assert want.reason.lower() in error.reason.lower(), repr(error)
    message = str(failure.value)  # the one line the CLI, the upload page and the API show
    for part in (want.file, want.record, want.path):
        if part:
            assert part in message
    assert row_counts() == rows_before, "a refused import wrote rows"
    assert media_files() == files_before, "a refused import left (or removed) evidence files"
