"""Acceptance: a bad import file changes nothing and says exactly what is wrong (DESIGN §4.3).

Bad records and formats here; bad evidence files in test_import_bad_evidence.py. Every case is
imported into a project that already holds data (a baseline import of the example statement).
Each must raise ImportFailed whose FormatError names the file, the record
(line or case id) and the JSON path, and afterwards every table of `reviews` and `judging` has
the same row count and MEDIA_ROOT holds exactly the files it held before: evidence the failed
import stored (good files cited before the bad one) is removed again, evidence stored by earlier
imports is not touched.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from reviews.demo import documents as demo_evidence
from reviews.services.imports.pipeline import file_import
from tests import bad_evidence
from tests.helpers import per_test_copy, row_counts
from tests.reviews.bad_imports import (
    DATA,
    EXAMPLES,
    GOOD_PDF,
    GOOD_PNG,
    Case,
    Expected,
    assert_refused_and_unchanged,
    import_baseline,
    review_case,
    write_json,
    write_jsonl,
)

BAD = DATA / "bad"


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
    assert "reviews.ItemSlice" in labels  # the item <-> slice links


@pytest.fixture(scope="module")
def _baseline(module_db, tmp_path_factory):
    return module_db.build(import_baseline, tmp_path_factory.mktemp("baseline"))


# The project already holds the example statement (its PDF stored under MEDIA_ROOT), imported
# once for the module: each test gets the rows and a copy of the files.
baseline = per_test_copy("_baseline")


# ---------------------------------------------------------------------------------------------
# Building the corpus in tmp_path (bad evidence files: test_import_bad_evidence.py)


def _copy_bad(name: str, format: str | None = None):
    def build(folder: Path):
        shutil.copy(BAD / name, folder / name)
        return folder / name, format

    return build


def _wrong_types_review(folder: Path):
    case = review_case("typed", [GOOD_PDF])
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    case["review_items"][0]["candidates"][1]["confidence"] = "high"
    return write_json(folder / "typed.review.json", case), None


def _wrong_types_items(folder: Path):
    return write_jsonl(
        folder / "typed.jsonl",
        [
            {"type": "item", "item_id": "ok", "input": "x", "output": "y"},
            {"type": "item", "item_id": "bad", "input": "x", "slices": "safety-sensitive"},
        ],
    ), None


def _wrong_types_reviews_jsonl(folder: Path):
    good = review_case("jsonl-good", [GOOD_PDF])
    bad = review_case("jsonl-bad", [GOOD_PDF])
    bad["claims"] = {"path": "$.currency"}  # an object where a list belongs
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    return write_jsonl(folder / "cases.reviews.jsonl", [good, bad]), None


def _malformed_jsonl(folder: Path):
    good = review_case("jsonl-good", [GOOD_PDF])
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    return write_jsonl(
        folder / "broken.reviews.jsonl", [good, '{"case_id": "x", "sources": [']
    ), None


def _junk_format(folder: Path):
    shutil.copy(EXAMPLES / "statement-0912.review.json", folder / "statement-0912.review.json")
    return folder / "statement-0912.review.json", "junk"


def _undetectable_json(folder: Path):
    return write_json(folder / "mystery.json", {"name": "not an import", "rows": [1, 2]}), None


def _bad_slice_name(folder: Path):
    return write_jsonl(
        folder / "sliced.jsonl",
        [
            {"type": "item", "item_id": "ok", "slices": ["fine", "page-count>5"]},
            {"type": "item", "item_id": "spaced", "slices": ["fine", "safety sensitive"]},
        ],
    ), None


def _long_item_id(folder: Path):
    return write_jsonl(
        folder / "long.jsonl",
        [
            {"type": "item", "item_id": "ok"},
            {"type": "item", "item_id": "x" * 201},
        ],
    ), None


def _nul_in_a_string(folder: Path):
    """A NUL character: PostgreSQL stores none in text or JSON (SQLite lost the item's id)."""
    return write_jsonl(
        folder / "nul.jsonl",
        [
            {"type": "item", "item_id": "ok"},
            {"type": "item", "item_id": "nul", "metadata": {"note": ["a\u0000b"]}},
        ],
    ), None


def _number_out_of_range(folder: Path):
    target = folder / "huge.jsonl"
    target.write_text(
        '{"type": "item", "item_id": "ok"}\n{"type": "item", "item_id": "big", "metadata": '
        '{"score": 1e999}}\n',
        encoding="utf-8",
    )
    return target, None


def _page_past_its_column(folder: Path):
    case = review_case("far", [GOOD_PDF])
    case["sources"][0]["metadata"]["page"] = (
        2**31
    )  # past PostgreSQL's integer (and SQLite's: 2**63)
    (folder / GOOD_PDF).write_bytes(demo_evidence.statement_pdf())
    return write_json(folder / "far.review.json", case), None


def _sample_past_its_column(folder: Path):
    judge = {"provider": "openai", "model": "gpt-4o"}
    return write_jsonl(
        folder / "samples.jsonl",
        [
            {"type": "criterion", "name": "ok", "labels": ["pass", "fail"], "positive": "pass"},
            {"type": "item", "item_id": "s-1"},
            {"type": "verdict", "item_id": "s-1", "criterion": "ok", "label": "pass",
             "judge": judge, "sample": 32768},
        ],
    ), None  # fmt: skip


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
        review_case("last-1", [GOOD_PDF]),
        review_case("last-2", [GOOD_PNG]),
        review_case("last-3", ["zero.pdf"]),
    ]
    return write_jsonl(folder / "three.reviews.jsonl", cases), None


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

    return write_jsonl(folder / "many.jsonl", records()), None


def _last_csv_row_bad(folder: Path):
    target = folder / "refs.csv"
    rows = ["case_id,field_path,expected"]
    rows += [f"case-{n},$.amount,{n}.00" for n in range(50)]
    rows.append("case-50,amount,51.00")
    target.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return target, None


def _last_mixed_bad(folder: Path):
    """Items and their judging records, then one record of an unknown kind."""
    return write_jsonl(
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
    # Values no database column stores: refused as they are read.
    "nul-character": Case(
        _nul_in_a_string, Expected("nul.jsonl", "line 2", "$.metadata.note[0]", "NUL")
    ),
    "number-out-of-range": Case(
        _number_out_of_range, Expected("huge.jsonl", "line 2", "$", "1e999")
    ),
    "page-past-its-column": Case(
        _page_past_its_column,
        Expected(
            "far.review.json", 'case "far"', "$.sources[0].metadata.page", "less than or equal"
        ),
    ),
    "sample-past-its-column": Case(
        _sample_past_its_column,
        Expected("samples.jsonl", "line 3", "$.sample", "less than or equal"),
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


# ---------------------------------------------------------------------------------------------
# The test


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_refused_and_changes_nothing(name, baseline, tmp_path):
    assert_refused_and_unchanged(CASES[name], baseline, tmp_path)


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
