"""Review workflow builders, as plain functions so module-scoped data can use them too.

tests/conftest.py hands them out as the `review_item`, `rate` and `attach_evidence` fixtures.
The trust chain's (the trust-chain, key, export and reference-format tests) are at the end: a
§3 approved reference, the review file an import leaves on an item, an approved file another
site signed, every export written out, and `verify_approval` run on it.
"""

import base64
import io
import json
from datetime import timedelta

from django.core.management import CommandError, call_command
from django.utils import timezone

from reviews.evidence import DrawText, build_pdf
from reviews.formats.canonical import canonical_rows, rows_sha256
from reviews.formats.signed import payload_bytes
from reviews.models import (
    HOLDING_STATUSES,
    Approval,
    Assignment,
    AssignmentStatus,
    Authority,
    Claim,
    Decision,
    Event,
    Item,
    ItemSource,
    Question,
    QuestionKind,
    Reference,
    Resolution,
    Role,
)
from reviews.reports.exports import NothingToExport, files_export
from reviews.services.approval.approve import approval_record
from reviews.services.approval.signing import key_id_of
from reviews.services.files.documents import StoredFiles, document_for_bytes
from reviews.services.rating.answers import (
    AnswerInput,
    answer_record,
    assignment_submit,
    latest_answer,
)
from tests.factories import PASSWORD, ProjectFactory, member


def review_item_builder():
    """A `build(project, fields, …)` with its own case counter (case-0001, case-0002, …).

        build(project, {"$.total": ["1,200.00", "1,290.00"]}, rows={"$.currency": "EUR"})

    gives an OPEN item as a review-file import leaves it, without evidence files: one field
    question per key (its candidates from providers `provider-1`, `provider-2`… with confidences
    0.71, 0.62…), consensus claims for `rows`, and a generated Reference of `rows`.
    `criteria={"tone": ["good", "bad"]}` adds criterion questions.
    """
    counter = iter(range(1, 1_000_000))

    def build(project, fields=None, *, rows=None, criteria=None, external_id=None, overlap=None):
        fields = {"$.total": ["1,200.00", "1,290.00"]} if fields is None else fields
        rows = {"$.currency": "EUR"} if rows is None else rows
        item = Item.objects.create(
            project=project,
            external_id=external_id or f"case-{next(counter):04d}",
            overlap=overlap,
        )
        for position, (key, values) in enumerate(fields.items()):
            _field_question(item, key, values, position)
        for position, (name, labels) in enumerate((criteria or {}).items(), start=len(fields)):
            Question.objects.create(
                item=item,
                kind=QuestionKind.CRITERION,
                key=name,
                labels=list(labels),
                prompt=f"Is the {name} right?",
                position=position,
            )
        Claim.objects.bulk_create(
            Claim(
                item=item,
                path=path,
                value=value,
                providers=["provider-1", "provider-2"],
                position=n,
            )
            for n, (path, value) in enumerate(rows.items())
        )
        generated = canonical_rows({"path": p, "expected_value": v} for p, v in rows.items())
        Reference.objects.create(
            item=item,
            authority=Authority.GENERATED,
            version=1,
            rows=generated,
            sha256=rows_sha256(generated),
            source_name="built-in-test",
        )
        return item

    return build


def _field_question(item, key, values, position):
    question = Question.objects.create(
        item=item, kind=QuestionKind.FIELD, key=key, reason="disagreement", position=position
    )
    Claim.objects.bulk_create(
        Claim(
            item=item,
            question=question,
            path=key,
            value=value,
            providers=[f"provider-{n}"],
            confidence=round(0.71 - 0.09 * (n - 1), 2),
            page=1,
            quote=str(value),
            position=n,
        )
        for n, value in enumerate(values, start=1)
    )


def rate(rater, item, answers, *, submit=True, assignment=None):
    """The rater's Assignment, answered and submitted, as the views do it (the services).

    Plain values are typed values (decision `set`); pass an `AnswerInput` for anything else.
    `submit=False` leaves the assignment active.
    """
    now = timezone.now()
    if assignment is None:
        assignment = Assignment.objects.create(
            item=item,
            rater=rater,
            status=AssignmentStatus.ACTIVE,
            opened_at=now,
            lease_expires_at=now + timedelta(hours=1),
        )
    for key, value in answers.items():
        question = item.questions.get(key=key)
        given = value if isinstance(value, AnswerInput) else AnswerInput(Decision.SET, value)
        previous = latest_answer(question=question, rater=rater)
        answer_record(
            actor=rater,
            assignment=assignment,
            question=question,
            given=given,
            expected_seq=previous.seq if previous else 0,
        )
    if submit:
        assignment_submit(actor=rater, assignment=assignment)
        assignment.refresh_from_db()
    return assignment


_PDFS: dict[str, bytes] = {}


def places_held(item) -> int:
    """How many of the item's overlap places are held (assigned, active or submitted)."""
    return Assignment.objects.filter(item=item, status__in=HOLDING_STATUSES).count()


def submitted(assignment):
    """The rater's submit of `assignment`, as the review page's Submit does it."""
    return assignment_submit(actor=assignment.rater, assignment=assignment)


def attach_evidence(item, text="Statement of account. Total due 1,200.00 EUR"):
    """A one-page PDF Document cited by the item and all its claims."""
    if text not in _PDFS:  # building is the slow part; the bytes are the same every time
        _PDFS[text] = build_pdf([[DrawText(20, 60, text, size=11)]], page_size=(300.0, 200.0))
    document, _ = document_for_bytes(_PDFS[text], name="statement.pdf", written=StoredFiles())
    source = ItemSource.objects.create(
        item=item, artifact_id="statement-p1", document=document, path="statement.pdf", page=1
    )
    item.claims.update(source=source, page=1)
    return document


def approved_item():
    """An item of a new project, with evidence, rated alike by two raters and approved."""
    project = ProjectFactory()
    item = review_item_builder()(project)
    attach_evidence(item)
    for n in (1, 2):
        rate(member(project, Role.RATER, username=f"r{n}"), item, {"$.total": "1200"})
    approval_record(
        actor=member(project, Role.APPROVER), item=item, password=PASSWORD, confirmed=True
    )
    return item


def rated_item(project, review_item, raters, values, *, key="$.total"):
    """(item, assignments): a new item of `project` whose raters answered `key` with `values`
    (one each) and submitted; the project's overlap is set to the number of values."""
    project.overlap = len(values)
    project.save()
    item = review_item(project, {key: ["1,200.00", "1,290.00"]})
    assignments = [rate(r, item, {key: v}) for r, v in zip(raters, values, strict=False)]
    item.refresh_from_db()
    return item, assignments


# --- the trust chain ---------------------------------------------------------------------------

SIGNED_ROWS = [{"path": "$.total", "expected_value": "1,200.00"}]
REFERENCE_ROWS = [
    {"path": "$.currency", "expected_value": "USD"},
    {"path": "$.amount", "expected_value": "1,200.00"},
]


def approved_reference(**overrides) -> dict:
    """A FORMATS §3 approved reference (case statement-001, REFERENCE_ROWS), with `overrides`."""
    data = {
        "case_id": "statement-001",
        "authority": "ground_truth",
        "version": 2,
        "supersedes": None,
        "parent_generated_sha256": "a" * 64,
        "rows": REFERENCE_ROWS,
        "approved_by": "approver@example.com",
        "approved_at": "2026-11-30T10:00:00Z",
        "approval": {
            "sha256": rows_sha256(REFERENCE_ROWS),
            "signature": "c2ln",
            "algorithm": "ed25519",
            "key_id": "k1",
        },
    }
    return data | overrides


def review_file_of(item) -> dict:
    """The review file an import would have left on the item (claims + disputed paths)."""
    generated = item.references.get(authority="generated")
    questions = item.questions.filter(kind="field")
    return {
        "case_id": item.external_id,
        "claims": [
            {"path": r["path"], "expected_value": r["expected_value"]} for r in generated.rows
        ],
        "review_items": [
            {
                "path": q.key,
                "reason": "disagreement",
                "candidates": [
                    {"provider": c.providers[0], "expected_value": c.value}
                    for c in item.claims.filter(question=q)
                ],
                "decision": None,
                "value": None,
                "note": None,
            }
            for q in questions
        ],
    }


def export_all(project, folder):
    """Every export format of `project` (review, reference, CSV) written into `folder`; a
    format with nothing to export (review files of items that came from no review file) is
    refused by the service and left out here."""
    for format in ("review", "reference", "csv"):
        try:
            files = files_export(actor=None, project=project, format=format)
        except NothingToExport:
            continue
        for name, content in files.items():
            (folder / name).write_bytes(content)
    return folder


def verify(path, *args) -> tuple[bool, str]:
    """`manage.py verify_approval path *args`: (passed, its output and error)."""
    out = io.StringIO()
    try:
        call_command("verify_approval", str(path), *args, stdout=out)
    except CommandError as error:
        return False, out.getvalue() + str(error)
    return True, out.getvalue()


def trust_counts() -> list[int]:
    """Rows of the tables an approved import writes to: equal before and after a refusal."""
    return [m.objects.count() for m in (Item, Reference, Approval, Resolution, Event)]


def signed_review_file(
    folder, key, *, project, case_id, version, rows=SIGNED_ROWS, supersedes=None
):
    """An approved review file signed (format 2) by `key`, as another site would export: its
    rows are SIGNED_ROWS unless given."""
    bound = {
        "format": 2,
        "project": project,
        "case_id": case_id,
        "version": version,
        "supersedes": supersedes,
        "authority": "ground_truth",
        "parent_generated_sha256": None,
        "approved_by": "olga@elsewhere.example",
        "approved_at": "2026-11-30T10:00:00.000000Z",
    }
    signature = base64.b64encode(key.sign(payload_bytes(bound, rows))).decode()
    review = {
        "case_id": case_id,
        "status": "approved",
        "approved_by": bound["approved_by"],
        "approved_at": bound["approved_at"],
        "claims": rows,
        "approval": {
            **bound,
            "sha256": rows_sha256(rows),
            "signature": signature,
            "algorithm": "ed25519",
            "key_id": key_id_of(key.public_key()),
        },
    }
    path = folder / f"{case_id}-v{version}.json"
    path.write_text(json.dumps(review))
    return path
