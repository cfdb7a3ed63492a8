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
        ({"count": "twenty"}, "Enter a whole number."),
        ({"count": "-1"}, "Ensure this value is greater than or equal to 0."),
        ({"overlap": "0"}, "Ensure this value is greater than or equal to 1."),
        ({"selection": "everything"}, "Select a valid choice."),
        ({"raters": []}, "Choose at least one rater."),
        ({"seed": "1.5"}, "Enter a whole number."),
    ],
)
def test_a_bad_batch_is_refused_beside_the_field_keeping_the_input(
    admin_client, project, review_item, change, message
):
    review_item(project)
    rater = member(project, Role.RATER, username="rita")
    data = {"name": "b1", "raters": [rater.pk], "selection": "count", "count": "5"} | change
    response = admin_client.post(reverse("assignments", args=[project.slug]), data)
    page = response.content.decode()
    assert response.status_code == 200 and message in page
    field = next(iter(change))
    assert f'id="id_{field}_error"' in page  # beside its field
    assert 'value="b1"' in page  # what was typed stays
    if change != {"raters": []}:
        assert f'value="{rater.pk}" checked' in page
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


def test_a_split_with_the_default_fraction_is_drawn(
    admin_client, project, tmp_path, django_capture_on_commit_callbacks
):
    small_project(project, tmp_path, draw=False)
    with django_capture_on_commit_callbacks(execute=True):  # the job, run by the worker
        response = admin_client.post(reverse("dashboard_split", args=[project.slug]), {"seed": "4"})
    assert response.url.startswith(f"/p/{project.slug}/jobs/")  # the job's page
    assert "Split drawn with seed 4" in admin_client.get(response.url).content.decode()
    assert SplitDraw.objects.filter(project=project, held_out_fraction=0.5).exists()


def test_a_refused_split_or_send_is_shown_again_as_typed(admin_client, project, tmp_path):
    small_project(project, tmp_path, draw=False)
    split = reverse("dashboard_split", args=[project.slug])
    admin_client.post(split, {"seed": "7", "held_out_fraction": "1.5"})
    page = admin_client.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    assert 'name="held_out_fraction" step="0.05" min="0.05" max="0.95" value="1.5"' in page
    assert "Ensure this value is less than or equal to 1." in page
    assert 'id="split-seed" name="seed" required value="7"' in page
    send = reverse("dashboard_send", args=[project.slug])
    admin_client.post(send, {"criterion": "faithful", "selection": "calibration_sample", "n": "0"})
    page = admin_client.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    assert 'value="calibration_sample" selected' in page and 'name="n" min="1" value="0"' in page
    # Once: the next visit shows the form as it was.
    page = admin_client.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    assert 'name="n" min="1" value="20"' in page


def test_a_typo_in_a_member_name_is_kept_beside_its_reason(admin_client, project):
    url = reverse("members", args=[project.slug])
    response = admin_client.post(url, {"user": "ritaa", "role": "approver"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "No active user &#x27;ritaa&#x27;" in page and 'value="ritaa"' in page
    assert '<option value="approver" selected>' in page
    member(project, username="rita")
    response = admin_client.post(url, {"user": "rita", "role": "approver"})
    assert response.status_code == 302 and "rita is now approver." in _message(response)
