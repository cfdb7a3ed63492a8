"""What the calibration dashboard's pages and downloads show its readers: the agreement
report (JSON, Markdown), chart downloads, the criterion and item pages, tagging a failure,
recompute, and disagreements led by the criterion that holds the release. `world` is the small
calibration project (tests/judging/conftest.py).
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from judging.models import DashboardSnapshot, FailureTag
from judging.selectors import led_by
from judging.services.calibration.failures import buckets_for
from judging.services.dashboard import dashboard_refresh
from reviews.models import Item, Job, Role
from tests.judging.helpers import JUDGE, import_items, item_record, see_held_out, write_jsonl

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_cache")]


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
    assert 'table class="figures per-label"' in html and "macro · micro · weighted F1" in html


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


def test_recompute_post_answers_with_its_job_which_makes_a_new_snapshot(
    client, world, django_capture_on_commit_callbacks
):
    client.force_login(world.users[Role.ADMIN])
    before = DashboardSnapshot.objects.count()
    with django_capture_on_commit_callbacks(execute=True):  # immediate backend: run at commit
        response = client.post(reverse("dashboard_recompute", args=[world.project.slug]))
    job = Job.objects.get(project=world.project)
    assert response["Location"] == reverse("job", args=[world.project.slug, job.pk])
    assert DashboardSnapshot.objects.count() == before + 1
    page = client.get(response["Location"]).content.decode()
    assert "Recompute the dashboard" in page and "Figures recomputed" in page
    assert reverse("project_dashboard", args=[world.project.slug]) in page  # Back
    assert client.get(reverse("dashboard_recompute", args=[world.project.slug])).status_code == 405


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


def test_criterion_page_shows_the_length_bias_check(client, world):
    see_held_out(client, world.users[Role.APPROVER], world.project)
    page = client.get(reverse("dashboard_criterion", args=[world.project.slug, "faithful"]))
    html = page.content.decode()
    assert "Judge bias checks" in html
    # Every output here is "out": the slope is undefined and says why, with no chart to show.
    assert "slope undefined: every output has the same length (n = 20)" in html
    assert "<svg" not in html[html.index("bias-heading") : html.index("per-label-heading")]


def test_criterion_page_charts_the_first_position_win_rate_of_pairwise_judges(
    client, world, tmp_path
):
    records = [
        {"type": "criterion", "name": "preference", "labels": ["A", "B", "tie"], "version": "1"}
    ]
    for k in range(8):  # the answer shown first wins every time
        order = ["A", "B"] if k % 2 else ["B", "A"]
        records.append(item_record(f"pair-{k}"))
        records.append(
            {"type": "pairwise_verdict", "item_id": f"pair-{k}", "criterion": "preference",
             "answer_a": "one", "answer_b": "two", "display_order": order,
             "winner": order[0], "judge": JUDGE}
        )  # fmt: skip
    import_items(world.project, write_jsonl(tmp_path / "pairs.jsonl", records))
    dashboard_refresh(project=world.project)
    see_held_out(client, world.users[Role.APPROVER], world.project)
    page = client.get(reverse("dashboard_criterion", args=[world.project.slug, "preference"]))
    html = page.content.decode()
    assert "Judge bias checks" in html and "First-position win rate" in html
    assert "first-position win rate with 95% CI</title><desc>1.000, 95% CI" in html
