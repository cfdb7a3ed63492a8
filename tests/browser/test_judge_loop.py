"""The calibration loop on screen: edit the prompt (a new version and its SHA-256), run it on
calibration with the progress bar, read its kappa beside the previous version's, run it on
held-out (confirmed), and see which version the dashboard's gate is for."""

import threading

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from judging.models import JudgeVersion, Run
from judging.services.judges.configs import JudgeSettings, judge_config_save
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from judging.stub_model import make_server
from reviews.models import Project

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def stub_url(settings):
    server = make_server()
    settings.JUDGE_ALLOWED_HOSTS = [f"127.0.0.1:{server.server_address[1]}"]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_edit_run_compare_gate(page, live_server, login, screenshot, stub_url):
    call_command("load_demo")
    project = Project.objects.get(slug="judge-demo")
    settings = JudgeSettings(
        provider="openai-compatible",
        model="stub",
        prompt="Is the description faithful? Answer with one of {{ labels }}.",
        criterion="faithful",
        base_url=stub_url,
    )
    config = judge_config_save(project=project, name="faithful-stub", settings=settings).config
    run_execute(run_create(config=config, split="calibration"))

    page.set_viewport_size({"width": 1280, "height": 800})
    login("alex", "alex-demo-2026")
    page.goto(f"{live_server.url}/p/judge-demo/dashboard/")
    page.get_by_role("link", name="Judges").click()
    page.get_by_role("link", name="faithful-stub").click()
    expect(page.get_by_role("heading", name="Judge faithful-stub")).to_be_visible()

    page.get_by_label("Prompt").fill("Be strict. Is the description faithful? {{ labels }}")
    page.get_by_role("button", name="Save new version").click()
    v2 = JudgeVersion.objects.get(config=config, number=2)
    expect(page.get_by_text(f"Saved v2 (prompt SHA-256 {v2.prompt_sha256})")).to_be_visible()
    expect(page.locator("tr[data-version='2'] code.sha")).to_have_text(v2.prompt_sha256)

    page.get_by_role("button", name="Run on calibration").click()
    run = Run.objects.filter(version=v2).get()
    card = page.locator(f"#run-{run.pk}")
    expect(card.locator("progress")).to_be_visible()
    expect(card.locator(".run-status")).to_have_text("done")
    expect(card.locator(".run-counts")).to_contain_text(f"{run.planned} of {run.planned} calls")
    kappas = [page.locator(f"tr[data-version='{n}'] td.kappa").inner_text() for n in (1, 2)]
    assert all(k.strip() for k in kappas)  # both versions' calibration kappa, side by side
    screenshot("judge-versions")

    held_out = page.locator("#run-held-out")
    held_out.get_by_label("I understand").check()
    held_out.get_by_role("button", name="Run latest version on held-out").click()
    expect(page.locator("tr[data-version='2']")).to_contain_text("frozen: ran on held-out")
    page.get_by_role("link", name="Dashboard", exact=True).click()
    looks = page.locator("#held-out-looks")
    expect(looks).to_contain_text("1 version ran on held-out")
    expect(looks).to_contain_text("is for v2")
    page.get_by_role("button", name="Recompute").click()  # a job: its page, then back
    expect(page.locator("#job-progress")).to_contain_text("Figures recomputed")
    page.get_by_role("link", name="Back").click()
    page.get_by_role("button", name="Show held-out figures").click()
    expect(
        page.locator(".decision", has_text="openai-compatible/stub").locator(".gate")
    ).to_be_visible()
    screenshot("judge-gate")
