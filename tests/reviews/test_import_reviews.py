"""Importing FORMATS §2 review files (.json, .jsonl, .zip bundle) through `file_import`.

Idempotent re-import, new generated versions for changed consensus rows, documents stored once
by SHA-256, and the `import_items` command's one-line summary and failure exit.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from reviews.demo import documents as demo_evidence
from reviews.demo.files import demo_cases, write_demo_reviews
from reviews.models import (
    Authority,
    Claim,
    Document,
    Event,
    Item,
    ItemSource,
    ItemStatus,
    Question,
    QuestionStatus,
    Reference,
)
from reviews.services.imports.pipeline import ImportFailed, file_import
from tests.factories import ProjectFactory
from tests.helpers import media_files, row_counts

EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"
SUMMARY = re.compile(
    r"^imported (?P<items>\d+) items?(?: \((?P<unchanged>\d+) unchanged\))?, "
    r"(?P<questions>\d+) questions?(?:, [^,]+)*, 0 errors$"
)


@pytest.fixture
def examples(tmp_path) -> Path:
    """The example files (review .json, .jsonl, .zip and their evidence) in a scratch folder."""
    folder = tmp_path / "examples"
    shutil.copytree(EXAMPLES, folder)
    return folder


def _case(folder: Path, name: str) -> dict:
    return json.loads((folder / name).read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# What one import creates


def test_review_file_creates_item_sources_claims_questions_and_generated_reference(
    project, examples
):
    report = file_import(actor=None, project=project, path=examples / "statement-0912.review.json")
    assert report.format == "review"
    assert report.counts == {"items_created": 1, "questions": 2, "references": 1, "documents": 1}
    assert report.summary() == "imported 1 item, 2 questions, 1 reference, 0 errors"

    item = Item.objects.get(project=project, external_id="statement-0912")
    assert item.status == ItemStatus.OPEN
    sources = list(item.sources.order_by("position"))
    assert [(s.artifact_id, s.path, s.page) for s in sources] == [
        ("st-p1", "statement-0912.pdf", 1),
        ("st-p2", "statement-0912.pdf", 2),
    ]
    assert sources[0].document_id == sources[1].document_id  # one file, two cited pages
    document = sources[0].document
    assert (document.kind, document.page_count, document.mime) == ("pdf", 2, "application/pdf")
    assert (Path(settings.MEDIA_ROOT) / document.file.name).read_bytes() == (
        examples / "statement-0912.pdf"
    ).read_bytes()

    generated = Reference.objects.get(item=item)
    assert (generated.authority, generated.version, generated.supersedes) == (
        Authority.GENERATED,
        1,
        None,
    )
    assert generated.rows == [
        {"path": "$.account", "expected_value": "NW-004512"},
        {"path": "$.currency", "expected_value": "USD"},
    ]
    consensus = item.claims.filter(question__isnull=True).order_by("position")
    assert [(c.path, c.value, c.source.artifact_id) for c in consensus] == [
        ("$.account", "NW-004512", "st-p1"),
        ("$.currency", "USD", "st-p2"),
    ]
    questions = list(item.questions.order_by("position"))
    assert [(q.key, q.reason, q.status) for q in questions] == [
        ("$.closing_balance", "disagreement", QuestionStatus.OPEN),
        ("$.holder", "omitted_by_some", QuestionStatus.OPEN),
    ]
    candidates = list(questions[0].candidates.order_by("position"))
    assert [(c.value, c.providers, c.page) for c in candidates] == [
        ("2,135.76", ["openai"], 2),
        ("1,204.16", ["claude"], 1),
    ]
    assert candidates[0].bbox == [179.6, 138.2, 222.4, 153.3] and candidates[1].bbox is None
    assert Event.objects.filter(item=item, kind="imported").count() == 1


def test_bundle_imports_every_case_with_its_evidence(project, examples):
    report = file_import(actor=None, project=project, path=examples / "review-bundle.zip")
    assert report.counts["items_created"] == 2 and report.counts["documents"] == 2
    ticket = Item.objects.get(project=project, external_id="ticket-88")
    source = ticket.sources.get()
    document = source.document
    assert (document.kind, document.mime, document.page_count) == ("image", "image/png", 1)
    assert document.width > 0 and document.height > 0
    assert ticket.questions.get().key == "$.amount"


# ---------------------------------------------------------------------------------------------
# Idempotence


@pytest.mark.parametrize(
    ("name", "items"),
    [("statement-0912.review.json", 1), ("reviews.jsonl", 2), ("review-bundle.zip", 2)],
    ids=["json", "jsonl", "zip"],
)
def test_reimporting_the_same_file_adds_no_rows_and_says_unchanged(project, examples, name, items):
    first = file_import(actor=None, project=project, path=examples / name)
    assert first.counts["items_created"] == items
    rows, files = row_counts(), media_files()

    again = file_import(actor=None, project=project, path=examples / name)
    assert again.counts == {"items_unchanged": items, "questions": 0}
    noun = "item" if items == 1 else "items"
    assert again.summary() == f"imported {items} {noun} ({items} unchanged), 0 questions, 0 errors"
    assert row_counts() == rows
    assert media_files() == files


def test_same_cases_through_another_carrier_are_unchanged(project, examples):
    """The .jsonl and the .zip hold the same cases: the second import changes nothing."""
    file_import(actor=None, project=project, path=examples / "reviews.jsonl")
    rows = row_counts()
    report = file_import(actor=None, project=project, path=examples / "review-bundle.zip")
    assert report.counts == {"items_unchanged": 2, "questions": 0}
    assert row_counts() == rows


# ---------------------------------------------------------------------------------------------
# Changed consensus rows: a new generated version, the old one kept


def test_changed_consensus_value_makes_a_new_generated_version(project, examples):
    path = examples / "statement-0912.review.json"
    file_import(actor=None, project=project, path=path)
    item = Item.objects.get(project=project, external_id="statement-0912")
    old = Reference.objects.get(item=item)
    questions = set(item.questions.values_list("pk", flat=True))

    case = _case(examples, path.name)
    case["claims"][1]["expected_value"] = "EUR"  # $.currency changed upstream
    case["review_items"].append(
        {
            "path": "$.period",
            "reason": "low_confidence",
            "candidates": [
                {
                    "provider": "claude",
                    "expected_value": "March",
                    "reference_id": "st-p1",
                    "confidence": 0.4,
                }
            ],
            "decision": None,
            "value": None,
            "note": None,
        }
    )
    changed = examples / "statement-0912.v2.review.json"
    changed.write_text(json.dumps(case), encoding="utf-8")
    report = file_import(actor=None, project=project, path=changed)
    assert report.counts == {"items_updated": 1, "references": 1, "questions": 1}

    versions = list(Reference.objects.filter(item=item).order_by("version"))
    assert [v.pk for v in versions[:1]] == [old.pk]  # the old version is still there, as it was
    assert versions[0].rows == old.rows and versions[0].sha256 == old.sha256
    new = versions[1]
    assert (new.authority, new.version, new.supersedes_id) == (Authority.GENERATED, 2, old.pk)
    assert new.reason == "re-imported with changed consensus rows"
    assert new.source_name == changed.name
    assert {"path": "$.currency", "expected_value": "EUR"} in new.rows
    assert old.superseded_by == new
    consensus = dict(item.claims.filter(question__isnull=True).values_list("path", "value"))
    assert consensus == {"$.account": "NW-004512", "$.currency": "EUR"}
    # Existing questions kept (with their history); only the new disputed path is added.
    assert questions < set(item.questions.values_list("pk", flat=True))
    assert item.questions.get(key="$.period").candidates.get().value == "March"
    assert Event.objects.filter(item=item, kind="imported").count() == 2

    # The changed file again: unchanged; the first file again: a third version, v2 kept.
    assert file_import(actor=None, project=project, path=changed).counts["items_unchanged"] == 1
    file_import(actor=None, project=project, path=path)
    latest = Reference.objects.filter(item=item).order_by("version").last()
    assert (latest.version, latest.supersedes_id, latest.sha256) == (3, new.pk, old.sha256)
    assert Reference.objects.filter(item=item).count() == 3


def test_a_disputed_path_keeps_its_question_when_reimported(project, examples):
    """Answers hang off questions: re-importing must never recreate or delete them."""
    path = examples / "statement-0912.review.json"
    file_import(actor=None, project=project, path=path)
    before = list(Question.objects.values_list("pk", "key"))
    candidates = list(Claim.objects.filter(question__isnull=False).values_list("pk", flat=True))
    case = _case(examples, path.name)
    case["claims"][0]["expected_value"] = "NW-004513"
    path.write_text(json.dumps(case), encoding="utf-8")
    file_import(actor=None, project=project, path=path)
    assert list(Question.objects.values_list("pk", "key")) == before
    assert list(Claim.objects.filter(question__isnull=False).values_list("pk", flat=True)) == (
        candidates
    )


# ---------------------------------------------------------------------------------------------
# Documents stored once by SHA-256


def test_documents_are_stored_once_by_sha256_across_items_and_projects(db, examples, tmp_path):
    one, two = ProjectFactory(), ProjectFactory()
    folder = tmp_path / "renamed"
    folder.mkdir()
    pdf = (examples / "statement-0912.pdf").read_bytes()
    (folder / "copy-of-statement.pdf").write_bytes(pdf)  # same bytes, another name
    case = _case(examples, "statement-0912.review.json")
    cases = []
    for n in range(3):
        other = copy.deepcopy(case)
        other["case_id"] = f"copy-{n}"
        for source in other["sources"]:
            source["path"] = "copy-of-statement.pdf"
        cases.append(json.dumps(other))
    (folder / "copies.reviews.jsonl").write_text("\n".join(cases) + "\n", encoding="utf-8")

    first = file_import(actor=None, project=one, path=examples / "statement-0912.review.json")
    assert first.counts["documents"] == 1
    second = file_import(actor=None, project=one, path=folder / "copies.reviews.jsonl")
    third = file_import(actor=None, project=two, path=examples / "review-bundle.zip")
    assert second.counts["items_created"] == 3 and third.counts["items_created"] == 2
    assert second.counts.get("documents", 0) == 0  # the statement was known already
    assert third.counts["documents"] == 1  # only the ticket PNG is new

    statement = Document.objects.get(page_count=2)
    assert Document.objects.count() == 2
    assert ItemSource.objects.filter(document=statement).count() == 2 * 5  # 5 items, 2 pages each
    assert {s.item.project_id for s in ItemSource.objects.filter(document=statement)} == {
        one.pk,
        two.pk,
    }
    root = Path(settings.MEDIA_ROOT)
    stored = [root / p for p in media_files() if "documents" in Path(p).parts]
    assert len(stored) == 2
    assert any(p.read_bytes() == pdf and p.name == f"{statement.sha256}.pdf" for p in stored)


def test_the_demo_reviews_import_with_their_evidence(project, tmp_path):
    path = write_demo_reviews(tmp_path / "demo")
    report = file_import(actor=None, project=project, path=path)
    cases = demo_cases()
    assert report.counts["items_created"] == len(cases)
    assert report.counts["questions"] == sum(len(c["review_items"]) for c in cases)
    assert report.counts["documents"] == 2  # the statement PDF and the receipt PNG
    statement = Document.objects.get(kind="pdf")
    assert statement.page_count == 3
    assert statement.sha256 == hashlib.sha256(demo_evidence.statement_pdf()).hexdigest()


# ---------------------------------------------------------------------------------------------
# The command line


def test_import_items_prints_one_summary_line(project, examples):
    out = io.StringIO()
    call_command("import_items", str(examples / "reviews.jsonl"), project=project.slug, stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1, lines
    match = SUMMARY.match(lines[0])
    assert match, lines[0]
    assert (match["items"], match["questions"]) == ("2", "3")
    assert lines[0] == "imported 2 items, 3 questions, 2 references, 0 errors"

    out = io.StringIO()
    call_command(
        "import_items",
        str(examples / "review-bundle.zip"),
        project=project.slug,
        format="review",
        stdout=out,
    )
    assert out.getvalue().strip() == "imported 2 items (2 unchanged), 0 questions, 0 errors"


def test_import_items_fails_with_nonzero_exit_and_names_the_spot(project, examples):
    case = _case(examples, "statement-0912.review.json")
    case["review_items"][0]["candidates"][0]["confidence"] = 1.5
    bad = examples / "bad.review.json"
    bad.write_text(json.dumps(case), encoding="utf-8")
    rows = row_counts()
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_items", str(bad), project=project.slug, stderr=err)
    message = err.getvalue()
    assert message.startswith("imported 0 items, 0 questions, 1 error\n")
    assert 'bad.review.json, case "statement-0912", $.review_items[0].candidates[0].confidence' in (
        message
    )
    assert row_counts() == rows


def test_import_items_refuses_unknown_projects_and_files(project, examples, tmp_path):
    with pytest.raises(CommandError, match="No project 'nope'"):
        call_command("import_items", str(examples / "reviews.jsonl"), project="nope")
    with pytest.raises(CommandError, match="no such file"):
        call_command("import_items", str(tmp_path / "absent.json"), project=project.slug)
    with pytest.raises(CommandError, match="invalid choice"):
        call_command(
            "import_items",
            str(examples / "reviews.jsonl"),
            "--format",
            "junk",
            "--project",
            project.slug,
        )


def test_import_file_error_is_not_half_applied_in_a_zip(project, examples, tmp_path):
    """Two good cases then one citing evidence missing from the bundle: nothing at all."""
    target = tmp_path / "partial.zip"
    with (
        zipfile.ZipFile(examples / "review-bundle.zip") as source,
        zipfile.ZipFile(target, "w") as bundle,
    ):
        for info in source.infolist():
            bundle.writestr(info, source.read(info))
        case = _case(examples, "statement-0912.review.json")
        case["case_id"] = "zz-last"
        case["sources"][1]["path"] = "not-here.pdf"
        bundle.writestr("zz-last.json", json.dumps(case))
    rows = row_counts()
    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=project, path=target)
    error = failure.value.error
    assert (error.file, error.record, error.path) == (
        "partial.zip/zz-last.json",
        'case "zz-last"',
        "$.sources[1].path",
    )
    assert row_counts() == rows and not media_files()


# ---------------------------------------------------------------------------------------------
# Re-import compares evidence by content (#10)


def test_reimport_with_other_evidence_is_refused_and_changes_nothing(project, examples):
    path = examples / "statement-0912.review.json"
    file_import(actor=None, project=project, path=path)
    rows, files = row_counts(), media_files()
    (examples / "statement-0912.pdf").write_bytes(demo_evidence.statement_pdf())  # a real PDF
    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=project, path=path)
    error = failure.value.error
    assert (error.record, error.path) == ('case "statement-0912"', "$.sources[0].path")
    assert error.reason.startswith("case 'statement-0912' exists with other evidence")
    assert "import it under a new case id or as a correction" in error.reason
    assert (row_counts(), media_files()) == (rows, files)


@pytest.mark.parametrize("bad", ["not-a-pdf", "encrypted"])
def test_reimport_always_checks_the_evidence(project, examples, bad):
    from tests.bad_evidence import encrypted_pdf

    path = examples / "statement-0912.review.json"
    file_import(actor=None, project=project, path=path)
    rows = row_counts()
    data = b"just some text" if bad == "not-a-pdf" else encrypted_pdf()
    (examples / "statement-0912.pdf").write_bytes(data)
    with pytest.raises(ImportFailed) as failure:
        file_import(actor=None, project=project, path=path)
    assert failure.value.error.path == "$.sources[0].path"
    assert "exists with other evidence" not in failure.value.error.reason  # checked first
    assert row_counts() == rows
