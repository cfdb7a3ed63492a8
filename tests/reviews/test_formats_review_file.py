"""FORMATS §2 review files, JSONL and .zip bundles (pure, no database)."""

import copy
import io
import json
import pickle
import zipfile
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from reviews.formats import limits
from reviews.formats.bundle import read_review_bundle
from reviews.formats.canonical import rows_sha256
from reviews.formats.errors import FormatError, FormatErrors, loads_json
from reviews.formats.review_file import (
    Approval,
    ReviewFile,
    check_evidence_dir,
    dump_review_file,
    iter_review_jsonl,
    parse_review_json,
    resolve_evidence_path,
)

DATA = Path(__file__).resolve().parent.parent / "data"
EXAMPLES = DATA / "examples"
BAD = DATA / "bad"
REVIEW_JSON = EXAMPLES / "statement-0912.review.json"


@pytest.fixture
def review_obj():
    return json.loads(REVIEW_JSON.read_bytes())


def parse(obj, file="case.json"):
    return parse_review_json(json.dumps(obj).encode(), file=file)


def resolved(obj):
    obj = copy.deepcopy(obj)
    obj["review_items"][0].update(decision="set", value="2,135.76", note="page 2 total")
    obj["review_items"][1].update(decision="omit")
    return obj


def test_parses_the_example():
    review = parse_review_json(REVIEW_JSON.read_bytes(), file=REVIEW_JSON.name)
    assert review.case_id == "statement-0912"
    assert review.status == "pending"
    assert [s.metadata.page for s in review.sources] == [1, 2]
    assert review.review_items[0].candidates[0].bbox == (179.6, 138.2, 222.4, 153.3)
    assert review.review_items[0].candidates[1].bbox is None
    assert review.evidence_paths() == ["statement-0912.pdf"]
    assert not review.is_resolved
    assert dump_review_file(review) == REVIEW_JSON.read_bytes()  # same shape, byte for byte


def test_round_trip_keeps_extra_keys_and_is_deterministic(review_obj):
    review_obj["generator"] = {"name": "visual_evals", "run": 7}
    review_obj["sources"][0]["sha256"] = "ab" * 32
    review_obj["sources"][0]["metadata"]["width_pt"] = 612
    review_obj["claims"][0]["latency_ms"] = 840
    review_obj["review_items"][0]["candidates"][0]["raw"] = {"tokens": 12}
    first = parse(review_obj)
    dumped = dump_review_file(first)
    again = parse_review_json(dumped, file="dumped.json")
    assert again == first
    assert dump_review_file(again) == dumped
    out = json.loads(dumped)
    assert out["generator"] == {"name": "visual_evals", "run": 7}
    assert out["sources"][0]["metadata"] == {"page": 1, "width_pt": 612}
    assert out["claims"][0]["latency_ms"] == 840
    assert out["review_items"][0]["candidates"][0]["raw"] == {"tokens": 12}
    # Optional keys absent in the input stay absent; structural nulls stay.
    assert "bbox" not in out["review_items"][0]["candidates"][1]
    assert out["review_items"][0]["decision"] is None and out["approved_by"] is None
    assert list(out)[:3] == ["case_id", "status", "approved_by"]


def test_malformed_json_names_file_and_position():
    with pytest.raises(FormatError) as exc:
        parse_review_json((BAD / "malformed.review.json").read_bytes(), file="malformed.json")
    err = exc.value
    assert err.file == "malformed.json" and err.path == "$"
    assert str(err).startswith("malformed.json, $: invalid JSON: ")
    assert "line 3 column 1" in str(err)


def test_format_errors_pickle_and_serialise():
    err = FormatError("bad", file="f.json", record="line 2", path="$.a")
    again = pickle.loads(pickle.dumps(err))
    assert (again.file, again.record, again.path, again.reason) == (
        "f.json",
        "line 2",
        "$.a",
        "bad",
    )
    assert err.as_dict() == {"file": "f.json", "record": "line 2", "path": "$.a", "reason": "bad"}
    many = pickle.loads(pickle.dumps(FormatErrors([err, err])))
    assert len(many) == 2 and str(many) == "f.json, line 2, $.a: bad\nf.json, line 2, $.a: bad"


def test_duplicate_json_keys_are_refused():
    with pytest.raises(FormatError, match="duplicate key 'status'"):
        parse_review_json(
            b'{"case_id": "x", "status": "pending", "status": "approved"}', file="dup.json"
        )


@pytest.mark.parametrize(
    ("mutate", "path", "reason"),
    [
        (
            lambda o: o["claims"][0].update(confidence="high"),
            "$.claims[0].confidence",
            "Input should be a valid number",
        ),
        (
            lambda o: o["review_items"][0]["candidates"][1].update(confidence=1.5),
            "$.review_items[0].candidates[1].confidence",
            "less than or equal to 1",
        ),
        (
            lambda o: o["review_items"][0]["candidates"][0].update(bbox=[10, 5, 2, 8]),
            "$.review_items[0].candidates[0].bbox",
            "x0 <= x1",
        ),
        (
            lambda o: o["review_items"][0]["candidates"][0].update(bbox=[1, 2, 3]),
            "$.review_items[0].candidates[0].bbox[3]",
            "Field required",
        ),
        (
            lambda o: o["sources"][1]["metadata"].update(page=0),
            "$.sources[1].metadata.page",
            "greater than or equal to 1",
        ),
        (lambda o: o["claims"][1].update(path="currency"), "$.claims[1].path", "not a JSON path"),
        (lambda o: o["expected_fields"].append("$."), "$.expected_fields[4]", "not a JSON path"),
        (lambda o: o.update(status="done"), "$.status", "'pending' or 'approved'"),
        (
            lambda o: o["review_items"][1].update(reason="vibes"),
            "$.review_items[1].reason",
            "'disagreement'",
        ),
        (lambda o: o.pop("case_id"), "$.case_id", "Field required"),
        (
            lambda o: o["review_items"][0]["candidates"][1].update(reference_id="st-p9"),
            "$.review_items[0].candidates[1].reference_id",
            "'st-p9' is not an artifact_id",
        ),
        (
            lambda o: o["claims"][0].update(reference_id="nope"),
            "$.claims[0].reference_id",
            "'nope' is not an artifact_id in sources (known: st-p1, st-p2)",
        ),
        (
            lambda o: o["sources"][1].update(artifact_id="st-p1"),
            "$.sources[1].artifact_id",
            "duplicate artifact_id",
        ),
        (
            lambda o: o["review_items"][0].update(path="$.account"),
            "$.review_items[0].path",
            "already appears at $.claims[0].path",
        ),
        (
            lambda o: o["review_items"][0].update(decision="set"),
            "$.review_items[0].value",
            "'set' needs a non-null value",
        ),
        (
            lambda o: o["review_items"][0].update(decision="omit", value="x"),
            "$.review_items[0].value",
            "'omit' must have value null",
        ),
        (
            lambda o: o["review_items"][0].update(decision="maybe"),
            "$.review_items[0].decision",
            "'set' or 'omit'",
        ),
    ],
)
def test_invalid_fields_name_file_case_and_path(review_obj, mutate, path, reason):
    mutate(review_obj)
    with pytest.raises(FormatError) as exc:
        parse(review_obj, file="statement.json")
    err = exc.value
    assert (err.file, err.path) == ("statement.json", path), str(err)
    assert err.record in ('case "statement-0912"', None)
    assert reason in err.reason
    assert str(err).startswith(f"statement.json, {err.record + ', ' if err.record else ''}{path}: ")


@pytest.mark.parametrize(
    "bad",
    [
        "../statement.pdf",
        "a/../../b.pdf",
        "/etc/passwd",
        "..\\statement.pdf",
        "a\\b.pdf",
        "C:/statement.pdf",
        "C:statement.pdf",
        "file:///etc/passwd",
        "",
        "./",
        "x\x00.pdf",
    ],
)
def test_source_paths_must_stay_inside_the_bundle(review_obj, bad):
    review_obj["sources"][1]["path"] = bad
    with pytest.raises(FormatError) as exc:
        parse(review_obj, file="s.json")
    assert exc.value.path == "$.sources[1].path"
    assert exc.value.record == 'case "statement-0912"'


def test_escaping_path_file_from_disk():
    with pytest.raises(
        FormatError,
        match=r"escaping-path\.review\.json, case \"statement-0912\", "
        r"\$\.sources\[1\]\.path: .*escapes the bundle root",
    ):
        parse_review_json(
            (BAD / "escaping-path.review.json").read_bytes(), file="escaping-path.review.json"
        )


def test_approved_file_needs_signer_and_every_item_decided(review_obj):
    unsigned = resolved(review_obj) | {"status": "approved"}
    with pytest.raises(FormatError) as exc:
        parse(unsigned)
    assert exc.value.path == "$.approved_by"
    assert "needs approved_by" in str(exc.value)

    undecided = review_obj | {"status": "approved", "approved_by": "ana@example.com"}
    undecided["review_items"][0].update(decision="set", value="2,135.76")
    with pytest.raises(FormatError) as exc:
        parse(undecided)
    assert exc.value.path == "$.review_items[1].decision"
    assert "$.holder is unresolved" in exc.value.reason

    ok = parse(resolved(review_obj) | {"status": "approved", "approved_by": "ana@example.com"})
    assert ok.is_resolved
    assert ok.reference_rows() == [
        {"path": "$.account", "expected_value": "NW-004512"},
        {"path": "$.closing_balance", "expected_value": "2,135.76"},
        {"path": "$.currency", "expected_value": "USD"},
    ]


def test_pending_file_cannot_carry_an_approval(review_obj):
    review_obj["approval"] = {"sha256": "0" * 64, "signature": "s", "key_id": "k"}
    with pytest.raises(FormatError, match=r"\$\.approval: only an approved file"):
        parse(review_obj)


def test_export_of_an_approved_file(review_obj):
    review = parse(resolved(review_obj))
    rows = review.reference_rows()
    approval = Approval(sha256=rows_sha256(rows), signature="c2ln", key_id="evalsite-2026")
    when = datetime(2026, 11, 30, 11, 0, tzinfo=timezone(timedelta(hours=1)))
    approved = review.approve(approved_by="ana@example.com", approved_at=when, approval=approval)
    out = json.loads(dump_review_file(approved))
    assert out["status"] == "approved" and out["approved_by"] == "ana@example.com"
    assert out["approved_at"] == "2026-11-30T10:00:00Z"
    assert out["approval"] == {
        "sha256": rows_sha256(rows),
        "signature": "c2ln",
        "algorithm": "ed25519",
        "key_id": "evalsite-2026",
    }
    assert [i["decision"] for i in out["review_items"]] == ["set", "omit"]
    assert out["review_items"][0]["value"] == "2,135.76"
    again = parse_review_json(dump_review_file(approved), file="export.json")
    assert again == approved and again.approved_at == datetime(2026, 11, 30, 10, tzinfo=UTC)

    tampered = json.loads(dump_review_file(approved))
    tampered["review_items"][0]["value"] = "9,999.99"
    with pytest.raises(FormatError, match=r"\$\.approval\.sha256: does not match"):
        parse(tampered)
    naive = json.loads(dump_review_file(approved)) | {"approved_at": "2026-11-30T10:00:00"}
    with pytest.raises(FormatError, match=r"\$\.approved_at: .*timezone"):
        parse(naive)


def test_reference_rows_refuse_unresolved_items(review_obj):
    with pytest.raises(ValueError, match="unresolved"):
        parse(review_obj).reference_rows()


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


def test_loose_file_evidence_stays_in_its_folder(tmp_path, review_obj):
    review = ReviewFile.model_validate(review_obj)
    with pytest.raises(
        FormatError,
        match=r"case \"statement-0912\", \$\.sources\[0\]\.path: "
        r"evidence file 'statement-0912.pdf' not found",
    ):
        check_evidence_dir(review, tmp_path, file="s.json")
    (tmp_path / "statement-0912.pdf").write_bytes(b"%PDF")
    check_evidence_dir(review, tmp_path, file="s.json")
    outside = tmp_path.parent / "outside.pdf"
    (tmp_path / "link.pdf").symlink_to(outside)
    with pytest.raises(ValueError, match="escapes the file's folder"):
        resolve_evidence_path(tmp_path, "link.pdf")


@pytest.mark.parametrize(
    "text, reason",
    [
        ('{\n "a": "open', "invalid JSON: Unterminated string starting at line 2 column 7"),
        ('{"a": "x\x01"}', "invalid JSON: Invalid control character at line 1 column 9"),
    ],
)
def test_json_errors_say_at_once(text, reason):
    """json's own messages may end in "at"; the location is not appended after a second one."""
    with pytest.raises(FormatError) as caught:
        loads_json(text, file="f.json")
    assert caught.value.reason == reason
