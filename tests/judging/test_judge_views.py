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


def test_a_refused_save_keeps_everything_typed_and_says_which_hosts_are_allowed(
    client, project, admin, server, settings
):
    typed = {
        "name": "local-vision",
        "model": "qwen2-vl",
        "base_url": "http://127.0.0.1:11434/v1",  # Ollama's port: not allowed here
        "api_key_env": "OPENAI_API_KEY",
        "temperature": "0.3",
        "samples": "3",
        "evidence": "pages",
        "max_pages": "5",
        "timeout_seconds": "45",
        "max_retries": "2",
        "concurrency": "3",
        "prompt": "A long prompt the user wrote with care. {{ labels }}",
    }
    page = save(client, project, server, **typed)
    assert page.status_code == 400 and not JudgeVersion.objects.exists()
    form = page.context["form"]
    assert all(str(form[name].value()) == value for name, value in typed.items())
    html = page.content.decode()
    assert "port 11434 is not allowed on this server" in html
    allowed = ", ".join(
        ["127.0.0.1:8001", "api.anthropic.com:443", "api.openai.com:443"]
        + settings.JUDGE_ALLOWED_HOSTS
    )
    assert f"This server allows {allowed}." in html
    assert "JUDGE_ALLOWED_HOSTS=127.0.0.1:11434</code> in <code>.env</code>" in html

    settings.JUDGE_ALLOWED_HOSTS = ["127.0.0.1:11434"]
    page = save(client, project, server, **typed)
    version = JudgeVersion.objects.get()
    assert (version.evidence, version.max_pages, version.timeout_seconds) == ("pages", 5, 45)
    again = save(client, project, server, **typed | {"model": "", "prompt": "changed"})
    assert again.status_code == 400 and again.context["form"]["prompt"].value() == "changed"
    assert b"Edit (saves a new version)" in again.content  # the judge's own page, not the list


def test_a_panel_with_a_typod_member_keeps_what_was_typed(client, project, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", "r@example.org", "pw"))
    data = {
        "project": project.pk, "name": "my-panel", "rule": "unanimous", "send_dissent": "on",
        "members-TOTAL_FORMS": 1, "members-INITIAL_FORMS": 0, "members-0-version": "98765",
    }  # fmt: skip
    response = client.post(reverse("admin:judging_panel_add"), data)
    html = response.content.decode()
    assert response.status_code == 200 and "Select a valid choice" in html
    assert 'value="98765"' in html and 'value="my-panel"' in html
    assert '<option value="unanimous" selected>' in html
