"""Acceptance: a bad import file changes nothing and says exactly what is wrong (DESIGN §4.3).

Every case below is imported into a project that already holds data (a baseline import of the
example statement). Each must raise ImportFailed whose FormatError names the file, the record
(line or case id) and the JSON path, and afterwards every table of `reviews` and `judging` has
the same row count and MEDIA_ROOT holds exactly the files it held before: evidence the failed
import stored (good files cited before the bad one) is removed again, evidence stored by earlier
imports is not touched.
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from reviews.demo import documents as demo_evidence
from reviews.services.imports import ImportFailed, file_import
from tests import bad_evidence
from tests.factories import ProjectFactory
from tests.helpers import media_files, per_test_copy, row_counts

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLES = DATA / "examples"
BAD = DATA / "bad"

MB = 1024 * 1024
HUGE_BYTES = 60 * MB  # over the 50 MB EVIDENCE_MAX_BYTES default


# ---------------------------------------------------------------------------------------------
# Database and storage snapshots


def test_the_snapshot_covers_the_models_the_issue_names(db):
    labels = set(row_counts())
    for name in (
        "Item",
        "Document",
        "ItemSource",
        "Reference",
        "Claim",
        "Question",
        "Event",
        "Slice",
        "Resolution",
        "Approval",
        "Answer",
    ):
        assert f"reviews.{name}" in labels
    assert "reviews.Item_slices" in labels  # the item <-> slice links


def _import_baseline(folder: Path):
    project = ProjectFactory()
    for name in ("statement-0912.review.json", "statement-0912.pdf"):
        shutil.copy(EXAMPLES / name, folder / name)
    report = file_import(actor=None, project=project, path=folder / "statement-0912.review.json")
    assert report.counts["items_created"] == 1 and report.counts["documents"] == 1
    assert media_files(), "the baseline stored its evidence"
    return project


@pytest.fixture(scope="module")
def _baseline(module_db, tmp_path_factory):
    return module_db.build(_import_baseline, tmp_path_factory.mktemp("baseline"))


# The project already holds the example statement (its PDF stored under MEDIA_ROOT), imported
# once for the module: each test gets the rows and a copy of the files.
baseline = per_test_copy("_baseline")


# ---------------------------------------------------------------------------------------------
# Building the corpus in tmp_path


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


def _review(case_id: str, evidence: list[str]) -> dict:
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


def _write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj, indent=2), encoding="utf-8")
    return path


def _write_jsonl(path: Path, objs) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for obj in objs:
            handle.write((obj if isinstance(obj, str) else json.dumps(obj)) + "\n")
    return path


def _write_huge(path: Path) -> None:
    """A 60 MB "PDF": a real header, then a sparse hole (instant to make, no disk used)."""
    with path.open("wb") as handle:
        handle.write(b"%PDF-1.4\n")
        handle.truncate(HUGE_BYTES)


# Bad evidence, by case: (file name, writer or None when the file is absent, reason fragment).
GOOD_PDF = "good-statement.pdf"  # stored before the bad file is met: must be removed again
GOOD_PNG = "good-receipt.png"


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
    shutil.copy(EXAMPLES / "statement-0912.pdf", folder / "statement-0912.pdf")  # baseline's
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
        case = _review("bad-evidence", ["statement-0912.pdf", GOOD_PDF, GOOD_PNG, bad_name])
        return _write_json(folder / "case.review.json", case), None

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
            bundle.writestr("aaa-good.json", json.dumps(_review("good-one", [GOOD_PNG])))
            case = _review("bad-evidence", ["statement-0912.pdf", GOOD_PDF, GOOD_PNG, bad_name])
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
        return _write_jsonl(folder / "items.jsonl", records), None

    why = "not found" if kind == "missing-file" else reason
    return Case(build, Expected("items.jsonl", "line 2", "$.evidence[2]", why))


def _copy_bad(name: str, format: str | None = None):
    def build(folder: Path):
        shutil.copy(BAD / name, folder / name)
        return folder / name, format

    return build


def _wrong_types_review(folder: Path):
    case = _review("typed", [GOOD_PDF])
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    case["review_items"][0]["candidates"][1]["confidence"] = "high"
    return _write_json(folder / "typed.review.json", case), None


def _wrong_types_items(folder: Path):
    return _write_jsonl(
        folder / "typed.jsonl",
        [
            {"type": "item", "item_id": "ok", "input": "x", "output": "y"},
            {"type": "item", "item_id": "bad", "input": "x", "slices": "safety-sensitive"},
        ],
    ), None


def _wrong_types_reviews_jsonl(folder: Path):
    good = _review("jsonl-good", [GOOD_PDF])
    bad = _review("jsonl-bad", [GOOD_PDF])
    bad["claims"] = {"path": "$.currency"}  # an object where a list belongs
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    return _write_jsonl(folder / "cases.reviews.jsonl", [good, bad]), None


def _malformed_jsonl(folder: Path):
    good = _review("jsonl-good", [GOOD_PDF])
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    return _write_jsonl(
        folder / "broken.reviews.jsonl", [good, '{"case_id": "x", "sources": [']
    ), None


def _junk_format(folder: Path):
    shutil.copy(EXAMPLES / "statement-0912.review.json", folder / "statement-0912.review.json")
    return folder / "statement-0912.review.json", "junk"


def _undetectable_json(folder: Path):
    return _write_json(folder / "mystery.json", {"name": "not an import", "rows": [1, 2]}), None


def _bad_slice_name(folder: Path):
    return _write_jsonl(
        folder / "sliced.jsonl",
        [
            {"type": "item", "item_id": "ok", "slices": ["fine", "page-count>5"]},
            {"type": "item", "item_id": "spaced", "slices": ["fine", "safety sensitive"]},
        ],
    ), None


def _long_item_id(folder: Path):
    return _write_jsonl(
        folder / "long.jsonl",
        [
            {"type": "item", "item_id": "ok"},
            {"type": "item", "item_id": "x" * 201},
        ],
    ), None


def _items_csv_missing_column(folder: Path):
    target = folder / "items.csv"
    target.write_text("type,input,output\nitem,hello,world\n", encoding="utf-8")
    return target, None


def _missing_evidence_column_value(folder: Path):
    target = folder / "reference.csv"
    target.write_text("case_id,path\nstatement-0912,$.currency\n", encoding="utf-8")
    return target, "csv"


# The last record is the bad one: everything before it must be rolled back too.
def _last_review_bad(folder: Path):
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    (folder / GOOD_PNG).write_bytes(demo_evidence.receipt_png())
    (folder / "zero.pdf").write_bytes(bad_evidence.zero_page_pdf())
    cases = [
        _review("last-1", [GOOD_PDF]),
        _review("last-2", [GOOD_PNG]),
        _review("last-3", ["zero.pdf"]),
    ]
    return _write_jsonl(folder / "three.reviews.jsonl", cases), None


def _last_item_bad(folder: Path):
    """2,500 good items (two full batches are written before the bad line is read)."""
    (folder / GOOD_PNG).write_bytes(demo_evidence.receipt_png())

    def records():
        yield {
            "type": "item",
            "item_id": "with-evidence",
            "evidence": [GOOD_PNG],
            "slices": ["from-a-failed-file"],
        }
        for n in range(2499):
            yield {
                "type": "item",
                "item_id": f"gen-{n:05d}",
                "input": {"n": n},
                "output": f"answer {n}",
                "slices": ["bulk", f"mod-{n % 7}"],
            }
        yield {"type": "item", "item_id": "last", "input": 42}

    return _write_jsonl(folder / "many.jsonl", records()), None


def _last_csv_row_bad(folder: Path):
    target = folder / "refs.csv"
    rows = ["case_id,field_path,expected"]
    rows += [f"case-{n},$.amount,{n}.00" for n in range(50)]
    rows.append("case-50,amount,51.00")
    target.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return target, None


def _last_mixed_bad(folder: Path):
    """Items and their judging records, then one record of an unknown kind."""
    return _write_jsonl(
        folder / "mixed.jsonl",
        [
            {"type": "item", "item_id": "m-1", "input": "x", "output": "y", "slices": ["s"]},
            {"type": "item", "item_id": "m-2", "input": "x", "output": "z"},
            {"type": "verdikt", "item_id": "m-1"},
        ],
    ), None


CASES: dict[str, Case] = {
    # Not a file we can read at all.
    "malformed-json": Case(
        _copy_bad("malformed.review.json"),
        Expected(
            "malformed.review.json", None, "$", "invalid JSON: Expecting value at line 3 column 1"
        ),
    ),
    "malformed-jsonl-line": Case(
        _malformed_jsonl, Expected("broken.reviews.jsonl", "line 2", "$", "invalid JSON")
    ),
    # Well-formed, wrong types.
    "wrong-type-review-confidence": Case(
        _wrong_types_review,
        Expected(
            "typed.review.json",
            'case "typed"',
            "$.review_items[0].candidates[1].confidence",
            "valid number",
        ),
    ),
    "wrong-type-review-claims": Case(
        _wrong_types_reviews_jsonl,
        Expected("cases.reviews.jsonl", "line 2", "$.claims", "valid list"),
    ),
    "wrong-type-item-slices": Case(
        _wrong_types_items, Expected("typed.jsonl", "line 2", "$.slices", "valid list")
    ),
    "wrong-slice-name": Case(
        _bad_slice_name,
        Expected("sliced.jsonl", "line 2", "$.slices[1]", "no spaces, commas or bars"),
    ),
    "item-id-too-long": Case(
        _long_item_id,
        Expected("long.jsonl", "line 2", "$.item_id", "201 characters long (at most 200)"),
    ),
    # Unknown format.
    "format-flag-junk": Case(
        _junk_format, Expected("statement-0912.review.json", None, None, "unknown format 'junk'")
    ),
    "undetectable-text": Case(
        _copy_bad("unknown-format.txt"),
        Expected("unknown-format.txt", None, None, "unknown format"),
    ),
    "undetectable-json": Case(
        _undetectable_json, Expected("mystery.json", None, None, "unknown JSON object")
    ),
    "unknown-record-type": Case(
        _copy_bad("unknown-type.jsonl"),
        Expected("unknown-type.jsonl", "line 3", "$.type", "unknown type 'verdikt'"),
    ),
    # Paths and CSV columns.
    "dotdot-path-example": Case(
        _copy_bad("escaping-path.review.json"),
        Expected(
            "escaping-path.review.json", 'case "statement-0912"', "$.sources[1].path", "escapes"
        ),
    ),
    "csv-missing-column": Case(
        _copy_bad("missing-column.csv"),
        Expected("missing-column.csv", "line 1", None, "missing column 'expected_value'"),
    ),
    "csv-missing-column-forced": Case(
        _missing_evidence_column_value,
        Expected("reference.csv", "line 1", None, "missing column 'expected_value'"),
    ),
    "csv-items-missing-item_id": Case(
        _items_csv_missing_column, Expected("items.csv", "line 2", "item_id", "Field required")
    ),
    # A judging format (registered by `judging`): already works, so it is covered here too.
    "textflow-bad-final-decision": Case(
        _copy_bad("textflow-bad-final.json"),
        Expected("textflow-bad-final.json", 'key "0"', "$.final_decision", "not the majority"),
    ),
    # The last record is bad: the good records before it are rolled back.
    "last-review-of-three": Case(
        _last_review_bad,
        Expected("three.reviews.jsonl", 'case "last-3"', "$.sources[0].path", "no pages"),
    ),
    "last-item-of-2501": Case(
        _last_item_bad,
        Expected("many.jsonl", "line 2501", "$.input", "must be a string or an object"),
    ),
    "last-csv-row": Case(
        _last_csv_row_bad, Expected("refs.csv", "line 52", "field_path", "not a JSON path")
    ),
    "last-record-unknown-kind": Case(
        _last_mixed_bad, Expected("mixed.jsonl", "line 3", "$.type", "unknown type 'verdikt'")
    ),
}
for _kind in BAD_EVIDENCE:
    CASES[f"review-json/{_kind}"] = _carrier_review_json(_kind)
    CASES[f"bundle-zip/{_kind}"] = _carrier_bundle(_kind)
    CASES[f"items-jsonl/{_kind}"] = _carrier_items(_kind)


# ---------------------------------------------------------------------------------------------
# The test


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_refused_and_changes_nothing(name, baseline, tmp_path):
    case = CASES[name]
    folder = tmp_path / "input"
    folder.mkdir()
    path, format = case.build(folder)
    rows_before, files_before = row_counts(), media_files()

    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=baseline, path=path, format=format)

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
    path = _write_json(folder / "small.review.json", _review("small", [GOOD_PDF]))
    rows_before, files_before = row_counts(), media_files()
    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=baseline, path=path)
    assert failure.value.error.path == "$.sources[0].path"
    assert "too large" in failure.value.error.reason
    assert (row_counts(), media_files()) == (rows_before, files_before)


def test_the_same_good_files_import_once_the_bad_record_is_fixed(baseline, tmp_path):
    """The corpus is bad only where it says: with the last record fixed, everything imports."""
    folder = tmp_path / "input"
    folder.mkdir()
    path, _ = _last_review_bad(folder)
    lines = path.read_text(encoding="utf-8").splitlines()
    fixed = json.loads(lines[-1])
    fixed["sources"][0]["path"] = GOOD_PDF
    path.write_text("\n".join([*lines[:-1], json.dumps(fixed)]) + "\n", encoding="utf-8")
    report = file_import(actor=None, project=baseline, path=path)
    assert report.counts["items_created"] == 3
    assert report.counts["documents"] == 2  # the statement PDF and the receipt, once each
