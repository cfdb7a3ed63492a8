"""FORMATS §5 format detection from a name and the first bytes only."""

import json
import zipfile
from pathlib import Path

import pytest

from reviews.formats.detect import HEAD_BYTES, csv_flavour
from reviews.formats.errors import FormatError
from reviews.services.imports.pipeline import choose_format
from reviews.services.imports.pipeline import detect as detect_format

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLES = DATA / "examples"


def head(path):
    with path.open("rb") as fh:
        return fh.read(HEAD_BYTES)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("review-bundle.zip", "review"),
        ("statement-0912.review.json", "review"),
        ("reviews.jsonl", "review"),
        ("judging.jsonl", "jsonl"),
        ("textflow-evaluated.json", "textflow"),
    ],
)
def test_examples(name, expected):
    assert detect_format(name, head(EXAMPLES / name)) == expected


def test_zip_by_magic_without_the_extension():
    assert detect_format("upload.bin", head(EXAMPLES / "review-bundle.zip")) == "review"


def test_a_bundle_whose_first_member_is_a_stored_pdf_stays_a_bundle(tmp_path):
    """A stored (uncompressed) PDF member puts "%PDF-" in the zip's first bytes, where PDF
    readers look for a header; the zip's own magic decides (it was imported as `files`)."""
    bundle = tmp_path / "bundle.zip"
    with zipfile.ZipFile(bundle, "w") as zf:  # ZIP_STORED: the member's bytes as they are
        zf.writestr("c0.pdf", b"%PDF-1.7\n%%EOF\n")
        zf.writestr("c0.review.json", json.dumps({"case_id": "c0"}))
    assert b"%PDF-" in head(bundle)[:1024]
    assert detect_format("bundle.zip", head(bundle)) == "review"
    assert choose_format(bundle, name="bundle.zip", requested=None) == "review"


def test_jsonl_without_extension_and_single_line_objects():
    assert detect_format("upload", head(EXAMPLES / "judging.jsonl")) == "jsonl"
    one = json.dumps({"type": "item", "item_id": "a"}).encode()
    assert detect_format("one.jsonl", one) == "jsonl"
    assert detect_format("one.json", one) == "jsonl"
    minified_review = json.dumps(json.loads(head(EXAMPLES / "statement-0912.review.json")))
    assert detect_format("r.json", minified_review.encode()) == "review"


def test_big_files_are_judged_from_a_truncated_head():
    records = {
        str(i): {
            "key": f"wiki{i:05d}",
            "question_id": "1",
            "question": "q" * 500,
            "response": "r",
            "answer": "a",
        }
        for i in range(400)
    }
    data = json.dumps(records, indent=4).encode()
    assert len(data) > HEAD_BYTES
    assert detect_format("answers.json", data[:HEAD_BYTES]) == "textflow"
    # The head may end inside the first record, even inside a multi-byte character.
    first = json.dumps({"0": {"key": "k", "response": "é" * 40}}, ensure_ascii=False).encode()
    assert detect_format("t.json", first[:41]) == "textflow"
    assert first[:41].decode("utf-8", errors="replace").endswith("\ufffd")
    review = {
        "case_id": "c",
        "sources": [{"artifact_id": f"p{i}", "path": "x.pdf"} for i in range(5000)],
        "review_items": [],
    }
    data = json.dumps(review).encode()
    assert len(data) > HEAD_BYTES
    assert detect_format("big.json", data[:HEAD_BYTES]) == "review"
    line = json.dumps(review) + "\n" + json.dumps(review) + "\n"
    assert detect_format("big.jsonl", line.encode()[:HEAD_BYTES]) == "review"


def test_csv_headers_and_flavour():
    ref = b"case_id,path,expected_value\nc,$.a,1\n"
    assert detect_format("refs.csv", ref) == "csv"
    assert csv_flavour(ref) == "reference"
    assert csv_flavour(b"\xef\xbb\xbffield_path,expected\n") == "reference"
    verdicts = b"type,item_id,criterion,label,judge_provider,judge_model\n"
    assert detect_format("v.csv", verdicts) == "csv"
    assert csv_flavour(verdicts) == "records"


@pytest.mark.parametrize(
    ("name", "data", "message"),
    [
        (
            "unknown-format.txt",
            (DATA / "bad" / "unknown-format.txt").read_bytes(),
            "unknown format",
        ),
        ("x.json", b'{"0": {"key": "k", "answer": "a"}}', "unknown JSON object"),
        (
            "x.json",
            b'{"case_id": "c", "review_items": [], "type": "item"}',
            "ambiguous JSON object: looks like review and jsonl",
        ),
        (
            "x.jsonl",
            b'{"type": "item", "review_items": []}\n{"type": "item"}\n',
            "ambiguous JSONL record on line 1: looks like review and jsonl",
        ),
        (
            "x.jsonl",
            b'{"0": {"response": "r"}}\n{"1": {"response": "r"}}\n',
            "textflow files are one JSON object, not JSONL",
        ),
        ("x.json", b"[1, 2]", "top-level JSON array"),
        ("x.json", b"key,value\n", "does not start with a JSON object"),
        ("x.csv", b"", "empty file"),
        ("x.csv", b"only_one_column\n", "unknown format"),
        ("x.csv", b"a,a\n", "unknown format"),
    ],
)
def test_unknown_and_ambiguous_inputs_name_the_choices(name, data, message):
    with pytest.raises(FormatError) as exc:
        detect_format(name, data)
    assert exc.value.file == name
    assert message in exc.value.reason
    assert "one of review, jsonl, csv, files, textflow" in str(exc.value)


@pytest.mark.parametrize(
    "data, reason, record",
    [
        ("type,item_id\nitem,a\n".encode("utf-16"), "UTF-16 text", None),
        ("type,item_id\nitem,a\n".encode("utf-16-le"), "UTF-16 text", None),  # no mark
        (b"type,item_id\nitem,a\nitem,b\x00c\n", "a NUL byte: not text", "line 3"),
    ],
)
def test_nul_bytes_name_utf16_or_the_line_of_the_stray_one(data, reason, record):
    with pytest.raises(FormatError) as exc:
        detect_format("x.csv", data)
    assert reason in exc.value.reason and exc.value.record == record
