"""Sending items to raters as criterion questions: idempotent, re-opens items, stays blind."""

import pytest
from django.core.management import CommandError, call_command

from judging.models import Criterion, ItemSplit, LabelRequest, Split
from judging.services.calibration.send_to_humans import allocate, items_send_to_humans
from judging.services.calibration.splits import SplitError, split_draw
from reviews.models import Event, Item, ItemStatus, Question, QuestionKind
from tests.judging.helpers import EXAMPLES, import_items

pytestmark = pytest.mark.django_db
SPLIT_VOTE_KEYS = {"code90407/2", "instruct90233/4", "wiki90158/6", "code90511/5", "code90511/6"}


@pytest.fixture
def correctness(project):
    import_items(project, EXAMPLES / "textflow-evaluated.json", "--format", "textflow")
    return Criterion.objects.get(project=project, name="correctness")


def test_split_votes_get_one_question_each_and_are_reopened(project, correctness):
    result = items_send_to_humans(
        actor=None, project=project, criterion=correctness, selection="split_votes"
    )
    assert (result.items, result.questions_created, result.items_reopened) == (5, 5, 5)
    questions = Question.objects.filter(item__project=project)
    assert {q.item.external_id for q in questions} == SPLIT_VOTE_KEYS
    assert {q.item.status for q in questions} == {ItemStatus.OPEN}
    assert Item.objects.filter(project=project, status=ItemStatus.OPEN).count() == 5
    assert Event.objects.filter(kind="question_added").count() == 5


def test_sending_twice_creates_nothing_new(project, correctness):
    items_send_to_humans(
        actor=None, project=project, criterion=correctness, selection="split_votes"
    )
    again = items_send_to_humans(
        actor=None, project=project, criterion=correctness, selection="split_votes"
    )
    assert (again.questions_created, again.questions_existing, again.items_reopened) == (0, 5, 0)
    assert Question.objects.filter(item__project=project).count() == 5
    requests = LabelRequest.objects.filter(criterion=correctness)
    assert {(r.item.external_id, r.selection) for r in requests} == {
        (key, "split_votes") for key in SPLIT_VOTE_KEYS
    }  # the selection is recorded once, for the estimates (random draws only count)


def test_questions_snapshot_the_criterion_and_carry_no_verdict(project, correctness):
    items_send_to_humans(
        actor=None, project=project, criterion=correctness, selection="split_votes"
    )
    question = Question.objects.get(item__external_id="code90511/6")
    assert (question.kind, question.key, question.labels) == (
        QuestionKind.CRITERION,
        "correctness",
        ["Correct", "Incorrect"],
    )
    assert (question.criterion_version, question.prompt) == ("1", correctness.text)
    assert (question.options, question.reason) == ({}, "")
    shown = f"{question.prompt} {question.options} {question.reason}"
    assert "Incorrect" not in shown and "provided answer" not in shown


def test_held_out_and_calibration_samples_need_a_split(project, correctness):
    with pytest.raises(SplitError):
        items_send_to_humans(
            actor=None, project=project, criterion=correctness, selection="held_out"
        )


def test_held_out_selection_asks_for_every_held_out_item(project, correctness):
    split_draw(actor=None, project=project, seed=2)
    result = items_send_to_humans(
        actor=None, project=project, criterion=correctness, selection="held_out"
    )
    held_out = ItemSplit.objects.filter(item__project=project, split=Split.HELD_OUT)
    assert result.questions_created == held_out.count() == 15
    assert set(Question.objects.values_list("item_id", flat=True)) == set(
        held_out.values_list("item_id", flat=True)
    )


def test_calibration_sample_is_seeded_and_drawn_from_calibration_items(project, correctness):
    split_draw(actor=None, project=project, seed=2)
    result = items_send_to_humans(
        actor=None,
        project=project,
        criterion=correctness,
        selection="calibration_sample",
        n=4,
        seed=9,
    )
    asked = set(Question.objects.values_list("item_id", flat=True))
    assert result.questions_created == 4
    assert set(ItemSplit.objects.filter(item_id__in=asked).values_list("split", flat=True)) == {
        Split.CALIBRATION
    }
    Question.objects.all().delete()
    items_send_to_humans(
        actor=None,
        project=project,
        criterion=correctness,
        selection="calibration_sample",
        n=4,
        seed=9,
    )
    assert set(Question.objects.values_list("item_id", flat=True)) == asked


def test_allocation_is_proportional_with_largest_remainders():
    assert allocate({"a": 10, "b": 6, "c": 4}, 5) == {"a": 3, "b": 1, "c": 1}
    assert allocate({"a": 2, "b": 1}, 10) == {"a": 2, "b": 1}


def test_pairwise_questions_show_both_answers(project):
    import_items(project, EXAMPLES / "judging.jsonl")
    preference = Criterion.objects.get(project=project, name="preference")
    split_draw(actor=None, project=project, seed=1)
    items_send_to_humans(actor=None, project=project, criterion=preference, selection="held_out")
    question = Question.objects.filter(kind=QuestionKind.PAIRWISE).first()
    assert question.options == {"A": "baseline", "B": "candidate"}
    assert question.labels == ["A", "B", "tie"]


def test_command(project, correctness, capsys):
    call_command(
        "send_to_humans", "--project", project.slug, "--criterion", "correctness", "--split-votes"
    )
    assert "split_votes: 5 items, 5 questions created" in capsys.readouterr().out
    with pytest.raises(CommandError, match="needs a size"):
        split_draw(actor=None, project=project, seed=1)
        call_command(
            "send_to_humans",
            "--project",
            project.slug,
            "--criterion",
            "correctness",
            "--calibration-sample",
            "3",
        )


@pytest.mark.parametrize(
    "options, error",
    [
        (
            ["--criterion", "nope", "--split-votes"],
            "criterion: this project has no criterion 'nope'",
        ),
        (
            ["--criterion", "correctness", "--calibration-sample", "0", "--seed", "1"],
            "how many: Ensure this value is greater than or equal to 1",
        ),
    ],
)
def test_command_options_pass_the_dashboard_form(project, correctness, options, error):
    """The command's options go through the page's form: the same refusals, nothing written."""
    split_draw(actor=None, project=project, seed=1)
    questions = Question.objects.count()
    with pytest.raises(CommandError, match=error):
        call_command("send_to_humans", "--project", project.slug, *options)
    assert Question.objects.count() == questions
