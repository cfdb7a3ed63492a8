"""Ground truth from evidence, end to end in the browser: an admin uploads a 3-page PDF with four
expected fields; two blind readers (the local wire server answering as two models) agree on two
fields and dispute two; two raters answer the disputed ones, an adjudicator settles the one they
split on, an approver signs with their password, and the exported reference verifies."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from judging.models import JudgeVersion
from reviews.models import Question, Reference, Role
from tests.factories import PASSWORD, member
from tests.judging.generation_helpers import FIRST, SECOND, reader, statement
from tests.judging.run_helpers import judge
from tests.judging.wire_server import WireServer

pytestmark = pytest.mark.django_db(transaction=True)


def _upload(page, base, pdf):
    page.goto(f"{base}/judges/")
    page.get_by_role("link", name="Generate ground truth").click()
    page.get_by_label("Files").set_input_files(str(pdf))
    page.get_by_label("Expected fields").fill("$.currency, $.total, $.account, $.iban")
    page.get_by_label("Instruction").fill("Extract the statement fields.")
    page.get_by_label("model-a").check()
    page.get_by_label("model-b").check()
    page.get_by_role("button", name="Generate").click()
    expect(page.get_by_text("Generation queued")).to_be_visible()
    for run in (page.locator(".run").nth(0), page.locator(".run").nth(1)):
        expect(run.locator(".run-status")).to_have_text("done")
        expect(run.locator("progress")).to_have_attribute("value", "1")  # of max 1: complete
        expect(run.locator(".run-counts")).to_contain_text("1 of 1 calls")


def _rate(page, start_review, login, username, total_key, slug, screenshot):
    """$.total (the readers disagree) first, then $.iban (one reader omitted it)."""
    login(username, PASSWORD)
    start_review(slug)
    questions = page.locator("#questions > li.question")
    expect(questions).to_have_count(2)
    expect(questions.nth(0).locator("code").first).to_have_text("$.total")
    # both candidates, each citing page 2 with the words as printed: the viewer highlights them
    expect(questions.nth(0).get_by_text("798.60").first).to_be_visible()
    expect(questions.nth(0).get_by_text("789.60").first).to_be_visible()
    expect(page.locator("#page-label")).to_have_text("2 / 3")
    expect(page.locator("#page-overlay .mark")).to_have_count(2)  # one per candidate's quote
    page.keyboard.press(total_key)
    expect(questions.nth(0).locator(".save-state")).to_have_text("Saved")
    expect(page.locator("#page-overlay .mark-active")).to_have_count(1)  # the chosen one's
    screenshot(f"generate-rate-{username}", full_page=False)
    page.keyboard.press("j")
    page.keyboard.press("1")  # DE00, the one candidate
    expect(questions.nth(1).locator(".save-state")).to_have_text("Saved")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Nothing else is waiting for you")).to_be_visible()
    page.context.clear_cookies()


def test_upload_to_rated_adjudicated_signed_and_verified_reference(
    page, live_server, login, screenshot, project, tmp_path, capsys, start_review
):
    member(project, Role.ADMIN, username="gen-admin")
    for name in ("r1", "r2"):
        member(project, Role.RATER, username=name)
    member(project, Role.ADJUDICATOR, username="adj")
    member(project, Role.APPROVER, username="appr")
    base = f"{live_server.url}/p/{project.slug}"
    page.set_viewport_size({"width": 1280, "height": 800})
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        for name in ("model-a", "model-b"):
            judge(project, srv.url, name=name, model=name, criterion=None,
                  prompt="{{ instruction }} {{ fields }}")  # fmt: skip
        login("gen-admin", PASSWORD)
        _upload(page, base, statement(tmp_path))
        screenshot("generate-upload")
    item = project.items.get()
    rows = Reference.objects.get(item=item, authority="generated").rows
    assert sorted(r["path"] for r in rows) == ["$.account", "$.currency"]
    assert set(Question.objects.values_list("key", flat=True)) == {"$.total", "$.iban"}

    page.goto(f"{base}/items/{item.pk}/timeline/")  # every reader's claims and prompt SHA-256
    for version in JudgeVersion.objects.all():  # both readers have the same prompt here
        expect(page.locator(".prompt-sha", has_text=version.prompt_sha256)).to_have_count(2)
    expect(page.locator(".reconciliation")).to_contain_text("$.total: disagreement")
    screenshot("generate-timeline")
    page.context.clear_cookies()

    _rate(page, start_review, login, "r1", "1", project.slug, screenshot)  # 798.60, as printed
    _rate(page, start_review, login, "r2", "2", project.slug, screenshot)  # model-b's 789.60

    login("adj", PASSWORD)
    page.goto(f"{base}/")
    page.get_by_role("link", name="Adjudicate").click()
    page.get_by_role("link", name="Adjudicate").click()
    panel = page.locator("li.question", has=page.locator("code", has_text="$.total"))
    panel.get_by_text("798.60").last.click()
    panel.get_by_placeholder("Reason (required)").fill("Page 2 prints 798.60")
    panel.get_by_role("button", name="Save decision").click()
    expect(page.get_by_text("Decided $.total.")).to_be_visible()
    page.context.clear_cookies()

    login("appr", PASSWORD)
    page.goto(f"{base}/approvals/")
    page.get_by_role("link", name="Review & approve").click()
    page.get_by_label("I have checked each decision").check()
    page.get_by_label("Your password").fill(PASSWORD)
    screenshot("generate-approve", full_page=False)
    page.get_by_role("button", name="Sign and approve").click()
    expect(page.get_by_text(f"Approved {item}: ground truth v2")).to_be_visible()

    out = tmp_path / "export"
    for format in ("reference", "review"):
        call_command(
            "export_ground_truth", "--project", project.slug, "--format", format,
            "--out", str(out),
        )  # fmt: skip
    capsys.readouterr()
    call_command("verify_approval", str(out))
    assert capsys.readouterr().out.count(f"OK   {item.external_id}: v3, version 2") == 2
    signed = Reference.objects.get(item=item, authority="ground_truth").rows
    assert {r["path"]: r["expected_value"] for r in signed} == {
        "$.account": "Northwind Traders",
        "$.currency": "EUR",
        "$.iban": "DE00",
        "$.total": "798.60",
    }
