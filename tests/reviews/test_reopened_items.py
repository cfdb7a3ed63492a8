"""An item that gets a new question after its raters submitted goes back to them: the queue
serves it again, they answer only the new question, and it settles as the first ones did.
(Left as it was, their submitted places filled the overlap: nobody could take the item.)"""

import json

import pytest

from reviews.models import (
    AssignmentStatus,
    Decision,
    ItemStatus,
    Membership,
    QuestionStatus,
    Role,
)
from reviews.services.assignment.queue import assignment_claim_next
from reviews.services.imports.pipeline import file_import
from reviews.services.items import QuestionSpec, questions_add
from reviews.services.rating.answers import AnswerInput
from tests.builders import approved_item, rate, review_file_of
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db


def test_a_new_criterion_question_goes_back_to_the_rater_who_submitted(review_item):
    project = ProjectFactory(overlap=1)
    item = review_item(project, {"$.total": ["1", "2"]})
    first = member(project, Role.RATER, username="first")
    rate(first, item, {"$.total": "1"})
    item.refresh_from_db()
    assert item.status == ItemStatus.RESOLVED
    spec = QuestionSpec(item_id=item.pk, kind="criterion", key="clarity", labels=["ok", "poor"])
    questions_add(actor=None, specs=[spec], source={"selection": "test"})
    item.refresh_from_db()
    assert item.status == ItemStatus.OPEN
    stranger = member(project, Role.RATER, username="stranger")
    assert assignment_claim_next(rater=stranger, project=project) is None  # overlap 1: first's
    claim = assignment_claim_next(rater=first, project=project)
    assert claim is not None and claim.item_id == item.pk
    rate(first, item, {"clarity": AnswerInput(Decision.LABEL, "ok")}, assignment=claim)
    item.refresh_from_db()
    assert item.status == ItemStatus.RESOLVED
    assert item.questions.get(key="clarity").status == QuestionStatus.RESOLVED
    assert item.questions.get(key="$.total").resolutions.count() == 1  # settled once, kept


def test_a_new_disputed_field_reopens_an_approved_item_for_its_raters(tmp_path):
    item = approved_item()
    review = review_file_of(item)
    path = tmp_path / "again.review.json"
    path.write_text(json.dumps(review))
    file_import(actor=None, project=item.project, path=path)  # nothing new: stays approved
    item.refresh_from_db()
    assert item.status == ItemStatus.APPROVED
    review["review_items"].append(
        {
            "path": "$.iban",
            "reason": "disagreement",
            "candidates": [
                {"provider": "a", "expected_value": "DE00"},
                {"provider": "b", "expected_value": "DE01"},
            ],
        }
    )
    path.write_text(json.dumps(review))
    file_import(actor=None, project=item.project, path=path)
    item.refresh_from_db()
    assert item.status == ItemStatus.OPEN
    assert item.questions.get(key="$.iban").status == QuestionStatus.OPEN
    places = item.assignments.filter(gold=False)
    assert {p.status for p in places} == {AssignmentStatus.ASSIGNED}
    rater = places.first().rater
    claim = assignment_claim_next(rater=rater, project=item.project)
    assert claim is not None and claim.item_id == item.pk


def test_a_rater_who_left_keeps_their_place_and_the_others_settle_it(review_item):
    project = ProjectFactory(overlap=2)
    item = review_item(project, {"$.total": ["1", "2"]})
    stays, leaves = (member(project, Role.RATER, username=n) for n in ("stays", "leaves"))
    for rater in (stays, leaves):
        rate(rater, item, {"$.total": "1"})
    Membership.objects.filter(project=project, user=leaves).delete()
    spec = QuestionSpec(item_id=item.pk, kind="criterion", key="clarity", labels=["ok", "poor"])
    questions_add(actor=None, specs=[spec], source={"selection": "test"})
    statuses = dict(item.assignments.values_list("rater__username", "status"))
    assert statuses == {"stays": AssignmentStatus.ASSIGNED, "leaves": AssignmentStatus.SUBMITTED}
    claim = assignment_claim_next(rater=stays, project=project)
    rate(stays, item, {"clarity": AnswerInput(Decision.LABEL, "ok")}, assignment=claim)
    assert item.questions.get(key="clarity").status == QuestionStatus.RESOLVED


def test_an_import_that_asks_a_rated_item_a_new_question_gives_it_back(review_item, tmp_path):
    project = ProjectFactory(overlap=1)
    item = review_item(project, {"$.total": ["1", "2"]})
    first = member(project, Role.RATER, username="first")
    rate(first, item, {"$.total": "1"})
    records = [
        {"type": "criterion", "name": "correct", "labels": ["pass", "fail"]},
        {"type": "item", "item_id": item.external_id},
    ]
    path = tmp_path / "more.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    file_import(
        actor=None, project=project, path=path, options={"questions": ["criterion:correct"]}
    )
    item.refresh_from_db()
    assert item.status == ItemStatus.OPEN
    claim = assignment_claim_next(rater=first, project=project)
    assert claim is not None and claim.item_id == item.pk
