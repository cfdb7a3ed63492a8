"""Judging's lines in the project audit log: splits, judges and their versions, runs, prices.
Each written by its service (through reviews' `project_event_record`), whoever calls it."""

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging.models import GateSetting, Run
from judging.services.calibration.panels import panel_configure
from judging.services.judges.configs import JudgeSettings, judge_config_save
from judging.services.runs.control import run_cancel, run_create, run_resume
from reviews.models import ProjectAction, ProjectEvent, Role
from tests.factories import UserFactory, member
from tests.judging.run_helpers import PROMPT, judge, labelled_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def labelled(project, tmp_path):
    return labelled_project(project, tmp_path, n=4)


def _lines(project, *actions):
    lines = ProjectEvent.objects.filter(project=project).order_by("id")
    return list(lines.filter(action__in=actions) if actions else lines)


def test_a_split_drawn_from_the_dashboard_and_the_command(
    client, project, django_capture_on_commit_callbacks
):
    call_command("split_draw", "--project", project.slug, "--seed", "9", stdout=StringIO())
    (console,) = _lines(project, ProjectAction.SPLIT_DRAWN)
    assert (console.actor, console.after) == (None, {"seed": 9, "held_out_fraction": 0.5})
    client.force_login(member(project, Role.ADMIN, username="alex"))
    with django_capture_on_commit_callbacks(execute=True):  # the job runs
        client.post(reverse("dashboard_split", args=[project.slug]), {"seed": 7})
    lines = _lines(project, ProjectAction.SPLIT_DRAWN)
    assert [(x.actor_name, x.target) for x in lines] == [("", "seed 9"), ("alex", "seed 7")]


def _settings(url: str, prompt: str = PROMPT) -> JudgeSettings:
    return JudgeSettings(
        provider="openai-compatible", model="stub", prompt=prompt, criterion="faithful",
        base_url=url, api_key_env="STUB_KEY",
    )  # fmt: skip


A, B = "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"


def test_a_judge_created_and_versioned_an_endpoint_change_is_a_new_version(labelled, settings):
    settings.JUDGE_ALLOWED_HOSTS = ["127.0.0.1:9", "127.0.0.1:10"]
    alex = member(labelled, Role.ADMIN, username="alex")
    actions = (
        ProjectAction.JUDGE_CREATED,
        ProjectAction.JUDGE_EDITED,
        ProjectAction.JUDGE_VERSION_ADDED,
    )
    judge_config_save(project=labelled, name="j", settings=_settings(A), actor=alex)
    judge_config_save(project=labelled, name="j", settings=_settings(A), actor=alex)
    judge_config_save(project=labelled, name="j", settings=_settings(B), actor=alex)
    judge_config_save(project=labelled, name="j", settings=_settings(B, "Again {{ output }}"))
    lines = _lines(labelled, *actions)
    assert [(x.action, x.actor_name, x.target) for x in lines] == [
        (ProjectAction.JUDGE_CREATED, "alex", "j"),
        (ProjectAction.JUDGE_VERSION_ADDED, "alex", "j v1"),
        (ProjectAction.JUDGE_VERSION_ADDED, "alex", "j v2"),
        (ProjectAction.JUDGE_VERSION_ADDED, "", "j v3"),
    ]
    _created, v1, v2, _ = lines
    assert (v1.after["base_url"], v2.after["base_url"]) == (A, B)
    assert v1.after["api_key_env"] == "STUB_KEY" and v1.after["evidence"] == "none"
    assert v1.after["model"] == "stub" and v1.after["criterion"] == "faithful"


def test_runs_started_cancelled_and_resumed(client, labelled):
    config = judge(labelled, "http://127.0.0.1:9/v1").config
    alex = member(labelled, Role.ADMIN, username="alex")
    run = run_create(config=config, split="all", confirm_held_out=True, actor=alex)
    client.force_login(alex)
    client.post(reverse("run_stop", args=[labelled.slug, run.pk]))
    assert not run_cancel(Run.objects.get(pk=run.pk))  # already cancelled: no second line
    run_resume(Run.objects.get(pk=run.pk))  # the worker, after a restart
    lines = _lines(
        labelled,
        ProjectAction.RUN_STARTED,
        ProjectAction.RUN_CANCELLED,
        ProjectAction.RUN_RESUMED,
    )
    assert [(x.action, x.actor_name, x.after["status"]) for x in lines] == [
        (ProjectAction.RUN_STARTED, "alex", "queued"),
        (ProjectAction.RUN_CANCELLED, "alex", "queued"),
        (ProjectAction.RUN_RESUMED, "", "queued"),
    ]
    assert lines[0].target == f"run {run.pk} · j v1"


def test_a_price_is_a_site_wide_line_every_projects_audit_shows(client, labelled):
    call_command(
        "model_price", "--provider", "openai", "--model", "gpt-x",
        "--input-usd-per-mtok", "2.5", "--output-usd-per-mtok", "10", stdout=StringIO(),
    )  # fmt: skip
    line = ProjectEvent.objects.get(action=ProjectAction.PRICE_ADDED)
    assert (line.project, line.target) == (None, "openai/gpt-x")
    assert (line.after["input_per_million"], line.after["output_per_million"]) == ("2.5", "10")
    client.force_login(member(labelled, Role.ADMIN))
    page = client.get(reverse("project_audit", args=[labelled.slug]))
    assert [row.action for row in page.context["page"].rows][0] == ProjectAction.PRICE_ADDED


def _root():
    return UserFactory(username="root", is_staff=True, is_superuser=True)


def test_a_panel_made_by_the_service_and_changed_in_the_admin(client, project, tmp_path, settings):
    settings.JUDGE_ALLOWED_HOSTS = ["127.0.0.1:9"]
    labelled_project(project, tmp_path, n=2)
    judge(project, "http://127.0.0.1:9/v1", name="m1", model="m1")
    panel = panel_configure(project=project, name="p", rule="majority", members=["m1@1"])
    (made,) = _lines(project, ProjectAction.PANEL_CONFIGURED)
    assert (made.actor, made.target, made.before) == (None, "p", {})
    assert made.after == {"rule": "majority", "send_dissent": False, "members": ["m1@1"]}
    panel_configure(project=project, name="p", rule="majority", members=["m1@1"])  # no change
    assert len(_lines(project, ProjectAction.PANEL_CONFIGURED)) == 1
    client.force_login(_root())
    data = {
        "project": project.pk, "name": "p", "rule": "unanimous",
        "members-TOTAL_FORMS": 1, "members-INITIAL_FORMS": 1,
        "members-0-id": panel.members.get().pk, "members-0-panel": panel.pk,
    }  # fmt: skip
    response = client.post(reverse("admin:judging_panel_change", args=[panel.pk]), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    changed = _lines(project, ProjectAction.PANEL_CONFIGURED)[-1]
    assert (changed.actor_name, changed.before, changed.after) == (
        "root",
        {"rule": "majority"},
        {"rule": "unanimous"},
    )


def test_a_gate_set_changed_and_removed_in_the_admin(client, project):
    client.force_login(_root())
    fields = {"project": project.pk, "criterion": "faithful", "min_n": 50, "max_ci_width": 0.3}
    client.post(reverse("admin:judging_gatesetting_add"), {**fields, "min_lower": 0.6})
    gate = GateSetting.objects.get()
    change = reverse("admin:judging_gatesetting_change", args=[gate.pk])
    client.post(change, {**fields, "min_lower": 0.7})
    client.post(change, {**fields, "min_lower": 0.7})  # saved unchanged: no line
    delete = reverse("admin:judging_gatesetting_delete", args=[gate.pk])
    client.post(delete, {"post": "yes"})
    assert not GateSetting.objects.exists()
    lines = _lines(project, ProjectAction.GATE_CHANGED)
    assert [(x.actor_name, x.target, x.before, x.after) for x in lines] == [
        ("root", "faithful", {}, {"min_lower": 0.6, "min_n": 50, "max_ci_width": 0.3}),
        ("root", "faithful", {"min_lower": 0.6}, {"min_lower": 0.7}),
        ("root", "faithful", {"min_lower": 0.7, "min_n": 50, "max_ci_width": 0.3}, {}),
    ]
