"""FORMATS §2 review files, one case each: parsing, what is refused and where, approval and
export, and loose evidence files (pure, no database). JSONL files and .zip bundles of many
cases: test_formats_review_bundle.py."""

import copy
import json
import pickle
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from reviews.formats.canonical import rows_sha256
from reviews.formats.errors import FormatError, FormatErrors, loads_json
from reviews.formats.review_file import (
    Approval,
    ReviewFile,
    check_evidence_dir,
    dump_review_file,
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
    ],
)
def test_source_paths_must_stay_inside_the_bundle(review_obj, bad):
    review_obj["sources"][1]["path"] = bad
    with pytest.raises(FormatError) as exc:
        parse(review_obj, file="s.json")
    assert exc.value.path == "$.sources[1].path"
    assert exc.value.record == 'case "statement-0912"'


def test_a_nul_character_in_a_source_path_is_refused_as_it_is_read(review_obj):
    review_obj["sources"][1]["path"] = "x\x00.pdf"
    with pytest.raises(FormatError, match="NUL character") as exc:
        parse(review_obj, file="s.json")
    assert (exc.value.file, exc.value.path) == ("s.json", "$.sources[1].path")


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
