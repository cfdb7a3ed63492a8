"""Final human labels (resolution first, else the imported majority) and per-rater labels."""

import pytest

from judging.models import Criterion, HumanLabel
from judging.selectors_labels import final_labels, rater_labels
from reviews.models import (
    Answer,
    Assignment,
    AssignmentStatus,
    Decision,
    Question,
    QuestionKind,
    Resolution,
)
from tests.factories import ItemFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def criterion(project):
    return Criterion.objects.create(
        project=project, name="faithful", labels=["pass", "fail"], positive_label="pass", sha256="0"
    )


def imported(item, criterion, **labels):
    for rater, label in labels.items():
        HumanLabel.objects.create(item=item, criterion=criterion, rater=rater, label=label)


def question(item, criterion, **fields):
    fields = {"criterion_version": criterion.version} | fields
    return Question.objects.create(
        item=item,
        kind=QuestionKind.CRITERION,
        key=criterion.name,
        labels=criterion.labels,
        **fields,
    )


def answer(
    question,
    rater,
    value,
    *,
    seq=1,
    status=AssignmentStatus.SUBMITTED,
    decision=Decision.LABEL,
    gold=False,
):
    assignment, _ = Assignment.objects.get_or_create(
        item=question.item, rater=rater, defaults={"status": status, "gold": gold}
    )
    return Answer.objects.create(
        question=question,
        rater=rater,
        assignment=assignment,
        seq=seq,
        decision=decision,
        value=value,
    )


def test_imported_majority_is_the_final_label_and_ties_are_reported(project, criterion):
    agreed, split, tied = (ItemFactory(project=project) for _ in range(3))
    imported(agreed, criterion, ana="pass", ben="pass")
    imported(split, criterion, ana="pass", ben="fail", cy="fail")
    imported(tied, criterion, ana="pass", ben="fail")
    final = final_labels(criterion=criterion)
    assert final.labels == {agreed.pk: "pass", split.pk: "fail"}
    assert final.ties == [tied.pk]
    assert set(final.sources.values()) == {"imported"}


def test_the_current_resolution_wins_over_imported_labels(project, criterion):
    item = ItemFactory(project=project)
    imported(item, criterion, ana="pass", ben="fail")  # a tie on its own
    asked = question(item, criterion)
    first = Resolution.objects.create(
        question=asked, decision=Decision.LABEL, value="pass", method=Resolution.Method.MAJORITY
    )
    Resolution.objects.create(
        question=asked,
        decision=Decision.LABEL,
        value="fail",
        method=Resolution.Method.ADJUDICATED,
        supersedes=first,
    )
    final = final_labels(criterion=criterion)
    assert final.labels == {item.pk: "fail"} and final.sources == {item.pk: "resolution"}
    assert final.ties == []


def test_questions_of_another_criterion_version_are_ignored(project, criterion):
    item = ItemFactory(project=project)
    asked = question(item, criterion, criterion_version="0")
    Resolution.objects.create(
        question=asked, decision=Decision.LABEL, value="pass", method=Resolution.Method.MAJORITY
    )
    assert final_labels(criterion=criterion).labels == {}


def test_rater_labels_combine_latest_submitted_answers_and_imported_labels(project, criterion):
    item, other = ItemFactory(project=project), ItemFactory(project=project)
    ana, ben, cy = UserFactory(username="ana"), UserFactory(username="ben"), UserFactory()
    asked = question(item, criterion)
    answer(asked, ana, "pass")
    answer(asked, ana, "fail", seq=2)  # the latest answer counts
    answer(asked, ben, "pass", status=AssignmentStatus.ACTIVE)  # not submitted: left out
    answer(asked, cy, None, decision=Decision.UNCLEAR)  # no label
    answer(asked, UserFactory(username="gus"), "pass", gold=True)  # a gold check: only scored
    imported(other, criterion, dora="pass")
    assert rater_labels(criterion=criterion) == {
        "ana": {item.pk: "fail"},
        "dora": {other.pk: "pass"},
    }
