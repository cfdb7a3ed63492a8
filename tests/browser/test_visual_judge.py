"""A visual judge configured from the form, run from its page, and compared with the text-only
judge on the same items: the compare page shows the two rows side by side, each saying what it
saw."""

import threading

import pytest
from playwright.sync_api import expect

from judging.models import Call, JudgeVersion, Run
from judging.services.calibration.splits import split_draw
from judging.services.judges.configs import JudgeSettings, judge_config_save
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from judging.stub_model import make_server
from reviews.models import Role
from tests.factories import ProjectFactory, member
from tests.judging.visual_helpers import evidence_project

pytestmark = pytest.mark.django_db(transaction=True)
PROMPT = "Is the output faithful to the evidence? Answer with one of {{ labels }}."


@pytest.fixture
def stub(settings):
    """The demo's stub model, counting the images each request carries."""
    server = make_server()
    host = f"127.0.0.1:{server.server_address[1]}"
    settings.JUDGE_ALLOWED_HOSTS = [host]
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://{host}/v1"
    server.shutdown()
    server.server_close()


def test_configure_run_and_compare_a_visual_judge(
    page, live_server, login, screenshot, stub, tmp_path
):
    project = evidence_project(ProjectFactory(slug="docs", name="Invoices"), tmp_path)
    split_draw(actor=None, project=project, seed=1, held_out_fraction=0.01)
    admin = member(project, Role.ADMIN, username="vera")
    admin.set_password("vera-pass-2026")
    admin.save()
    text = JudgeSettings(
        provider="openai-compatible", model="stub", prompt=PROMPT, criterion="faithful",
        base_url=stub,
    )  # fmt: skip
    config = judge_config_save(project=project, name="text", settings=text).config
    run_execute(run_create(config=config, split="calibration"))

    page.set_viewport_size({"width": 1280, "height": 800})
    login("vera", "vera-pass-2026")
    page.goto(f"{live_server.url}/p/docs/judges/")
    form = page.locator("form", has=page.get_by_role("heading", name="New judge"))
    expect(form).to_contain_text("This server allows")
    form.get_by_label("Name", exact=True).fill("visual")
    form.get_by_label("Provider").select_option("openai-compatible")
    form.get_by_label("Model", exact=True).fill("stub")
    form.get_by_label("Base URL").fill(stub)
    form.get_by_label("Criterion").select_option("faithful")
    form.get_by_label("The model sees").select_option("pages")
    form.get_by_label("Pages per call, at most").fill("2")
    form.get_by_label("Prompt").fill(PROMPT)
    form.get_by_role("button", name="Create judge").click()
    expect(page.get_by_role("heading", name="Judge visual")).to_be_visible()
    expect(page.locator("tr[data-version='1'] td.sees")).to_contain_text("pages")

    page.get_by_role("button", name="Run on calibration").click()
    run = Run.objects.get(version__config__name="visual")
    expect(page.locator(f"#run-{run.pk} .run-status")).to_have_text("done")
    visual = JudgeVersion.objects.get(config__name="visual")
    doc = Call.objects.get(run=run, item__external_id="doc").request
    assert sum("image_sha256" in part for part in doc["parts"]) == 2  # the cap: 2 of 3 pages
    assert visual.evidence == "pages" and visual.max_pages == 2
    expect(page.locator(f"#run-{run.pk} .latency")).to_contain_text("latency p50")
    expect(page.locator("#run-charts figure").first).to_be_visible()
    screenshot("visual-judge-page")

    page.get_by_role("button", name="Compare versions item by item").click()
    summary = page.locator("#compare-summary")
    expect(summary).to_contain_text("text@1 vs visual@1")
    rows = summary.locator("tbody tr")
    expect(rows.nth(0)).to_contain_text("sees text only")
    expect(rows.nth(1)).to_contain_text("sees pages (at most 2 a call)")
    expect(page.locator("#settings")).to_contain_text("evidence")
    screenshot("visual-judge-compare")
