"""Settling questions: unanimous and majority rules, normalised comparison, adjudication."""

import pytest

from reviews.models import (
    Decision,
    Event,
    ItemStatus,
    QuestionStatus,
    Resolution,
    ResolutionRule,
    Role,
)
from reviews.services.approval.approve import approval_record
from reviews.services.rating.answers import AnswerInput
from reviews.services.rating.resolution import (
    ResolutionError,
    adjudication_record,
    current_resolution,
)
from tests.builders import rated_item
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db

UNCLEAR = AnswerInput(Decision.UNCLEAR, flagged=True)


def test_unanimous_agreement_resolves_with_the_source_answers(
    project, review_item, resolution_raters
):
    item, _ = rated_item(project, review_item, resolution_raters, ["1200", "1200"])
    question = item.questions.get()
    resolution = Resolution.objects.get(question=question)
    assert (resolution.decision, resolution.value, resolution.method) == (
        "set",
        "1200",
        "unanimous",
    )
    assert {a.rater.username for a in resolution.source_answers.all()} == {"rater-1", "rater-2"}
    assert question.status == QuestionStatus.RESOLVED
    assert item.status == ItemStatus.RESOLVED


def test_unanimous_rule_waits_for_every_rater(project, review_item, rate, resolution_raters):
    project.overlap = 2
    project.save()
    item = review_item(project)
    rate(resolution_raters[0], item, {"$.total": "1200"})
    item.refresh_from_db()
    assert item.status == ItemStatus.OPEN
    assert not Resolution.objects.exists()


def test_unanimous_disagreement_goes_to_adjudication(project, review_item, resolution_raters):
    item, _ = rated_item(project, review_item, resolution_raters, ["1200", "1290"])
    question = item.questions.get()
    assert question.status == QuestionStatus.ADJUDICATION
    assert item.status == ItemStatus.ADJUDICATION
    assert not Resolution.objects.exists()
    assert Event.objects.filter(item=item, kind="needs_adjudication").exists()


def test_majority_two_against_one_resolves(project, review_item, resolution_raters):
    project.resolution_rule = ResolutionRule.MAJORITY
    item, _ = rated_item(project, review_item, resolution_raters, ["1290", "1,200.00", "1200"])
    resolution = Resolution.objects.get(question__item=item)
    assert resolution.method == "majority"
    assert {a.rater.username for a in resolution.source_answers.all()} == {"rater-2", "rater-3"}
    assert resolution.decision == "set" and resolution.value in ("1,200.00", "1200")
    assert item.status == ItemStatus.RESOLVED


def test_majority_one_one_one_goes_to_adjudication(project, review_item, resolution_raters):
    project.resolution_rule = ResolutionRule.MAJORITY
    item, _ = rated_item(
        project, review_item, resolution_raters, ["1200", "1290", AnswerInput(Decision.OMIT)]
    )
    assert item.status == ItemStatus.ADJUDICATION
    assert not Resolution.objects.exists()


def test_majority_of_unclear_answers_does_not_resolve(project, review_item, resolution_raters):
    project.resolution_rule = ResolutionRule.MAJORITY
    item, _ = rated_item(project, review_item, resolution_raters, [UNCLEAR, UNCLEAR, "1200"])
    assert item.status == ItemStatus.ADJUDICATION


@pytest.mark.parametrize(
    ("first", "second", "agree"),
    [
        ("1,200.00", "1200", True),
        ("Northwind  traders", "northwind traders", True),
        ("  Northwind Traders ", "NORTHWIND TRADERS", True),
        ("12,480.55", "12,840.55", False),
        ("1 200.00", "1200", False),  # a space is not a thousands separator
        (AnswerInput(Decision.OMIT), AnswerInput(Decision.OMIT), True),
        (AnswerInput(Decision.OMIT), "1200", False),
        (UNCLEAR, UNCLEAR, False),
        (UNCLEAR, "1200", False),
    ],
)
def test_answers_are_compared_after_normalisation(
    project, review_item, resolution_raters, first, second, agree
):
    item, _ = rated_item(project, review_item, resolution_raters, [first, second])
    assert (item.status == ItemStatus.RESOLVED) is agree
    assert Resolution.objects.filter(question__item=item).exists() is agree


def test_resolved_value_is_what_most_raters_typed(project, review_item, resolution_raters):
    project.resolution_rule = ResolutionRule.MAJORITY
    item, _ = rated_item(project, review_item, resolution_raters, ["1,200.00", "1200", "1,200.00"])
    assert Resolution.objects.get(question__item=item).value == "1,200.00"


def test_latest_answer_counts_not_the_first(project, review_item, rate, resolution_raters):
    project.overlap = 2
    project.save()
    item = review_item(project)
    rate(resolution_raters[0], item, {"$.total": "1200"})
    mine = rate(resolution_raters[1], item, {"$.total": "1290"}, submit=False)
    rate(resolution_raters[1], item, {"$.total": "1,200"}, assignment=mine)
    resolution = Resolution.objects.get(question__item=item)
    assert sorted(a.seq for a in resolution.source_answers.all()) == [1, 2]


def test_adjudication_requires_a_reason(project, disputed):
    adjudicator = member(project, Role.ADJUDICATOR)
    with pytest.raises(ResolutionError, match="reason"):
        adjudication_record(
            actor=adjudicator, question=disputed, decision=Decision.SET, value="1200", reason="   "
        )
    disputed.refresh_from_db()
    assert disputed.status == QuestionStatus.ADJUDICATION
    assert not Resolution.objects.exists()


@pytest.mark.parametrize(
    ("decision", "value"),
    [
        ("", None),
        (Decision.UNCLEAR, None),
        (Decision.LABEL, "good"),
        (Decision.SET, ""),
        (Decision.A, None),
        ("bogus", "1200"),
    ],
)
def test_adjudication_refuses_a_decision_that_does_not_fit_the_question(
    project, disputed, decision, value
):
    adjudicator = member(project, Role.ADJUDICATOR)
    with pytest.raises(ResolutionError):
        adjudication_record(
            actor=adjudicator,
            question=disputed,
            decision=decision,
            value=value,
            reason="checked the statement",
        )
    assert not Resolution.objects.exists()


def test_adjudication_of_an_open_question_is_refused(project, review_item):
    question = review_item(project).questions.get()
    with pytest.raises(ResolutionError, match="not finished"):
        adjudication_record(
            actor=member(project, Role.ADJUDICATOR),
            question=question,
            decision=Decision.SET,
            value="1200",
            reason="early",
        )


def test_adjudication_records_who_decided_why_and_from_which_answers(project, disputed):
    adjudicator = member(project, Role.ADJUDICATOR, username="ada")
    resolution = adjudication_record(
        actor=adjudicator,
        question=disputed,
        decision=Decision.SET,
        value="1,200.00",
        reason="page 3 says 1,200.00",
    )
    assert resolution.method == Resolution.Method.ADJUDICATED
    assert resolution.decided_by == adjudicator
    assert resolution.reason == "page 3 says 1,200.00"
    assert resolution.supersedes is None
    assert resolution.source_answers.count() == 2
    disputed.refresh_from_db()
    assert disputed.status == QuestionStatus.RESOLVED
    assert disputed.item.status == ItemStatus.RESOLVED
    assert Event.objects.filter(item=disputed.item, kind="adjudicated", actor=adjudicator).exists()


def test_a_correction_after_approval_supersedes_and_reopens_for_approval(project, disputed):
    adjudicator = member(project, Role.ADJUDICATOR)
    approver = member(project, Role.APPROVER)
    first = adjudication_record(
        actor=adjudicator, question=disputed, decision=Decision.SET, value="1200", reason="page 3"
    )
    approval_record(actor=approver, item=disputed.item, password=PASSWORD, confirmed=True)
    disputed.item.refresh_from_db()
    assert disputed.item.status == ItemStatus.APPROVED

    second = adjudication_record(
        actor=adjudicator,
        question=disputed,
        decision=Decision.OMIT,
        reason="the field is not on this statement",
    )
    assert second.supersedes == first
    assert current_resolution(disputed) == second
    assert Resolution.objects.filter(question=disputed).count() == 2  # the first is kept
    disputed.item.refresh_from_db()
    assert disputed.item.status == ItemStatus.RESOLVED
    assert Event.objects.filter(item=disputed.item, kind="corrected").exists()
