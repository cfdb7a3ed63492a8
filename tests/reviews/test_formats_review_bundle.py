"""FORMATS §2 many cases in one upload: review JSONL files and .zip bundles with their evidence
(pure, no database). One review file: test_formats_review_file.py."""

import io
import json
import zipfile
from pathlib import Path

import pytest

from reviews.formats import limits
from reviews.formats.bundle import read_review_bundle
from reviews.formats.errors import FormatError
from reviews.formats.review_file import iter_review_jsonl

EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"
REVIEW_JSON = EXAMPLES / "statement-0912.review.json"


def test_review_jsonl_streams_with_line_numbers():
    with (EXAMPLES / "reviews.jsonl").open("rb") as fh:
        cases = [r.case_id for r in iter_review_jsonl(fh, file="reviews.jsonl")]
    assert cases == ["statement-0912", "ticket-88"]

    lines = (EXAMPLES / "reviews.jsonl").read_text().splitlines()
    bad = json.loads(lines[1])
    bad["claims"] = [{"path": "$.amount", "expected_value": "9.00", "confidence": "high"}]
    bad["review_items"] = []
    text = lines[0] + "\n\n" + json.dumps(bad) + "\n"
    stream = iter_review_jsonl(io.BytesIO(text.encode()), file="reviews.jsonl")
    assert next(stream).case_id == "statement-0912"
    with pytest.raises(FormatError) as exc:
        next(stream)
    assert str(exc.value) == (
        "reviews.jsonl, line 3, $.claims[0].confidence: Input should be a valid number, "
        "unable to parse string as a number (got 'high')"
    )


def test_review_jsonl_errors_bad_lines_and_duplicates():
    good = (EXAMPLES / "reviews.jsonl").read_text().splitlines()[0]
    with pytest.raises(FormatError, match=r"^r\.jsonl, line 2, \$: invalid JSON: .* column 2"):
        list(iter_review_jsonl(io.BytesIO(f"{good}\n{{oops\n".encode()), file="r.jsonl"))
    with pytest.raises(FormatError, match=r"^r\.jsonl, line 2, \$: expected a JSON object"):
        list(iter_review_jsonl(io.BytesIO(f"{good}\n[1, 2]\n".encode()), file="r.jsonl"))
    with pytest.raises(FormatError, match=r"line 2, \$\.case_id: duplicate case_id .*line 1"):
        list(iter_review_jsonl(io.BytesIO(f"{good}\n{good}\n".encode()), file="r.jsonl"))


def test_example_bundle_reads_cases_and_evidence():
    with read_review_bundle(EXAMPLES / "review-bundle.zip", file="review-bundle.zip") as bundle:
        assert sorted(c.review.case_id for c in bundle.cases) == ["statement-0912", "ticket-88"]
        with bundle.open_evidence("statement-0912.pdf") as fh:
            assert fh.read(5) == b"%PDF-"
        with bundle.open_evidence("./ticket-88.png") as fh:
            assert fh.read(4) == b"\x89PNG"
        assert bundle.evidence_size("ticket-88.png") == (EXAMPLES / "ticket-88.png").stat().st_size
        with pytest.raises(FormatError, match="escapes the bundle root"):
            bundle.open_evidence("../etc/passwd")
        with pytest.raises(FormatError, match="'nope.pdf' is not in the bundle"):
            bundle.open_evidence("nope.pdf")


def make_zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_bundle_missing_evidence_names_case_and_path(tmp_path):
    review = REVIEW_JSON.read_bytes()
    path = make_zip(tmp_path / "b.zip", {"statement-0912.json": review})
    with pytest.raises(FormatError) as exc:
        read_review_bundle(path, file="b.zip")
    assert str(exc.value) == (
        'b.zip/statement-0912.json, case "statement-0912", '
        "$.sources[0].path: evidence file 'statement-0912.pdf' is not in "
        "the bundle"
    )


def test_bundle_in_a_folder_with_jsonl_and_file_object(tmp_path):
    members = {
        "export/reviews.jsonl": (EXAMPLES / "reviews.jsonl").read_bytes(),
        "export/statement-0912.pdf": b"%PDF-1.4",
        "export/ticket-88.png": b"\x89PNG",
        "__MACOSX/export/._ticket-88.png": b"junk",
    }
    buf = io.BytesIO(make_zip(tmp_path / "f.zip", members).read_bytes())
    with read_review_bundle(buf, file="upload.zip") as bundle:
        assert [(c.member, c.line) for c in bundle.cases] == [
            ("reviews.jsonl", 1),
            ("reviews.jsonl", 2),
        ]
        assert bundle.open_evidence("ticket-88.png").read() == b"\x89PNG"
    assert not buf.closed  # the caller's stream is the caller's to close


@pytest.mark.parametrize(
    ("members", "kwargs", "message"),
    [
        ({"../evil.json": b"{}"}, {}, r'member "\.\./evil\.json": unsafe member name'),
        ({"a.json": b"{}", "C:/b.pdf": b""}, {}, r'member "C:/b\.pdf": unsafe member name'),
        (
            {"a.pdf": b"x" * 2000},
            {"zip_bytes": 1000},
            r"uncompressed size \(2,000\) is over the limit of 1,000 \(IMPORT_MAX_ZIP_BYTES\)",
        ),
        ({f"{i}.pdf": b"" for i in range(5)}, {"max_members": 4}, "5 members .limit 4"),
        ({"x.pdf": b""}, {}, "no review .json or .jsonl"),
        ({"a.jsonl": b"", "b.jsonl": b""}, {}, "at most one .jsonl"),
        ({"a.json": b"{not json"}, {}, r"b\.zip/a\.json, \$: invalid JSON"),
    ],
)
def test_bundle_refusals(tmp_path, members, kwargs, message):
    path = make_zip(tmp_path / "b.zip", members)
    members_limit = {k: kwargs.pop(k) for k in list(kwargs) if k == "max_members"}
    with limits.overridden(**kwargs), pytest.raises(FormatError, match=message) as exc:
        read_review_bundle(path, file="b.zip", **members_limit)
    assert str(exc.value).startswith("b.zip")


def test_bundle_duplicate_case_and_not_a_zip(tmp_path):
    review = REVIEW_JSON.read_bytes()
    path = make_zip(
        tmp_path / "d.zip", {"a.json": review, "b.json": review, "statement-0912.pdf": b"%PDF"}
    )
    with pytest.raises(
        FormatError,
        match=r"d\.zip/b\.json, case \"statement-0912\", "
        r"\$\.case_id: duplicate case_id \(also in a\.json\)",
    ):
        read_review_bundle(path, file="d.zip")
    with pytest.raises(FormatError, match=r"^x\.zip: not a readable zip file"):
        read_review_bundle(io.BytesIO(b"not a zip"), file="x.zip")


def test_bundle_zip_bomb_is_refused_before_inflating(tmp_path):
    path = tmp_path / "bomb.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.json", REVIEW_JSON.read_bytes())
        zf.writestr("statement-0912.pdf", b"\0" * (8 * 1024 * 1024))  # ~8 KB compressed
    assert path.stat().st_size < 100_000
    with pytest.raises(FormatError, match=r"compression ratio \(.*IMPORT_MAX_ZIP_RATIO"):
        read_review_bundle(path, file="bomb.zip")
    with (
        limits.overridden(zip_bytes=1024 * 1024, zip_ratio=10_000),
        pytest.raises(FormatError, match=r"uncompressed size .*IMPORT_MAX_ZIP_BYTES"),
    ):
        read_review_bundle(path, file="bomb.zip")
