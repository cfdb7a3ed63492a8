"""Assignments, the split and send-to-humans parse their input with Django forms: bad input is
refused with a message naming the field, and writes nothing."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from judging.models import SplitDraw
from reviews.models import Assignment, AssignmentBatch, Question, Role
from tests.factories import member
from tests.judging.helpers import small_project

pytestmark = pytest.mark.django_db


def _message(response) -> str:
    return " ".join(str(m) for m in get_messages(response.wsgi_request))


@pytest.fixture
def admin_client(client, project):
    client.force_login(member(project, Role.ADMIN))
    return client


@pytest.mark.parametrize(
    "change, message",
    [
        ({"count": "twenty"}, "How many: Enter a whole number."),
        ({"count": "-1"}, "How many: Ensure this value is greater than or equal to 0."),
        ({"overlap": "0"}, "overlap: Ensure this value is greater than or equal to 1."),
        ({"selection": "everything"}, "selection: Select a valid choice."),
        ({"raters": []}, "raters: choose at least one rater."),
        ({"seed": "1.5"}, "seed: Enter a whole number."),
    ],
)
def test_a_bad_batch_is_refused_naming_the_field(
    admin_client, project, review_item, change, message
):
    review_item(project)
    rater = member(project, Role.RATER, username="rita")
    data = {"name": "b1", "raters": [rater.pk], "selection": "count", "count": "5"} | change
    response = admin_client.post(reverse("assignments", args=[project.slug]), data)
    assert message in _message(response)
    assert not AssignmentBatch.objects.exists() and not Assignment.objects.exists()


def test_a_good_batch_is_created(admin_client, project, review_item):
    review_item(project)
    rater = member(project, Role.RATER, username="rita")
    data = {"name": "b1", "raters": [rater.pk], "selection": "count", "count": "5", "seed": ""}
    response = admin_client.post(reverse("assignments", args=[project.slug]), data)
    assert "Batch b1: 1 assignment created." in _message(response)


@pytest.mark.parametrize(
    "url, data, message",
    [
        ("dashboard_split", {"seed": "x"}, "Split not drawn: seed: Enter a whole number."),
        ("dashboard_split", {}, "seed: give a whole-number seed."),
        (
            "dashboard_split",
            {"seed": "3", "held_out_fraction": "1.5"},
            "held-out fraction: Ensure this value is less than or equal to 1.",
        ),
        (
            "dashboard_send",
            {"criterion": "nope", "selection": "held_out"},
            "Nothing sent: criterion: this project has no criterion 'nope'.",
        ),
        (
            "dashboard_send",
            {"criterion": "faithful", "selection": "calibration_sample", "n": "0"},
            "how many: Ensure this value is greater than or equal to 1.",
        ),
    ],
)
def test_split_and_send_refuse_bad_input_naming_the_field(
    admin_client, project, tmp_path, url, data, message
):
    small_project(project, tmp_path, draw=False)
    before = (SplitDraw.objects.count(), Question.objects.count())
    response = admin_client.post(reverse(url, args=[project.slug]), data)
    assert message in _message(response)
    assert (SplitDraw.objects.count(), Question.objects.count()) == before


def test_a_split_with_the_default_fraction_is_drawn(admin_client, project, tmp_path):
    small_project(project, tmp_path, draw=False)
    response = admin_client.post(reverse("dashboard_split", args=[project.slug]), {"seed": "4"})
    assert "Split drawn with seed 4" in _message(response)
    assert SplitDraw.objects.filter(project=project, held_out_fraction=0.5).exists()
