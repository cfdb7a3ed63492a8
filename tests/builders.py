"""Review workflow builders, as plain functions so module-scoped data can use them too.

tests/conftest.py hands them out as the `review_item`, `rate` and `attach_evidence` fixtures.
"""

from datetime import timedelta

from django.utils import timezone

from reviews.evidence import DrawText, build_pdf
from reviews.formats.canonical import canonical_rows, rows_sha256
from reviews.models import (
    Assignment,
    AssignmentStatus,
    Authority,
    Claim,
    Decision,
    Item,
    ItemSource,
    Question,
    QuestionKind,
    Reference,
)
from reviews.services.answers import AnswerInput, answer_record, assignment_submit, latest_answer
from reviews.services.documents import StoredFiles, document_for_bytes


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
