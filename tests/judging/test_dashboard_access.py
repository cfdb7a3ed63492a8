"""Who may see the calibration dashboard: readers (admin, adjudicator, approver) get every
view, an outsider 404, a rater 403: raters never see judge verdicts or agreement figures. The
POSTs have narrower roles: tagging is for adjudicators; recompute, draw the split and send to
humans for admins.

Outsiders hold every role in another project, so a 404 can only come from the membership
check. `world` (tests/judging/conftest.py) is the small calibration project
(tests/judging/helpers.py: `small_project`): 40 items, a critical slice, one critical
criterion, two judges (gpt-4o with confidences, claude without) and two raters, with the split
drawn.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging.models import FailureTag, SplitDraw
from reviews.models import Question, Role
from tests.factories import ItemFactory, ProjectFactory
from tests.judging.helpers import see_held_out

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_cache")]


def _get_urls(world) -> dict[str, str]:
    slug = world.project.slug
    chart = {"slug": slug, "name": "faithful"}
    judge = "?judge=openai/gpt-4o"
    return {
        "dashboard": reverse("project_dashboard", args=[slug]),
        "criterion": reverse("dashboard_criterion", args=[slug, "faithful"]),
        "disagreements": reverse("dashboard_disagreements", args=[slug]),
        "failures": reverse("dashboard_failures", args=[slug]),
        "report.md": reverse("dashboard_report", args=[slug, "md"]),
        "report.json": reverse("dashboard_report", args=[slug, "json"]),
        "item": reverse("dashboard_item", args=[slug, world.item.pk]),
        "estimate": reverse("dashboard_estimate", args=[slug, "faithful"])
        + "?judge=openai/gpt-4o&split=all&assume_random_labels=on&alpha=0.05&half_width=0.1",
        "estimate API": f"/api/projects/{slug}/estimates?criterion=faithful&judge=openai/gpt-4o"
        "&assume_random_labels=true",
        **{
            f"{kind}.{fmt}": reverse("dashboard_chart", kwargs={**chart, "kind": kind, "fmt": fmt})
            + judge
            for kind in ("confusion", "reliability")
            for fmt in ("svg", "png", "csv")
        },
    }


def _status_of_every_view(client, world, user) -> dict[str, int]:
    client.force_login(user)
    found = {name: client.get(url).status_code for name, url in _get_urls(world).items()}
    tag = reverse("dashboard_tag", args=[world.project.slug, world.item.pk])
    found["tag POST"] = client.post(
        tag, {"criterion": "faithful", "judge": "openai/gpt-4o", "bucket": "", "note": "n"}
    ).status_code
    slug = world.project.slug
    found["recompute POST"] = client.post(reverse("dashboard_recompute", args=[slug])).status_code
    found["split POST"] = client.post(
        reverse("dashboard_split", args=[slug]), {"seed": 8, "held_out_fraction": 0.5}
    ).status_code
    found["send POST"] = client.post(
        reverse("dashboard_send", args=[slug]),
        {"criterion": "faithful", "selection": "calibration_sample", "n": 2, "seed": 1},
    ).status_code
    return found


ADMIN_POSTS = ("recompute POST", "split POST", "send POST")
ALL = [
    "dashboard",
    "criterion",
    "disagreements",
    "failures",
    "report.md",
    "report.json",
    "item",
    "estimate",
    "estimate API",
    *(f"{k}.{f}" for k in ("confusion", "reliability") for f in ("svg", "png", "csv")),
    "tag POST",
    *ADMIN_POSTS,
]


def _writes(project) -> tuple:
    return (
        FailureTag.objects.count(),
        SplitDraw.objects.filter(project=project).count(),
        Question.objects.filter(item__project=project).count(),
    )


def test_readers_get_every_view(client, world):
    # The admin goes last: its POSTs redraw the split and send items to humans.
    for role in (Role.APPROVER, Role.ADJUDICATOR, Role.ADMIN):
        found = _status_of_every_view(client, world, world.users[role])
        expected = dict.fromkeys(ALL, 200)
        expected["tag POST"] = 200 if role == Role.ADJUDICATOR else 403  # adjudicators tag
        for name in ADMIN_POSTS:  # admins recompute, draw the split, send to humans
            expected[name] = 302 if role == Role.ADMIN else 403
        assert found == expected, role


def test_raters_are_refused_every_view(client, world):
    before = _writes(world.project)
    assert _status_of_every_view(client, world, world.users[Role.RATER]) == dict.fromkeys(ALL, 403)
    assert _writes(world.project) == before


def test_outsiders_get_404_everywhere(client, world):
    before = _writes(world.project)
    assert _status_of_every_view(client, world, world.users["outsider"]) == dict.fromkeys(ALL, 404)
    assert _writes(world.project) == before


def test_a_rater_never_sees_judge_verdicts_or_figures(client, world):
    client.force_login(world.users[Role.RATER])
    for url in _get_urls(world).values():
        body = client.get(url).content.decode(errors="replace")
        assert "gpt-4o" not in body and "kappa" not in body.lower() and "Checked s" not in body
    listing = client.get(reverse("dashboards"))
    assert listing.status_code == 200
    assert world.project.name not in listing.content.decode()
    assert "you hold none of these roles" in listing.content.decode()


def test_dashboards_list_shows_decisions_to_readers_only(client, world):
    client.force_login(world.users[Role.APPROVER])
    listing = client.get(reverse("dashboards")).content.decode()
    assert "openai/gpt-4o" in listing and "anthropic/claude" in listing
    client.force_login(world.users["outsider"])
    assert world.project.name not in client.get(reverse("dashboards")).content.decode()
    client.logout()
    assert client.get(reverse("dashboards")).status_code == 302  # to the login page


def test_unknown_criterion_chart_judge_or_item_is_404(client, world):
    see_held_out(client, world.users[Role.ADMIN], world.project)
    slug = world.project.slug
    base = f"/p/{slug}/dashboard/charts"
    other_item = ItemFactory(project=ProjectFactory())
    for url in (
        reverse("dashboard_criterion", args=[slug, "ghost"]),
        f"{base}/confusion/ghost.svg?judge=openai/gpt-4o",
        f"{base}/histogram/faithful.svg?judge=openai/gpt-4o",
        f"{base}/confusion/faithful.pdf?judge=openai/gpt-4o",
        f"{base}/confusion/faithful.svg?judge=nobody/none",
        f"{base}/reliability/faithful.svg?judge=anthropic/claude",  # no confidences
        f"/p/{slug}/dashboard/report.html",
        reverse("dashboard_item", args=[slug, other_item.pk]),
        reverse("dashboard_item", args=[slug, 10**9]),
    ):
        assert client.get(url).status_code == 404, url
