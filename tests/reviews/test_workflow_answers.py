"""Recording answers: append-only history, stale writes refused, submit only when complete."""

import pytest

from reviews.models import Answer, AssignmentStatus, Decision, Event, Role
from reviews.services.rating.answers import (
    AnswerError,
    AnswerInput,
    StaleAnswer,
    answer_record,
    assignment_submit,
)
from tests.factories import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def item(project, review_item):
    return review_item(
        project,
        {"$.total": ["1,200.00", "1,290.00"], "$.date": ["2024-03-14"]},
        criteria={"tone": ["good", "bad"]},
    )


@pytest.fixture
def assignment(rater, item, rate):
    return rate(rater, item, {}, submit=False)


def _save(assignment, key, given, expected_seq):
    question = assignment.item.questions.get(key=key)
    return answer_record(
        actor=assignment.rater,
        assignment=assignment,
        question=question,
        given=given,
        expected_seq=expected_seq,
    )


def test_every_change_is_a_new_row_and_old_rows_are_kept(assignment):
    first = _save(assignment, "$.total", AnswerInput(Decision.SET, "1,200.00"), 0)
    second = _save(assignment, "$.total", AnswerInput(Decision.SET, "1,290.00"), 1)
    third = _save(assignment, "$.total", AnswerInput(Decision.OMIT), 2)
    rows = list(Answer.objects.filter(rater=assignment.rater).order_by("seq"))
    assert [(a.seq, a.decision, a.value) for a in rows] == [
        (1, "set", "1,200.00"),
        (2, "set", "1,290.00"),
        (3, "omit", None),
    ]
    assert [a.pk for a in rows] == [first.pk, second.pk, third.pk]
    assert Event.objects.filter(item=assignment.item, kind="answered").count() == 3


def test_choosing_a_candidate_records_its_value(assignment):
    claim = assignment.item.questions.get(key="$.total").candidates.get(value="1,290.00")
    answer = _save(assignment, "$.total", AnswerInput(Decision.SET, chosen_claim_id=claim.pk), 0)
    assert (answer.value, answer.chosen_claim_id) == ("1,290.00", claim.pk)


def test_a_repeated_identical_save_is_not_a_new_row(assignment):
    first = _save(assignment, "$.total", AnswerInput(Decision.SET, "1200", note="checked "), 0)
    again = _save(assignment, "$.total", AnswerInput(Decision.SET, "1200", note="checked"), 1)
    assert again.pk == first.pk
    assert Answer.objects.filter(rater=assignment.rater).count() == 1


def test_stale_write_is_refused_and_carries_the_latest(assignment):
    _save(assignment, "$.total", AnswerInput(Decision.SET, "1200"), 0)
    newer = _save(assignment, "$.total", AnswerInput(Decision.SET, "1290"), 1)
    with pytest.raises(StaleAnswer) as refused:
        _save(assignment, "$.total", AnswerInput(Decision.OMIT), 1)  # another tab saw seq 1
    assert refused.value.latest.pk == newer.pk
    assert Answer.objects.filter(rater=assignment.rater).count() == 2


def test_a_first_save_from_a_tab_that_missed_the_first_answer_is_stale(assignment):
    first = _save(assignment, "$.total", AnswerInput(Decision.SET, "1200"), 0)
    with pytest.raises(StaleAnswer) as refused:
        _save(assignment, "$.total", AnswerInput(Decision.SET, "9999"), 0)
    assert refused.value.latest.pk == first.pk


def test_answer_on_a_question_of_another_item_is_refused(project, assignment, review_item):
    other_question = review_item(project).questions.get()
    with pytest.raises(AnswerError, match="not part of your assignment"):
        answer_record(
            actor=assignment.rater,
            assignment=assignment,
            question=other_question,
            given=AnswerInput(Decision.SET, "1200"),
            expected_seq=0,
        )
    assert not Answer.objects.exists()


def test_answer_through_another_raters_assignment_is_refused(project, assignment):
    intruder = member(project, Role.RATER)
    question = assignment.item.questions.get(key="$.total")
    with pytest.raises(AnswerError, match="not part of your assignment"):
        answer_record(
            actor=intruder,
            assignment=assignment,
            question=question,
            given=AnswerInput(Decision.SET, "1200"),
            expected_seq=0,
        )
    assert not Answer.objects.exists()


@pytest.mark.parametrize(
    ("key", "given", "message"),
    [
        ("tone", AnswerInput(Decision.LABEL, "excellent"), "not one of the labels"),
        ("tone", AnswerInput(Decision.SET, "good"), "not an answer to a criterion"),
        ("$.total", AnswerInput(Decision.SET, ""), "Type a value"),
        ("$.total", AnswerInput(Decision.A), "not an answer to a field"),
    ],
)
def test_answers_that_do_not_fit_the_question_are_refused(assignment, key, given, message):
    with pytest.raises(AnswerError, match=message):
        _save(assignment, key, given, 0)
    assert not Answer.objects.exists()


def test_a_candidate_of_another_question_is_refused(assignment):
    foreign = assignment.item.questions.get(key="$.date").candidates.get()
    with pytest.raises(AnswerError, match="does not belong"):
        _save(assignment, "$.total", AnswerInput(Decision.SET, chosen_claim_id=foreign.pk), 0)


def test_submit_is_refused_while_a_question_is_unanswered_and_names_it(assignment):
    _save(assignment, "$.total", AnswerInput(Decision.SET, "1200"), 0)
    with pytest.raises(AnswerError) as refused:
        assignment_submit(actor=assignment.rater, assignment=assignment)
    assert "$.date" in str(refused.value) and "tone" in str(refused.value)
    assert "$.total" not in str(refused.value)
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE


def _answer_all(assignment):
    _save(assignment, "$.total", AnswerInput(Decision.SET, "1200"), 0)
    _save(assignment, "$.date", AnswerInput(Decision.UNCLEAR), 0)
    _save(assignment, "tone", AnswerInput(Decision.LABEL, "good"), 0)
    assignment_submit(actor=assignment.rater, assignment=assignment)
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.SUBMITTED


def test_a_submitted_answer_can_be_revised_until_the_question_is_settled(
    project, rater, item, assignment, rate
):
    _answer_all(assignment)  # overlap 2: the item waits for a second rater
    revised = _save(assignment, "$.total", AnswerInput(Decision.SET, "1290"), 1)
    assert (revised.seq, revised.value) == (2, "1290")  # a new row; the first one stays
    assert Answer.objects.filter(rater=rater, question__key="$.total").count() == 2
    event = Event.objects.filter(kind="answered").latest("id")
    assert event.data["revision"] is True
    other = member(project, Role.RATER)
    rate(
        other,
        item,
        {"$.total": "1290", "$.date": "2024-03-14", "tone": AnswerInput(Decision.LABEL, "good")},
    )
    total = item.questions.get(key="$.total")
    assert total.status == "resolved"
    assert total.resolutions.get().value == "1290"  # the revision counted
    with pytest.raises(AnswerError, match="already settled"):
        _save(assignment, "$.total", AnswerInput(Decision.SET, "1200"), 2)


def test_an_answer_after_the_item_is_settled_is_refused(project, assignment):
    project.overlap = 1
    project.save()
    _answer_all(assignment)  # the only rater: submitting settles every question it can
    with pytest.raises(AnswerError, match="settled"):
        _save(assignment, "$.total", AnswerInput(Decision.SET, "1290"), 1)
    assert Answer.objects.filter(rater=assignment.rater).count() == 3


def test_a_skipped_item_takes_no_answer(assignment):
    assignment.status = AssignmentStatus.SKIPPED
    assignment.save()
    with pytest.raises(AnswerError, match="no longer assigned"):
        _save(assignment, "$.total", AnswerInput(Decision.SET, "1290"), 0)


def test_another_rater_cannot_submit_my_assignment(project, assignment):
    intruder = member(project, Role.RATER)
    with pytest.raises(AnswerError):
        assignment_submit(actor=intruder, assignment=assignment)
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE
