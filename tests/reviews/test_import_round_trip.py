"""Acceptance: bundle in -> raters, adjudication, approval -> export -> verify -> re-import.

One statement (the 3-page demo PDF) with two disputed fields goes through the whole workflow
using the services only: two raters disagree on the closing balance (an adjudicator settles it)
and agree on the total due; an approver signs. The three exports validate against their
schemas, the exported review file re-imports as a no-op (the same signed version) and is
refused by another project (the signature binds the project) unless imported as generated,
`verify_approval` accepts every exported file, and a one-character edit of an exported value
makes it fail naming the case and the path.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from reviews.demo import documents as demo_evidence
from reviews.demo.files import STATEMENT_FILE, statement_case
from reviews.formats.canonical import rows_sha256
from reviews.formats.reference import iter_reference_csv, parse_reference_json
from reviews.formats.review_file import parse_review_json
from reviews.models import (
    Approval,
    Authority,
    Decision,
    Document,
    Item,
    ItemStatus,
    QuestionStatus,
    Reference,
    Resolution,
)
from reviews.reports.exports import files_export
from reviews.services.approval.approve import approval_record
from reviews.services.assignment.queue import assignment_claim_next
from reviews.services.imports.pipeline import ImportFailed, file_import
from reviews.services.rating.answers import AnswerInput, answer_record, assignment_submit
from reviews.services.rating.resolution import adjudication_record
from tests.factories import PASSWORD, ProjectFactory, member

CASE = "statement-rt-001"
BALANCE = demo_evidence.money(demo_evidence.CLOSING)  # what the statement says
TOTAL = demo_evidence.money(demo_evidence.TOTAL_DUE)


def _two_disputes_case() -> dict:
    case = statement_case(CASE, wrong_total="1,290.00", wrong_balance="12,840.55")
    case["review_items"] = [
        i for i in case["review_items"] if i["path"] in ("$.closing_balance", "$.total_due")
    ]
    assert len(case["review_items"]) == 2
    return case


def _bundle(folder: Path) -> Path:
    target = folder / "statements.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr(f"{CASE}.json", json.dumps(_two_disputes_case(), indent=2))
        bundle.writestr(STATEMENT_FILE, demo_evidence.statement_pdf())
    return target


def _answer(rater, project, answers: dict[str, str]) -> None:
    """`rater` claims the item, picks the candidate with the given value per path, submits."""
    assignment = assignment_claim_next(rater=rater, project=project)
    assert assignment is not None and assignment.item.external_id == CASE
    for question in assignment.item.questions.all():
        chosen = question.candidates.get(value=answers[question.key])
        answer_record(
            actor=rater,
            assignment=assignment,
            question=question,
            expected_seq=0,
            given=AnswerInput(Decision.SET, value=chosen.value, chosen_claim_id=chosen.pk),
        )
    assignment_submit(actor=rater, assignment=assignment)


@pytest.fixture
def approved(project, tmp_path):
    """The project after the whole workflow: (item, approval)."""
    admin = member(project, "admin")
    first, second = member(project, "rater"), member(project, "rater")
    adjudicator, approver = member(project, "adjudicator"), member(project, "approver")

    report = file_import(actor=admin, project=project, path=_bundle(tmp_path))
    assert report.format == "review"
    assert (report.counts["items_created"], report.counts["questions"]) == (1, 2)
    item = Item.objects.get(project=project, external_id=CASE)
    document = Document.objects.get()
    assert (document.kind, document.page_count) == ("pdf", 3)
    assert item.sources.count() == 3  # one source per page, one stored document

    _answer(first, project, {"$.closing_balance": BALANCE, "$.total_due": TOTAL})
    _answer(second, project, {"$.closing_balance": "12,840.55", "$.total_due": TOTAL})

    balance = item.questions.get(key="$.closing_balance")
    total = item.questions.get(key="$.total_due")
    assert balance.status == QuestionStatus.ADJUDICATION  # they disagreed
    assert total.status == QuestionStatus.RESOLVED  # they agreed
    assert total.resolutions.get().method == Resolution.Method.UNANIMOUS
    adjudication_record(
        actor=adjudicator,
        question=balance,
        decision=Decision.SET,
        value=BALANCE,
        reason="Page 3 states the closing balance.",
    )
    item.refresh_from_db()
    assert item.status == ItemStatus.RESOLVED

    approval = approval_record(actor=approver, item=item, password=PASSWORD, confirmed=True)
    item.refresh_from_db()
    assert item.status == ItemStatus.APPROVED
    return item, approval


EXPECTED_ROWS = [
    {"path": "$.account", "expected_value": demo_evidence.ACCOUNT},
    {"path": "$.closing_balance", "expected_value": BALANCE},
    {"path": "$.currency", "expected_value": demo_evidence.CURRENCY},
    {"path": "$.holder", "expected_value": demo_evidence.HOLDER},
    {"path": "$.total_due", "expected_value": TOTAL},
]


def _export(project) -> dict[str, bytes]:
    files = {}
    for format in ("review", "reference", "csv"):
        files.update(files_export(actor=None, project=project, format=format))
    return files


def test_exports_validate_against_their_schemas(project, approved):
    item, approval = approved
    assert approval.reference.rows == EXPECTED_ROWS
    files = _export(project)
    assert sorted(files) == sorted(
        [
            f"{CASE}.review.json",
            f"{CASE}.reference.json",
            f"{project.slug}-ground-truth.csv",
            f"{project.slug}-ground-truth.csv.sig.json",
        ]
    )

    review = parse_review_json(files[f"{CASE}.review.json"], file=f"{CASE}.review.json")
    assert (review.case_id, review.status, review.is_resolved) == (CASE, "approved", True)
    assert review.approved_by == approval.approver_name and review.approved_at is not None
    decided = {i.path: (i.decision, i.value) for i in review.review_items}
    assert decided == {"$.closing_balance": ("set", BALANCE), "$.total_due": ("set", TOTAL)}
    assert review.reference_rows() == EXPECTED_ROWS
    assert review.approval.sha256 == approval.sha256 == rows_sha256(EXPECTED_ROWS)
    assert review.approval.key_id == approval.key_id

    reference = parse_reference_json(files[f"{CASE}.reference.json"], file="ref.json")
    assert (reference.case_id, reference.authority) == (CASE, "ground_truth")
    assert reference.version == approval.reference.version
    assert reference.parent_generated_sha256 == approval.reference.derived_from.sha256
    assert [r.model_dump() for r in reference.rows] == EXPECTED_ROWS
    assert reference.approval.sha256 == reference.rows_sha256() == approval.sha256

    csv_rows = list(
        iter_reference_csv(io.BytesIO(files[f"{project.slug}-ground-truth.csv"]), file="gt.csv")
    )
    assert [(r.case_id, r.path, r.expected_value) for r in csv_rows] == [
        (CASE, row["path"], row["expected_value"]) for row in EXPECTED_ROWS
    ]


def test_exported_review_reimports_as_a_no_op_and_binds_its_project(project, approved, tmp_path):
    item, approval = approved
    files = _export(project)
    folder = tmp_path / "reimport"
    folder.mkdir()
    exported = folder / f"{CASE}.review.json"
    exported.write_bytes(files[exported.name])
    (folder / STATEMENT_FILE).write_bytes(demo_evidence.statement_pdf())

    again = file_import(actor=None, project=project, path=exported)
    assert again.counts.get("ground_truth", 0) == 0 and again.counts["items_unchanged"] == 1
    assert Approval.objects.filter(item=item).count() == 1

    fresh = ProjectFactory()
    with pytest.raises(ImportFailed, match=f"signed for project '{project.slug}'") as refused:
        file_import(actor=None, project=fresh, path=exported)
    assert "--as-generated" in str(refused.value)
    assert not Item.objects.filter(project=fresh).exists()

    report = file_import(actor=None, project=fresh, path=exported, options={"as_generated": True})
    assert report.counts.get("ground_truth", 0) == 0
    copy = Item.objects.get(project=fresh, external_id=CASE)
    assert not Approval.objects.filter(item=copy).exists()
    generated = Reference.objects.filter(item=copy, authority=Authority.GENERATED)
    assert generated.order_by("-version").first().rows == EXPECTED_ROWS
    assert copy.status != ItemStatus.APPROVED
    assert copy.questions.exclude(status=QuestionStatus.RESOLVED).exists()  # review again


def _verify(path: Path) -> str:
    out = io.StringIO()
    call_command("verify_approval", str(path), stdout=out)
    return out.getvalue()


def test_verify_approval_accepts_every_exported_file(project, approved, tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    call_command(
        "export_ground_truth",
        project=project.slug,
        format="review",
        out=folder,
        stdout=io.StringIO(),
    )
    call_command(
        "export_ground_truth",
        project=project.slug,
        format="reference",
        out=folder,
        stdout=io.StringIO(),
    )
    for name in (f"{CASE}.review.json", f"{CASE}.reference.json"):
        output = _verify(folder / name)
        assert output.startswith(f"OK   {CASE}: v3, version "), output
        assert "all 1 approval(s) verify" in output
    output = _verify(folder)  # the whole folder at once
    assert output.count(f"OK   {CASE}") == 2 and "all 2 approval(s) verify" in output


def _edit_one_character(text: str, old: str, new: str) -> str:
    assert len(old) == len(new) and sum(a != b for a, b in zip(old, new)) == 1
    assert text.count(f'"{old}"') >= 1
    return text.replace(f'"{old}"', f'"{new}"')


@pytest.mark.parametrize(
    ("kind", "old", "new", "path"),
    [
        ("review", BALANCE, BALANCE.replace("5", "6", 1), "$.closing_balance"),  # adjudicated
        ("review", demo_evidence.CURRENCY, "USE", "$.currency"),  # a consensus claim
        ("reference", TOTAL, TOTAL.replace("1", "7", 1), "$.total_due"),  # unanimous
    ],
    ids=["review-adjudicated-value", "review-consensus-value", "reference-row-value"],
)
def test_one_edited_character_fails_verification(project, approved, tmp_path, kind, old, new, path):
    files = files_export(actor=None, project=project, format=kind)
    target = tmp_path / f"{CASE}.{kind}.json"
    target.write_text(
        _edit_one_character(files[target.name].decode("utf-8"), old, new), encoding="utf-8"
    )

    out = io.StringIO()
    with pytest.raises(CommandError, match="1 of 1 approval"):
        call_command("verify_approval", str(target), stdout=out)
    line = out.getvalue().strip()
    assert line.startswith(f"FAIL {CASE}:"), line
    assert f"{path} changed" in line and repr(new) in line, line
