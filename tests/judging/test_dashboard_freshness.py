"""Dashboard freshness: snapshots are computed once per change of inputs (queued by the write
that changed them, or the admin's Recompute; never by a GET), stale figures say so, held-out
reads leave a trace, and development figures are labelled as such."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import TestCase
from django.urls import reverse
from django.utils import timezone

from judging.models import (
    Criterion,
    DashboardSnapshot,
    GateSetting,
    HeldOutAccess,
    ItemSplit,
)
from judging.services.calibration.splits import split_draw
from judging.services.dashboard import inputs_fingerprint, latest_snapshot
from judging.services.dashboard_recompute import recompute_request
from reviews.models import Job, Role
from reviews.services.imports.pipeline import file_import
from reviews.signals import project_data_changed
from tests.factories import member
from tests.judging.helpers import (
    human_record,
    item_record,
    see_held_out,
    small_project,
    verdict_record,
    write_jsonl,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_cache")]

STALE = "Labels changed since: these figures are out of date."


@pytest.fixture
def admin(project):
    return member(project, Role.ADMIN)


def dashboard(client, project):
    response = client.get(reverse("project_dashboard", args=[project.slug]))
    assert response.status_code == 200
    return response.content.decode()


def snapshots(project) -> int:
    return DashboardSnapshot.objects.filter(project=project).count()


def import_records(project, folder, records, name="more.jsonl"):
    file_import(
        actor=None, project=project, path=write_jsonl(folder / name, records), format="jsonl"
    )


def recompute(client, project):
    """The admin's Recompute button: a job, which the immediate backend runs once the post's
    transaction commits (here: once its on-commit callbacks run)."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        response = client.post(reverse("dashboard_recompute", args=[project.slug]))
    job = Job.objects.filter(project=project).first()
    assert response.url == reverse("job", args=[project.slug, job.pk])
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and job.result.startswith("Figures recomputed")


def test_views_read_the_snapshot_and_never_compute(client, project, admin, tmp_path):
    small_project(project, tmp_path)  # computed, as the import's signal would
    see_held_out(client, admin, project)
    snapshot = latest_snapshot(project)
    assert snapshot.fingerprint == inputs_fingerprint(project)
    html = dashboard(client, project)
    assert STALE not in html and "Figures computed" in html
    assert "openai/gpt-4o" in html
    client.get(reverse("dashboard_criterion", args=[project.slug, "faithful"]))
    client.get(reverse("dashboard_disagreements", args=[project.slug]))
    assert snapshots(project) == 1  # unchanged inputs: nothing computed again


def raters(snapshot) -> set[str]:
    return {r["rater"] for r in snapshot.payload["criteria"][0]["rater_quality"]}


def test_a_new_human_label_makes_the_figures_stale_and_they_are_recomputed(
    client, project, admin, tmp_path
):
    small_project(project, tmp_path)
    see_held_out(client, admin, project)
    old = latest_snapshot(project)
    held_out = ItemSplit.objects.filter(item__project=project, split="held_out").first().item
    import_records(project, tmp_path, [human_record(held_out.external_id, "cy", "fail")])
    assert inputs_fingerprint(project) != old.fingerprint
    html = dashboard(client, project)
    assert STALE in html and "<em>Recompute</em> on the dashboard" in html
    assert snapshots(project) == 1  # a GET queues nothing
    recompute(client, project)
    html = dashboard(client, project)
    assert snapshots(project) == 2
    new = latest_snapshot(project)
    assert new.pk != old.pk and new.fingerprint == inputs_fingerprint(project)
    assert STALE not in html
    assert "cy" not in raters(old) and "cy" in raters(new)


def test_an_item_imported_after_the_draw_joins_the_split_and_counts(
    client, project, admin, tmp_path
):
    small_project(project, tmp_path)
    see_held_out(client, admin, project)
    dashboard(client, project)
    old = latest_snapshot(project).payload["criteria"][0]

    def judged(entry):
        return sum(
            r["n_judged"]
            for r in entry["rows"] + entry["calibration_rows"]
            if r["judge"] == "openai/gpt-4o"
        )

    import_records(
        project,
        tmp_path,
        [
            item_record("late-1"),
            human_record("late-1", "ana", "pass"),
            verdict_record("late-1", "pass"),
        ],
    )
    recompute(client, project)
    assert ItemSplit.objects.get(item__external_id="late-1", item__project=project).late
    assert judged(latest_snapshot(project).payload["criteria"][0]) == judged(old) + 1
    assert latest_snapshot(project).fingerprint == inputs_fingerprint(project)
    dashboard(client, project)
    assert snapshots(project) == 2


def test_while_a_recompute_is_queued_the_page_says_the_figures_are_out_of_date(
    client, project, admin, tmp_path
):
    small_project(project, tmp_path)
    see_held_out(client, admin, project)
    dashboard(client, project)
    import_records(
        project,
        tmp_path,
        [
            item_record("late-1"),
            human_record("late-1", "ana", "pass"),
            verdict_record("late-1", "pass"),
        ],
    )
    job, queued = recompute_request(project=project)  # no worker has picked it up yet
    assert queued and recompute_request(project=project) == (job, False)
    html = dashboard(client, project)
    assert STALE in html and "A recompute is waiting for the task worker" in html
    assert reverse("job", args=[project.slug, job.pk]) in html  # the admin can follow it
    assert snapshots(project) == 1
    for page in ("dashboard_criterion", "dashboard_disagreements", "dashboard_failures"):
        args = [project.slug, "faithful"] if page == "dashboard_criterion" else [project.slug]
        assert STALE in client.get(reverse(page, args=args)).content.decode(), page
    Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING)
    assert "Recomputing in the background" in dashboard(client, project)
    # The worker died (no heartbeat since it started): Recompute queues another.
    long_ago = timezone.now() - timedelta(hours=1)
    Job.objects.filter(pk=job.pk).update(started_at=long_ago, created_at=long_ago)
    assert "<em>Recompute</em> on the dashboard" in dashboard(client, project)
    recompute(client, project)
    assert STALE not in dashboard(client, project)
    # The new job, and the dead one, which the worker running it resumed first.
    assert snapshots(project) == 3
    assert set(Job.objects.values_list("status", flat=True)) == {Job.Status.SUCCEEDED}


def test_gate_settings_and_critical_flags_are_inputs(client, project, admin, tmp_path):
    small_project(project, tmp_path)
    see_held_out(client, admin, project)
    setting = GateSetting.objects.create(project=project, criterion="faithful", min_n=5)
    assert STALE in dashboard(client, project)
    recompute(client, project)
    html = dashboard(client, project)
    assert snapshots(project) == 2 and "n ≥ 5" in html
    GateSetting.objects.filter(pk=setting.pk).update(max_ci_width=0.9)  # only the warning width
    assert STALE in dashboard(client, project)
    recompute(client, project)
    assert snapshots(project) == 3
    assert latest_snapshot(project).payload["criteria"][0]["gate"]["max_ci_width"] == 0.9
    Criterion.objects.filter(project=project).update(critical=False)  # edited in the admin
    recompute(client, project)
    html = dashboard(client, project)
    assert snapshots(project) == 4 and 'badge-warn">critical' not in html
    assert latest_snapshot(project).payload["criteria"][0]["critical"] is False
    dashboard(client, project)
    assert snapshots(project) == 4


def test_an_import_recomputes_through_the_signal(
    project, tmp_path, django_capture_on_commit_callbacks
):
    small_project(project, tmp_path)
    with django_capture_on_commit_callbacks(execute=True):
        import_records(project, tmp_path, [human_record("s01", "cy", "fail")])
    assert snapshots(project) == 2  # computed by the task the import's signal queued
    assert latest_snapshot(project).fingerprint == inputs_fingerprint(project)


def test_new_labels_queue_one_recompute_and_only_for_a_judged_project(
    project, tmp_path, django_assert_num_queries
):
    """The receiver of every settled question: one statement while a recompute is waiting."""
    from reviews.models import Item

    def changed():
        project_data_changed.send(Item, project=project)

    def queued() -> int:
        return Job.objects.filter(project=project, status=Job.Status.QUEUED).count()

    with django_assert_num_queries(1):
        changed()  # no criteria yet: nothing to recompute
    assert queued() == 0
    Criterion.objects.create(project=project, name="faithful", labels=["pass", "fail"])
    changed()
    assert queued() == 1
    with django_assert_num_queries(1):
        changed()  # one is waiting for a worker: it will read these labels too
    assert queued() == 1


def test_drawing_the_split_recomputes_through_the_signal(
    project, tmp_path, django_capture_on_commit_callbacks
):
    small_project(project, tmp_path, draw=False)
    with django_capture_on_commit_callbacks(execute=True):
        split_draw(actor=None, project=project, seed=7)
    assert snapshots(project) == 2
    assert latest_snapshot(project).payload["split"] == "held_out"


def test_held_out_figures_show_only_on_request_and_that_is_logged(client, project, admin, tmp_path):
    small_project(project, tmp_path)
    client.force_login(admin)  # not shown yet
    html = dashboard(client, project)
    assert "Show held-out figures" in html and 'name="what" value="dashboard"' in html
    assert "openai/gpt-4o" not in html
    report = reverse("dashboard_report", args=[project.slug, "json"])
    assert "Show held-out figures" in client.get(report).content.decode()
    item = ItemSplit.objects.filter(item__project=project, split="held_out").first().item
    page = client.get(reverse("dashboard_item", args=[project.slug, item.pk])).content.decode()
    assert "Show held-out figures" in page
    assert not HeldOutAccess.objects.exists()  # looking at the pages wrote nothing

    show = reverse("held_out_show", args=[project.slug])
    response = client.post(show, {"what": "report download (json)", "next": report})
    assert response.status_code == 302 and response.url == report
    assert client.get(report).json()["split"] == "held_out"
    assert "openai/gpt-4o" in dashboard(client, project)
    logged = list(HeldOutAccess.objects.filter(project=project).order_by("pk"))
    assert [(a.user, a.what) for a in logged] == [(admin, "report download (json)")]
    elsewhere = client.post(show, {"next": "https://evil.example/"})
    assert elsewhere.url == reverse("project_dashboard", args=[project.slug])


@pytest.mark.parametrize(
    "target", ["project_list", "admin:index", "99999", "x" * 2000, "%s", "//evil.example/", "."]
)
def test_a_next_that_is_no_path_of_this_site_goes_to_the_dashboard(client, project, admin, target):
    """`next` is a path (/...), never a URL name Django would reverse (a 500 for most words)."""
    client.force_login(admin)
    response = client.post(reverse("held_out_show", args=[project.slug]), {"next": target})
    assert response.status_code == 302
    assert response.url == reverse("project_dashboard", args=[project.slug])


def test_calibration_figures_are_labelled_as_development_figures(client, project, admin, tmp_path):
    small_project(project, tmp_path)
    see_held_out(client, admin, project)
    html = dashboard(client, project)
    assert "held-out figures: the ones that count" in html
    assert "Calibration (development)" in html
    assert "never for release decisions" in html
    assert "No held-out split has been drawn" not in html
    calibration = latest_snapshot(project).payload["criteria"][0]["calibration_rows"]
    assert calibration and all(row["n"] > 0 for row in calibration)


def test_without_a_split_every_figure_is_a_development_figure(client, project, admin, tmp_path):
    small_project(project, tmp_path, draw=False)
    client.force_login(admin)  # nothing is held out: nothing to show
    html = dashboard(client, project)
    assert "No held-out split has been drawn" in html
    assert "every figure below is a <strong>development figure</strong>" in html
    assert "development figures (all items" in html
    payload = latest_snapshot(project).payload
    assert payload["split"] == "all" and payload["criteria"][0]["calibration_rows"] == []
    assert payload["criteria"][0]["rows"][0]["n"] == 40
    criterion = client.get(reverse("dashboard_criterion", args=[project.slug, "faithful"]))
    assert "whole project (development figures)" in criterion.content.decode()
    report = client.get(reverse("dashboard_report", args=[project.slug, "json"])).json()
    assert report["development_figures"] is True
    assert not HeldOutAccess.objects.filter(project=project).exists()  # nothing is held out
