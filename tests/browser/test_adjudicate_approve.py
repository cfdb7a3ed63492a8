"""Two raters disagree → the adjudicator decides → the approver signs → the export verifies."""

import json

import pytest
from django.core.management import CommandError, call_command
from playwright.sync_api import expect

from reviews.demo import files as demo_files
from reviews.models import Authority, ItemStatus, Project, Role
from reviews.services.imports.pipeline import file_import
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db(transaction=True)


def _rate(page, start_review, login, username, first_key, slug):
    login(username, PASSWORD)
    start_review(slug)
    questions = page.locator("#questions > li.question")
    for index, key in enumerate([first_key, "1", "1"]):
        if index:
            page.keyboard.press("j")
        page.keyboard.press(key)
        expect(questions.nth(index).locator(".save-state")).to_have_text("Saved")
    page.keyboard.press("Enter")
    expect(page.get_by_text("Nothing else is waiting for you")).to_be_visible()
    page.context.clear_cookies()


def test_disagreement_to_signed_verified_export(
    page, live_server, login, screenshot, tmp_path, capsys, start_review
):
    project = Project.objects.create(slug="flow", name="Flow", overlap=2)
    folder = tmp_path / "in"
    demo_files.write_demo_reviews(folder)
    path = folder / "one.jsonl"
    path.write_text(json.dumps(demo_files.demo_cases()[0]))
    file_import(actor=None, project=project, path=path, format="review")
    for name in ("r1", "r2"):
        member(project, Role.RATER, username=name)
    member(project, Role.ADJUDICATOR, username="adj")
    member(project, Role.APPROVER, username="appr")
    page.set_viewport_size({"width": 1280, "height": 800})

    _rate(page, start_review, login, "r1", "1", project.slug)  # closing balance 12,480.55
    _rate(page, start_review, login, "r2", "2", project.slug)  # closing balance 12,840.55
    item = project.items.get()
    assert item.status == ItemStatus.ADJUDICATION

    login("adj", PASSWORD)
    page.goto(f"{live_server.url}/p/{project.slug}/")
    page.get_by_role("link", name="Adjudicate").click()
    page.get_by_role("link", name="Adjudicate").click()
    panel = page.locator("li.question", has=page.locator("code", has_text="$.closing_balance"))
    expect(panel.get_by_text("Rater 1")).to_be_visible()
    panel.get_by_text("12,480.55").last.click()
    panel.get_by_placeholder("Reason (required)").fill("Page 3 reads 12,480.55")
    screenshot("adjudicate", full_page=False)
    panel.get_by_role("button", name="Save decision").click()
    expect(page.get_by_text("Decided $.closing_balance.")).to_be_visible()
    page.context.clear_cookies()

    login("appr", PASSWORD)
    page.goto(f"{live_server.url}/p/{project.slug}/approvals/")
    page.get_by_role("link", name="Review & approve").click()
    expect(page.locator("tr.change-added")).to_have_count(3)  # the three disputed paths
    page.get_by_label("Your password").fill("wrong-password")
    page.get_by_role("checkbox").check()
    page.get_by_role("button", name="Sign and approve").click()
    expect(page.get_by_text("That password is not correct.")).to_be_visible()
    assert not item.references.filter(authority=Authority.GROUND_TRUTH).exists()
    page.get_by_role("checkbox").check()
    page.get_by_label("Your password").fill(PASSWORD)
    screenshot("approve", full_page=True)
    page.get_by_role("button", name="Sign and approve").click()
    expect(page.get_by_text("Approved statement-0001: ground truth v2")).to_be_visible()

    out = tmp_path / "out"
    call_command(
        "export_ground_truth", "--project", project.slug, "--format", "review", "--out", str(out)
    )
    exported = out / "statement-0001.review.json"
    call_command("verify_approval", str(exported))

    data = json.loads(exported.read_text())
    data["claims"][0]["expected_value"] += "."  # one character
    exported.write_text(json.dumps(data))
    capsys.readouterr()
    with pytest.raises(CommandError):
        call_command("verify_approval", str(exported))
    assert "FAIL statement-0001: $.holder changed" in capsys.readouterr().out
