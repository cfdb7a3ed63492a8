"""The one answer-choice form: what raters and adjudicators may post for each kind of question."""

import pytest

from reviews.forms import AnswerChoiceForm
from reviews.models import Decision, Question, QuestionKind, decisions_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def field(project, review_item):
    return review_item(project, {"$.total": ["1,200.00", "1,290.00"]}).questions.get()


def _form(question, adjudicator=False, **data):
    return AnswerChoiceForm(data, question=question, adjudicator=adjudicator)


def test_a_candidate_is_a_set_with_its_value(field):
    claim = field.candidates.order_by("position").first()
    for adjudicator in (False, True):
        form = _form(field, adjudicator, choice=f"claim:{claim.pk}")
        assert form.is_valid(), form.errors
        assert form.cleaned_data["decision"] == Decision.SET
        assert form.cleaned_data["answer_value"] == "1,200.00"
    given = _form(field, choice=f"claim:{claim.pk}", note=" why ")
    given.is_valid()
    answer = given.answer_input()
    assert (answer.chosen_claim_id, answer.value, answer.note) == (claim.pk, None, "why")


def test_a_typed_value_is_stripped(field):
    form = _form(field, choice="value", value="  1 200  ")
    assert form.is_valid()
    assert form.answer_input().value == "1 200"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "Choose an answer first."),
        ({"choice": "label:good"}, "Choose an answer first."),
        ({"choice": "A"}, "Choose an answer first."),
        ({"choice": "claim:999999"}, "That candidate does not belong to this question."),
        ({"choice": "rm -rf"}, "Choose an answer first."),
    ],
)
def test_choices_a_field_question_cannot_take(field, data, message):
    form = _form(field, **data)
    assert not form.is_valid()
    assert form.error_text() == message


def test_a_candidate_of_another_question_is_refused(project, review_item, field):
    other = review_item(project, {"$.date": ["1 May", "2 May"]}).questions.get()
    form = _form(field, choice=f"claim:{other.candidates.first().pk}")
    assert not form.is_valid()


def test_unclear_is_a_raters_flag_not_a_decision(field):
    rater = _form(field, choice="unclear")
    assert rater.is_valid() and rater.answer_input().flagged
    assert not _form(field, adjudicator=True, choice="unclear").is_valid()


@pytest.mark.parametrize(
    ("kind", "choice", "decision", "value"),
    [
        (QuestionKind.CRITERION, "label:good", Decision.LABEL, "good"),
        (QuestionKind.PAIRWISE, "B", Decision.B, None),
        (QuestionKind.PAIRWISE, "tie", Decision.TIE, None),
    ],
)
def test_criterion_and_pairwise_choices(project, review_item, kind, choice, decision, value):
    item = review_item(project, {})
    question = Question.objects.create(item=item, kind=kind, key="tone", labels=["good", "bad"])
    for adjudicator in (False, True):
        form = _form(question, adjudicator, choice=choice)
        assert form.is_valid(), form.errors
        assert (form.cleaned_data["decision"], form.cleaned_data["answer_value"]) == (
            decision,
            value,
        )
    assert not _form(question, choice="omit").is_valid()


def test_one_list_of_decisions():
    assert decisions_for(QuestionKind.FIELD) == (Decision.SET, Decision.OMIT, Decision.UNCLEAR)
    assert Decision.UNCLEAR not in decisions_for(QuestionKind.PAIRWISE, adjudicator=True)
