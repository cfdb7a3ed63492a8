"""Every calibration-dashboard view: readers (admin, adjudicator, approver) get it, an outsider
404, a rater 403: raters never see judge verdicts or agreement figures. The POSTs have narrower
roles: tagging is for adjudicators; recompute, draw the split and send to humans for admins.

Outsiders hold every role in another project, so a 404 can only come from the membership
check. `small_project` (also used by the freshness and failure tests) imports a small project
through `file_import`: 40 items, a critical slice, one critical criterion, two judges (gpt-4o
with confidences, claude without) and two raters, with the split drawn.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.core.cache import cache
from django.urls import reverse

from judging.models import DashboardSnapshot, FailureTag, SplitDraw
from judging.selectors import led_by
from judging.services.dashboard import dashboard_refresh, latest_snapshot
from judging.services.failures import buckets_for
from judging.services.splits import split_draw
from reviews.models import Item, Question, Role, Slice
from reviews.services.imports import file_import
from tests.factories import ItemFactory, ProjectFactory, member
from tests.helpers import per_test_copy
from tests.judging.helpers import (
    criterion_record,
    human_record,
    item_record,
    verdict_record,
    write_jsonl,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_cache")]

GPT = {"provider": "openai", "model": "gpt-4o", "temperature": 0.2}
CLAUDE = {"provider": "anthropic", "model": "claude", "temperature": 0.0}
ITEMS = 40
GPT_WRONG = {0, 1, 4, 5, 8, 9, 12, 13}  # every other one is in the critical slice
CLAUDE_WRONG = {2, 3}
READERS = (Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER)


@pytest.fixture
def _fresh_cache():
    """The pending-recompute flags live in the (file) cache, which outlives a test's rollback."""
    cache.clear()
    yield
    cache.clear()


def small_records(n_items: int = ITEMS) -> list[dict]:
    records = [criterion_record(critical=True, text="Every claim is supported.")]
    for n in range(n_items):
        item_id = f"s{n:02d}"
        truth = "pass" if n % 2 == 0 else "fail"
        other = "fail" if truth == "pass" else "pass"
        records.append(item_record(item_id, slices=["safety"] if n % 4 in (0, 1) else []))
        records += [human_record(item_id, "ana", truth), human_record(item_id, "ben", truth)]
        records.append(
            verdict_record(
                item_id,
                other if n in GPT_WRONG else truth,
                judge=GPT,
                confidence=0.7,
                explanation=f"Checked {item_id}.",
            )
        )
        records.append(verdict_record(item_id, other if n in CLAUDE_WRONG else truth, judge=CLAUDE))
    # Criterion, items, then labels and verdicts: the importer writes consecutive items in one
    # batch (interleaved, it writes them one at a time, which only costs time here).
    first = {"criterion": 0, "item": 1}
    return sorted(records, key=lambda r: first.get(r["type"], 2))


def small_project(project, folder: Path, *, draw: bool = True, n_items: int = ITEMS):
    """Import the small calibration project (and draw its split) into `project`, and compute
    its figures as the import's and the draw's recompute would once committed (their on-commit
    signal never fires inside a test's transaction)."""
    path = write_jsonl(folder / "small.jsonl", small_records(n_items))
    file_import(actor=None, project=project, path=path, format="jsonl")
    Slice.objects.filter(project=project, name="safety").update(critical=True)
    if draw:
        split_draw(actor=None, project=project, seed=7)
    dashboard_refresh(project=project)
    return project


def see_held_out(client, user, project):
    """Sign in as `user` and press *Show held-out figures* (pages hide them until then)."""
    client.force_login(user)
    response = client.post(reverse("held_out_show", args=[project.slug]))
    assert response.status_code == 302


@dataclass
class World:
    project: object
    item: object
    users: dict  # role (or "outsider") -> user

    def disagreement(self) -> dict:
        """A held-out disagreement of the latest snapshot (computed if there is none)."""
        snapshot = latest_snapshot(self.project) or dashboard_refresh(project=self.project)
        payload = snapshot.payload
        return payload["criteria"][0]["disagreements"][0]


def _build_world(folder: Path) -> World:
    project = small_project(ProjectFactory(), folder)
    users = {role: member(project, role) for role in Role.values}
    users["outsider"] = member(ProjectFactory(), *Role.values)
    return World(project=project, item=Item.objects.filter(project=project).first(), users=users)


@pytest.fixture(scope="module")
def _world(module_db, tmp_path_factory):
    return module_db.build(_build_world, tmp_path_factory.mktemp("small-project"))


# The small project, imported once for the module (each test's writes roll back).
world = per_test_copy("_world")


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


def test_json_report_has_the_agreement_report_keys(client, world):
    see_held_out(client, world.users[Role.ADJUDICATOR], world.project)
    response = client.get(reverse("dashboard_report", args=[world.project.slug, "json"]))
    assert response["Content-Type"] == "application/json"
    assert f'filename="{world.project.slug}-agreement.json"' in response["Content-Disposition"]
    report = json.loads(response.content)
    assert {
        "project",
        "split",
        "computed_at",
        "results",
        "human_human",
        "gates",
        "decisions",
    } <= set(report)
    assert report["project"] == world.project.slug
    assert report["split"] == "held_out" and report["development_figures"] is False
    judges = {row["judge"] for row in report["results"]}
    assert judges == {"openai/gpt-4o", "anthropic/claude", "panel:majority"}
    for row in report["results"]:
        assert {
            "criterion",
            "judge",
            "n",
            "cohen_kappa",
            "observed_agreement",
            "gwet_ac1",
            "confusion_matrix",
            "gate",
        } <= set(row)
        assert set(row["cohen_kappa"]) >= {"value", "ci", "undefined_reason"}
        assert "kappa_svg" not in row  # the page's chart never leaks into the download
        assert row["criterion"] == "faithful"
    assert report["human_human"] and all(
        h["criterion"] == "faithful" for h in report["human_human"]
    )
    assert report["gates"]["faithful"]["min_n"] == 50
    assert {d["judge"] for d in report["decisions"]} == judges
    assert all(d["decision"] in ("GO", "HOLD") for d in report["decisions"])


def test_markdown_report_and_chart_downloads(client, world):
    see_held_out(client, world.users[Role.ADMIN], world.project)
    slug = world.project.slug
    markdown = client.get(reverse("dashboard_report", args=[slug, "md"]))
    assert markdown["Content-Type"].startswith("text/markdown")
    text = markdown.content.decode()
    assert "## faithful (version 1)" in text and "## Release decisions" in text
    assert "**panel:majority: HOLD**" in text  # 40 items: held-out n < 50

    def chart(kind, fmt, judge="openai/gpt-4o"):
        url = reverse(
            "dashboard_chart", kwargs={"slug": slug, "kind": kind, "name": "faithful", "fmt": fmt}
        )
        return client.get(url, {"judge": judge})

    svg = chart("confusion", "svg")
    assert svg["Content-Type"] == "image/svg+xml" and svg.content.startswith(b"<svg")
    assert b"<title>faithful: human vs openai/gpt-4o</title>" in svg.content
    # Drawn too, so the exported PNG says what it shows and for which judge.
    assert ">Confusion matrix · faithful v1 · openai/gpt-4o</text>" in svg.content.decode()
    assert b">Reliability of judge confidence" in chart("reliability", "svg").content
    assert chart("confusion", "png").content.startswith(b"\x89PNG\r\n\x1a\n")
    rows = chart("confusion", "csv").content.decode().splitlines()
    assert rows[0] == "human \\ judge,pass,fail"
    assert [r.split(",")[0] for r in rows[1:]] == ["pass", "fail"]
    reliability = chart("reliability", "csv").content.decode().splitlines()
    assert reliability[0] == "low,high,count,mean_confidence,accuracy"
    assert (
        'filename="' + f"{slug}-faithful-reliability-openai_gpt-4o.csv"
        in (chart("reliability", "csv")["Content-Disposition"])
    )


def test_criterion_page_shows_figures_slices_raters_and_reliability(client, world):
    see_held_out(client, world.users[Role.APPROVER], world.project)
    page = client.get(reverse("dashboard_criterion", args=[world.project.slug, "faithful"]))
    html = page.content.decode()
    assert "Confusion matrices" in html and "By slice" in html and "Rater quality" in html
    assert "Reliability of judge confidence" in html  # gpt-4o gave confidences
    assert "safety" in html and "critical" in html
    assert "ana" in html and "ben" in html


def test_item_page_shows_samples_and_tag_form_to_adjudicators_only(client, world):
    row = world.disagreement()
    item = Item.objects.get(project=world.project, external_id=row["item"])
    url = reverse("dashboard_item", args=[world.project.slug, item.pk])
    see_held_out(client, world.users[Role.ADJUDICATOR], world.project)
    html = client.get(url).content.decode()
    assert item.external_id in html and f"Checked {item.external_id}." in html
    assert "disagrees" in html and 'name="bucket"' in html
    see_held_out(client, world.users[Role.APPROVER], world.project)
    html = client.get(url).content.decode()
    assert "disagrees" in html and 'name="bucket"' not in html


def test_tag_post_saves_and_answers_with_the_form(client, world):
    row = world.disagreement()
    item = Item.objects.get(project=world.project, external_id=row["item"])
    bucket = buckets_for(world.project)[0]
    client.force_login(world.users[Role.ADJUDICATOR])
    response = client.post(
        reverse("dashboard_tag", args=[world.project.slug, item.pk]),
        {
            "criterion": "faithful",
            "judge": row["judge"],
            "bucket": bucket.pk,
            "note": "  vague rubric  ",
        },
    )
    assert response.status_code == 200 and b"Saved" in response.content
    tag = FailureTag.objects.get()
    assert (tag.item, tag.criterion, tag.judge, tag.bucket, tag.note) == (
        item,
        "faithful",
        row["judge"],
        bucket,
        "vague rubric",
    )
    assert tag.tagged_by == world.users[Role.ADJUDICATOR]


def test_recompute_post_queues_a_new_snapshot(client, world):
    client.force_login(world.users[Role.ADMIN])
    before = DashboardSnapshot.objects.count()
    response = client.post(reverse("dashboard_recompute", args=[world.project.slug]))
    assert response.status_code == 302
    assert response["Location"] == reverse("project_dashboard", args=[world.project.slug])
    assert DashboardSnapshot.objects.count() == before + 1  # immediate backend: already done
    assert client.get(reverse("dashboard_recompute", args=[world.project.slug])).status_code == 405


def _hostile_project(project, folder, criterion: str, judge: dict):
    records = [criterion_record(name=criterion, text="<script>alert(1)</script>")]
    for n in range(6):
        records += [
            item_record(f"h{n}"),
            human_record(f"h{n}", "<i>ana</i>", "pass", criterion=criterion),
            verdict_record(
                f"h{n}",
                "pass" if n % 2 else "fail",
                criterion=criterion,
                judge=judge,
                explanation="<img src=x onerror=alert(1)>",
            ),
        ]
    file_import(
        actor=None, project=project, path=write_jsonl(folder / "h.jsonl", records), format="jsonl"
    )
    dashboard_refresh(project=project)


def test_names_from_imported_files_are_escaped_and_never_break_a_header(client, project, tmp_path):
    judge = {"provider": 'evil"co\r\nX-Injected: 1', "model": "<b>m"}
    _hostile_project(project, tmp_path, "<b>bold", judge)
    client.force_login(member(project, Role.ADMIN, Role.ADJUDICATOR))
    slug = project.slug
    for url in (
        reverse("project_dashboard", args=[slug]),
        reverse("dashboard_criterion", args=[slug, "<b>bold"]),
        reverse("dashboard_disagreements", args=[slug]),
        reverse("dashboard_failures", args=[slug]),
    ):
        body = client.get(url).content.decode()
        assert "<b>" not in body and "<script>alert" not in body and "<i>ana" not in body, url
        assert "&lt;b&gt;bold" in body, url
    name = f"{judge['provider']}/{judge['model']}"
    response = client.get(
        reverse(
            "dashboard_chart",
            kwargs={"slug": slug, "kind": "confusion", "name": "<b>bold", "fmt": "csv"},
        ),
        {"judge": name},
    )
    assert response.status_code == 200
    assert response["Content-Disposition"] == (
        f'attachment; filename="{slug}-_b_bold-confusion-evil_co_X-Injected_1_b_m.csv"'
    )
    assert "X-Injected" not in response.headers


def test_a_criterion_name_with_a_slash_does_not_break_the_dashboard(client, project, tmp_path):
    _hostile_project(project, tmp_path, "faithful/strict", GPT)
    client.force_login(member(project, Role.ADMIN))
    assert client.get(reverse("project_dashboard", args=[project.slug])).status_code == 200


def test_disagreements_from_a_hold_are_led_by_the_failing_criterion(client, world):
    rows = [
        {"criterion": c, "n": n} for n, c in enumerate(["clarity", "faithful", "tone", "faithful"])
    ]
    led = [(r["criterion"], r["n"]) for r in led_by(rows, ["faithful"])]
    assert led == [("faithful", 1), ("faithful", 3), ("clarity", 0), ("tone", 2)]
    see_held_out(client, world.users[Role.ADJUDICATOR], world.project)
    dashboard = client.get(reverse("project_dashboard", args=[world.project.slug])).content
    assert b"&amp;lead=faithful" in dashboard
    url = reverse("dashboard_disagreements", args=[world.project.slug])
    page = client.get(url, {"lead": "faithful"}).content.decode()
    assert "Led by the criteria that hold the release: <strong>faithful</strong>" in page
