"""The judge page: new versions with their SHA, runs queued as tasks, held-out confirmation."""

import pytest
from django.urls import reverse

from judging.models import JudgeVersion, Run, RunStatus
from judging.stub_model import answer
from reviews.models import Role
from tests.factories import member
from tests.judging.run_helpers import PROMPT, labelled_project
from tests.judging.wire_server import Say, WireServer


@pytest.fixture
def server():
    with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]))) as srv:
        yield srv


@pytest.fixture
def admin(project, tmp_path, client):
    labelled_project(project, tmp_path, n=12)
    user = member(project, Role.ADMIN)
    client.force_login(user)
    return user


def save(client, project, server, prompt=PROMPT, **fields):
    data = {
        "name": "j",
        "provider": "openai-compatible",
        "model": "stub",
        "base_url": server.url,
        "temperature": 0,
        "samples": 1,
        "criterion": "faithful",
        "prompt": prompt,
    } | fields
    return client.post(reverse("judge_save", args=[project.slug]), data, follow=True)


def test_edit_run_compare_and_look_at_held_out(client, project, admin, server):
    page = save(client, project, server)
    assert b"Saved v1" in page.content
    page = save(client, project, server, prompt=PROMPT + " Think.")
    v2 = JudgeVersion.objects.get(number=2)
    assert f"Saved v2 (prompt SHA-256 {v2.prompt_sha256})".encode() in page.content
    url = reverse("run_start", args=[project.slug, "j"])
    client.post(url, {"split": "calibration", "concurrency": 2})
    run = Run.objects.get()
    assert (run.status, run.version) == (RunStatus.DONE, v2)
    page = client.get(reverse("judge_page", args=[project.slug, "j"]))
    assert page.context["rows"][0].kappa.value == 1.0  # the stub agrees with the humans here
    assert page.context["rows"][1].kappa.value is None  # v1 never ran
    page = client.post(url, {"split": "held_out", "concurrency": 2}, follow=True)
    assert b"needs an explicit confirmation" in page.content and Run.objects.count() == 1
    client.post(url, {"split": "held_out", "concurrency": 2, "confirm_held_out": "on"})
    assert Run.objects.filter(split="held_out", confirmed_held_out=True).count() == 1
    dashboard = client.get(reverse("project_dashboard", args=[project.slug]))
    (look,) = dashboard.context["held_out_looks"]
    assert (look.versions, look.gate_version) == (1, v2)
    assert b"is for <strong>v2</strong>" in dashboard.content


def test_bad_prompt_is_refused_naming_it(client, project, admin, server):
    page = save(client, project, server, prompt="{{ nonsense }}")
    assert b"unknown placeholder" in page.content and not JudgeVersion.objects.exists()


def test_run_progress_partial_and_cancel(client, project, admin, server):
    save(client, project, server)
    client.post(
        reverse("run_start", args=[project.slug, "j"]), {"split": "calibration", "concurrency": 1}
    )
    run = Run.objects.get()
    status = reverse("run_status", args=[project.slug, run.pk])
    partial = client.get(status, headers={"HX-Request": "true"})
    assert b"<progress" in partial.content and b"<html" not in partial.content
    opened = client.get(status)  # as a page: the run's card on its judge's page
    assert opened.url == reverse("judge_page", args=[project.slug, "j"]) + f"#run-{run.pk}"
    assert f"{run.planned} of {run.planned} calls".encode() in partial.content


def test_raters_and_outsiders_cannot_reach_judges(client, project, tmp_path):
    client.force_login(member(project, Role.RATER))
    assert client.get(reverse("judge_list", args=[project.slug])).status_code == 403
