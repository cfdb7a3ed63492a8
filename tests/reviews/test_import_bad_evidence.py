"""Acceptance: bad evidence in an import changes nothing and says which file is wrong.

Each kind of bad evidence file (a PDF without pages or with a password, a damaged or enormous
image, a 60 MB file, a missing or escaping path) is cited by the last case of a review JSON
file, of a .zip bundle and of an items JSONL file, after good evidence the import has already
stored; the checks are those of tests/reviews/bad_imports.py (no rows, no files left behind).
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from reviews.demo import documents as demo_evidence
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests import bad_evidence
from tests.helpers import media_files, per_test_copy, row_counts
from tests.reviews import bad_imports
from tests.reviews.bad_imports import GOOD_PDF, GOOD_PNG, Case, Expected, review_case

MB = 1024 * 1024
HUGE_BYTES = 60 * MB  # over the 50 MB EVIDENCE_MAX_BYTES default


@pytest.fixture(scope="module")
def _baseline(module_db, tmp_path_factory):
    return module_db.build(bad_imports.import_baseline, tmp_path_factory.mktemp("baseline"))


baseline = per_test_copy("_baseline")  # the example statement, imported once for the module


def _write_huge(path: Path) -> None:
    """A 60 MB "PDF": a real header, then a sparse hole (instant to make, no disk used)."""
    with path.open("wb") as handle:
        handle.write(b"%PDF-1.4\n")
        handle.truncate(HUGE_BYTES)


# Bad evidence, by case: (file name, writer or None when the file is absent, reason fragment).


def _writer(data: Callable[[], bytes]) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data())


BAD_EVIDENCE = {
    "zero-page-pdf": ("zero-pages.pdf", _writer(bad_evidence.zero_page_pdf), "no pages"),
    "encrypted-pdf": ("locked.pdf", _writer(bad_evidence.encrypted_pdf), "password"),
    "truncated-png": ("cut.png", _writer(bad_evidence.truncated_png), "truncated or damaged"),
    "png-bomb-20k": (
        "bomb.png",
        _writer(lambda: bad_evidence.bomb_png(20000, 20000)),
        "20000 x 20000",
    ),
    "60mb-file": ("huge.pdf", _write_huge, "too large"),
    "missing-file": ("missing.pdf", None, "missing.pdf"),
    "dotdot-path": ("../outside.pdf", None, "escapes"),
}


def _evidence_folder(folder: Path, bad_name: str, write) -> None:
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    (folder / GOOD_PNG).write_bytes(demo_evidence.receipt_png())
    baselines = bad_imports.EXAMPLES / "statement-0912.pdf"  # the one the baseline stored
    shutil.copy(baselines, folder / "statement-0912.pdf")
    if write is not None:
        write(folder / bad_name)
    (folder.parent / "outside.pdf").write_bytes(demo_evidence.statement_pdf())  # real, outside


def _zip_add_file(bundle: zipfile.ZipFile, source: Path, name: str) -> None:
    """Stream a file into the bundle (never holds the 60 MB file in memory), stored: the
    sparse zeros deflated would trip the zip-ratio limit before the evidence size limit."""
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_STORED
    with source.open("rb") as src, bundle.open(info, "w", force_zip64=True) as dst:
        shutil.copyfileobj(src, dst, MB)


def _carrier_review_json(kind: str) -> Case:
    bad_name, write, reason = BAD_EVIDENCE[kind]

    def build(folder: Path):
        _evidence_folder(folder, bad_name, write)
        # statement-0912.pdf is already stored by the baseline: it must survive the rollback.
        case = review_case("bad-evidence", ["statement-0912.pdf", GOOD_PDF, GOOD_PNG, bad_name])
        return bad_imports.write_json(folder / "case.review.json", case), None

    missing = "not found" if kind == "missing-file" else reason
    return Case(
        build, Expected("case.review.json", 'case "bad-evidence"', "$.sources[3].path", missing)
    )


def _carrier_bundle(kind: str) -> Case:
    bad_name, write, reason = BAD_EVIDENCE[kind]

    def build(folder: Path):
        _evidence_folder(folder, bad_name, write)
        target = folder / "bundle.zip"
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bundle:
            bundle.writestr("aaa-good.json", json.dumps(review_case("good-one", [GOOD_PNG])))
            case = review_case("bad-evidence", ["statement-0912.pdf", GOOD_PDF, GOOD_PNG, bad_name])
            bundle.writestr("case.json", json.dumps(case))
            for name in ("statement-0912.pdf", GOOD_PDF, GOOD_PNG):
                bundle.write(folder / name, name)
            if write is not None:
                _zip_add_file(bundle, folder / bad_name, bad_name)
        return target, None

    why = "not in the bundle" if kind == "missing-file" else reason
    return Case(
        build, Expected("bundle.zip/case.json", 'case "bad-evidence"', "$.sources[3].path", why)
    )


def _carrier_items(kind: str) -> Case:
    bad_name, write, reason = BAD_EVIDENCE[kind]

    def build(folder: Path):
        _evidence_folder(folder, bad_name, write)
        records = [
            {
                "type": "item",
                "item_id": "first",
                "input": "a",
                "output": "b",
                "slices": ["new-slice"],
                "evidence": [GOOD_PNG],
            },
            {
                "type": "item",
                "item_id": "second",
                "input": {"q": 1},
                "output": "c",
                "evidence": ["statement-0912.pdf", GOOD_PDF, bad_name],
            },
        ]
        return bad_imports.write_jsonl(folder / "items.jsonl", records), None

    why = "not found" if kind == "missing-file" else reason
    return Case(build, Expected("items.jsonl", "line 2", "$.evidence[2]", why))


CASES: dict[str, Case] = {}
for _kind in BAD_EVIDENCE:
    CASES[f"review-json/{_kind}"] = _carrier_review_json(_kind)
    CASES[f"bundle-zip/{_kind}"] = _carrier_bundle(_kind)
    CASES[f"items-jsonl/{_kind}"] = _carrier_items(_kind)


@pytest.mark.parametrize("name", list(CASES))
def test_bad_evidence_is_refused_and_changes_nothing(name, baseline, tmp_path):
    bad_imports.assert_refused_and_unchanged(CASES[name], baseline, tmp_path)


@pytest.mark.parametrize("carrier", ["review-json", "bundle-zip", "items-jsonl"])
def test_a_60mb_file_is_refused_by_its_size_without_reading_it(carrier, baseline, tmp_path):
    """The size limit is checked before the file is read: memory stays far below 60 MB."""
    case = CASES[f"{carrier}/60mb-file"]
    folder = tmp_path / "input"
    folder.mkdir()
    path, format = case.build(folder)
    tracemalloc.start()
    try:
        with pytest.raises(ImportFailed) as failure:
            file_import(actor=None, project=baseline, path=path, format=format)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "60.0 MB" in failure.value.error.reason and "limit 50.0 MB" in failure.value.error.reason
    assert peak < 16 * MB, f"peak {peak / MB:.1f} MB: the 60 MB file was read"


def test_a_lower_size_limit_applies(baseline, tmp_path, settings):
    settings.EVIDENCE_MAX_BYTES = 1000
    folder = tmp_path / "input"
    folder.mkdir()
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    path = bad_imports.write_json(folder / "small.review.json", review_case("small", [GOOD_PDF]))
    rows_before, files_before = row_counts(), media_files()
    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=baseline, path=path)
    assert failure.value.error.path == "$.sources[0].path"
    assert "too large" in failure.value.error.reason
    assert (row_counts(), media_files()) == (rows_before, files_before)
