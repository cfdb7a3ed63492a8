"""The true-score page and API: the command's figures, its refusals, held-out hidden until shown."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging.models import HeldOutAccess
from judging.services.calibration.splits import split_draw
from reviews.models import Role
from tests.factories import member
from tests.judging.helpers import see_held_out
from tests.judging.test_estimates import biased_project

pytestmark = [pytest.mark.django_db, pytest.mark.filterwarnings("ignore::DeprecationWarning")]
ASSUMED = "?judge=openai/gpt-4o&split=all&assume_random_labels=on&alpha=0.05&half_width=0.08"


def command_entry(project) -> dict:
    out = StringIO()
    call_command(
        "estimate",
        *("--project", project.slug, "--criterion", "faithful", "--judge", "openai/gpt-4o"),
        *("--assume-random-labels", "--half-width", "0.08", "--format", "json"),
        stdout=out,
    )
    return json.loads(out.getvalue())["estimates"][0]


@pytest.fixture
def admin(project, tmp_path):
    biased_project(project, tmp_path)
    return member(project, Role.ADMIN)


def test_the_page_shows_the_commands_three_figures_and_the_plan(client, project, admin):
    client.force_login(admin)
    page = client.get(reverse("dashboard_estimate", args=[project.slug, "faithful"]) + ASSUMED)
    assert page.status_code == 200
    entry, body = command_entry(project), page.content.decode()
    for key in ("ppi", "human_only", "judge_only"):
        assert f"{entry[key]['value']:.3f}" in body
        assert f"[{entry[key]['ci'][0]:.3f}, {entry[key]['ci'][1]:.3f}]" in body
    assert f"Label {entry['labels_needed']['ppi']['more']} more" in body
    assert "ASSUMED" in body


def test_the_page_refuses_imported_labels_until_assumed_random(client, project, admin):
    client.force_login(admin)
    page = client.get(reverse("dashboard_estimate", args=[project.slug, "faithful"]))
    assert page.status_code == 200
    assert "no known selection" in page.content.decode()
    assert 'id="estimate-figures"' not in page.content.decode()


def test_held_out_figures_wait_for_the_recorded_look(client, project, admin):
    split_draw(actor=None, project=project, seed=3)
    client.force_login(admin)
    url = reverse("dashboard_estimate", args=[project.slug, "faithful"]) + ASSUMED
    assert "Show held-out figures" in client.get(url).content.decode()
    assert not HeldOutAccess.objects.exists()
    see_held_out(client, admin, project)
    assert 'id="estimate-figures"' in client.get(url).content.decode()
    assert HeldOutAccess.objects.count() == 1  # the page itself records nothing more


def test_an_unknown_criterion_is_404(client, project, admin):
    client.force_login(admin)
    assert client.get(reverse("dashboard_estimate", args=[project.slug, "nope"])).status_code == 404


def test_the_api_gives_the_commands_figures_and_names_its_refusals(client, project, admin):
    client.force_login(admin)
    url = f"/api/projects/{project.slug}/estimates?criterion=faithful&judge=openai/gpt-4o"
    response = client.get(url + "&assume_random_labels=true&half_width=0.08")
    assert response.status_code == 200
    assert response.json()["estimates"][0] == command_entry(project)
    refused = client.get(url)
    assert refused.status_code == 422
    assert "no known selection" in refused.json()["error"]["reason"]
    assert client.get(url + "&alpha=0.9").status_code == 422
