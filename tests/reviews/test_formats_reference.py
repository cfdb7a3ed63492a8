"""FORMATS §3 approved reference (JSON + CSV) and the canonical JSON that approvals sign."""

import hashlib
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from reviews.formats.canonical import (
    canonical_json,
    canonical_rows,
    rows_canonical_bytes,
    rows_sha256,
)
from reviews.formats.errors import FormatError
from reviews.formats.reference import (
    ApprovedReference,
    ReferenceCsvRow,
    build_reference,
    decode_csv_value,
    dump_reference_csv,
    dump_reference_json,
    encode_csv_value,
    iter_reference_csv,
    parse_reference_json,
    write_reference_csv,
)
from reviews.formats.review_file import Approval, parse_review_json
from tests.builders import REFERENCE_ROWS, approved_reference

DATA = Path(__file__).resolve().parent.parent / "data"


# --- canonical JSON ---------------------------------------------------------------------------


def test_canonical_json_is_sorted_compact_utf8():
    assert canonical_json({"b": [1, 1.0, None, True], "a": "Zürich €"}) == (
        '{"a":"Zürich €","b":[1,1.0,null,true]}'.encode()
    )
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_rows_sha256_is_order_independent_and_documented_bytes():
    expected = (
        b'[{"expected_value":"1,200.00","path":"$.amount"},'
        b'{"expected_value":"USD","path":"$.currency"}]'
    )
    assert rows_canonical_bytes(REFERENCE_ROWS) == expected
    assert rows_sha256(REFERENCE_ROWS) == hashlib.sha256(expected).hexdigest()
    assert rows_sha256(list(reversed(REFERENCE_ROWS))) == rows_sha256(REFERENCE_ROWS)
    # Extra keys are not part of what is signed; values keep their JSON type.
    assert rows_sha256([r | {"note": "x"} for r in REFERENCE_ROWS]) == rows_sha256(REFERENCE_ROWS)
    assert rows_sha256([{"path": "$.n", "expected_value": 1}]) != rows_sha256(
        [{"path": "$.n", "expected_value": "1"}]
    )


def test_canonical_rows_refuse_ambiguity():
    with pytest.raises(ValueError, match="duplicate reference row path"):
        canonical_rows(REFERENCE_ROWS + [{"path": "$.amount", "expected_value": "9"}])
    with pytest.raises(ValueError, match="needs 'path' and 'expected_value'"):
        canonical_rows([{"path": "$.x"}])


# --- JSON -------------------------------------------------------------------------------------


def test_reference_json_round_trip_sorted_and_extras_kept():
    raw = json.dumps(approved_reference(source_run="r7")).encode()
    ref = parse_reference_json(raw, file="ref.json")
    assert ref.approved_at == datetime(2026, 11, 30, 10, tzinfo=UTC)
    dumped = dump_reference_json(ref)
    out = json.loads(dumped)
    assert [r["path"] for r in out["rows"]] == ["$.amount", "$.currency"]
    assert out["approved_at"] == "2026-11-30T10:00:00Z" and out["source_run"] == "r7"
    assert list(out)[:6] == [
        "case_id",
        "authority",
        "version",
        "supersedes",
        "parent_generated_sha256",
        "rows",
    ]
    again = parse_reference_json(dumped, file="ref.json")
    assert dump_reference_json(again) == dumped
    assert again.rows_sha256() == ref.rows_sha256()


@pytest.mark.parametrize(
    ("overrides", "path", "reason"),
    [
        (
            {"rows": REFERENCE_ROWS + [{"path": "$.amount", "expected_value": "2"}]},
            "$.rows[2].path",
            "duplicate path",
        ),
        (
            {"rows": [{"path": "amount", "expected_value": "2"}]},
            "$.rows[0].path",
            "not a JSON path",
        ),
        (
            {"rows": [{"path": "$.a", "expected_value": 1, "x": 1}]},
            "$.rows[0].x",
            "Extra inputs are not permitted",
        ),
        ({"authority": "evidence"}, "$.authority", "'ground_truth'"),
        ({"version": 0}, "$.version", "greater than or equal to 1"),
        ({"supersedes": [1]}, "$.supersedes", "version number, an id string or null"),
        ({"approved_at": "yesterday"}, "$.approved_at", "valid datetime"),
        (
            {
                "approval": {
                    "sha256": "0" * 64,
                    "signature": "s",
                    "algorithm": "ed25519",
                    "key_id": "k",
                }
            },
            "$.approval.sha256",
            "does not match",
        ),
        (
            {
                "approval": {
                    "sha256": rows_sha256(REFERENCE_ROWS),
                    "signature": "s",
                    "algorithm": "rsa",
                    "key_id": "k",
                }
            },
            "$.approval.algorithm",
            "'ed25519'",
        ),
    ],
)
def test_reference_json_errors(overrides, path, reason):
    with pytest.raises(FormatError) as exc:
        parse_reference_json(json.dumps(approved_reference(**overrides)).encode(), file="ref.json")
    err = exc.value
    assert (err.file, err.record, err.path) == ("ref.json", 'case "statement-001"', path)
    assert reason in err.reason


def test_build_reference_from_approved_review():
    obj = json.loads((DATA / "examples" / "statement-0912.review.json").read_bytes())
    obj["review_items"][0].update(decision="set", value="2,135.76")
    obj["review_items"][1].update(decision="set", value="Mira Castell")
    review = parse_review_json(json.dumps(obj).encode(), file="s.json")
    with pytest.raises(ValueError, match="not approved"):
        build_reference(review, version=1)
    rows = review.reference_rows()
    approved = review.approve(
        approved_by="ana@example.com",
        approved_at=datetime(2026, 11, 30, 10, tzinfo=UTC),
        approval=Approval(sha256=rows_sha256(rows), signature="c2ln", key_id="k1"),
    )
    ref = build_reference(approved, version=1, parent_generated_sha256="b" * 64)
    assert ref.rows_sha256() == approved.approval.sha256
    assert [r.path for r in ref.rows] == [
        "$.account",
        "$.closing_balance",
        "$.currency",
        "$.holder",
    ]


# --- CSV --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("USD", "USD"),
        ("1,200.00", "1,200.00"),
        ("12", '"12"'),
        (12, "12"),
        (1.5, "1.5"),
        ("true", '"true"'),
        (True, "true"),
        (None, "null"),
        ("null", '"null"'),
        ("", ""),
        ('"quoted"', '"\\"quoted\\""'),
        (" 7", '" 7"'),
        ("NaN", "NaN"),
        ([1, "a"], '[1,"a"]'),
        ({"b": 1, "a": "é"}, '{"a":"é","b":1}'),
        ("[1", "[1"),
        ("Zürich", "Zürich"),
    ],
)
def test_csv_value_rule_round_trips(value, cell):
    assert encode_csv_value(value) == cell
    assert decode_csv_value(cell) == value
    assert type(decode_csv_value(cell)) is type(value)


def test_reference_csv_round_trip():
    refs = [
        ApprovedReference.model_validate(approved_reference()),
        ApprovedReference.model_validate(
            approved_reference(
                case_id="t-2",
                approval=None,
                rows=[
                    {"path": "$.n", "expected_value": 3},
                    {"path": "$.tags", "expected_value": ["a", "b,c"]},
                    {"path": "$.note", "expected_value": 'line 1\nline "2"'},
                ],
            )
        ),
    ]
    data = dump_reference_csv(refs)
    assert data.decode().splitlines()[0] == "case_id,path,expected_value"
    rows = list(iter_reference_csv(io.BytesIO(data), file="refs.csv"))
    got = {(r.case_id, r.path): r.expected_value for r in rows}
    assert got == {
        ("statement-001", "$.amount"): "1,200.00",
        ("statement-001", "$.currency"): "USD",
        ("t-2", "$.n"): 3,
        ("t-2", "$.tags"): ["a", "b,c"],
        ("t-2", "$.note"): 'line 1\nline "2"',
    }
    assert [r.line for r in rows] == [2, 3, 4, 5, 7]  # the $.note row spans lines 5-6
    buf = io.StringIO()
    write_reference_csv(buf, [ReferenceCsvRow("c", "$.x", "y")])
    assert buf.getvalue() == "case_id,path,expected_value\nc,$.x,y\n"


def test_reference_csv_accepts_aliases_bom_and_a_default_case():
    text = '\ufefffield_path,expected\r\n$.amount,"1,200.00"\r\n\r\n$.count,11\r\n'
    rows = list(iter_reference_csv(io.BytesIO(text.encode()), file="t.csv", case_id="c1"))
    assert [(r.case_id, r.path, r.expected_value) for r in rows] == [
        ("c1", "$.amount", "1,200.00"),
        ("c1", "$.count", 11),
    ]
    rows = list(iter_reference_csv(io.StringIO("Case_ID,Path,Value\nc2,$.x,y\n"), file="t.csv"))
    assert rows[0].case_id == "c2" and rows[0].expected_value == "y"


def test_reference_csv_missing_column_names_file_and_column():
    with (DATA / "bad" / "missing-column.csv").open("rb") as fh, pytest.raises(FormatError) as exc:
        list(iter_reference_csv(fh, file="missing-column.csv"))
    assert str(exc.value).startswith(
        "missing-column.csv, line 1: missing column 'expected_value' (also accepted: expected, "
        "value)"
    )
    with pytest.raises(FormatError, match=r"^t\.csv, line 1: missing column 'case_id'"):
        list(iter_reference_csv(io.StringIO("path,expected\n$.a,1\n"), file="t.csv"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("case_id,path,expected_value\nc,amount,1\n", r"^t\.csv, line 2, path: not a JSON path"),
        (
            "case_id,field_path,value\nc,$.a,1\nc,$.a,2\n",
            r"^t\.csv, line 3, field_path: duplicate row .*\(first on line 2\)",
        ),
        ("case_id,path,expected_value\n,$.a,1\n", r"^t\.csv, line 2, case_id: empty case_id"),
        ("case_id,path,expected_value\nc,$.a\n", r"^t\.csv, line 2: 2 cells but the header has 3"),
        ("case_id,path,expected,value\nc,$.a,1,2\n", r"^t\.csv, line 1: columns .* mean"),
        ("", r"^t\.csv: empty CSV file"),
        ('case_id,path,expected_value\nc,$.a,"open\n', r"^t\.csv, line 2: invalid CSV"),
    ],
)
def test_reference_csv_row_errors(text, message):
    with pytest.raises(FormatError, match=message):
        list(iter_reference_csv(io.StringIO(text, newline=""), file="t.csv"))


def test_reference_csv_rejects_non_utf8():
    with pytest.raises(FormatError, match=r"^t\.csv, line 2: not UTF-8"):
        list(
            iter_reference_csv(
                io.BytesIO(b"case_id,path,expected_value\nc,$.a,\xff\n"), file="t.csv"
            )
        )
