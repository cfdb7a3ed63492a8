"""A rater reviews a 3-page PDF item with the keyboard only, and an image item with the mouse."""

import json

import pytest
from playwright.sync_api import expect

from reviews.demo import files as demo_files
from reviews.models import Answer, Assignment, AssignmentStatus, Project, Role
from reviews.services.imports.pipeline import file_import
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def review_project(tmp_path):
    """A project with one statement (3-page PDF) and one receipt (PNG), imported as users do."""
    project = Project.objects.create(slug="review-ui", name="Review UI", blind=False)
    folder = tmp_path / "bundle"
    demo_files.write_demo_reviews(folder)
    cases = [demo_files.demo_cases()[0], demo_files.demo_cases()[4]]
    path = folder / "two.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in cases))
    file_import(actor=None, project=project, path=path, format="review")
    return project


def _saved(page, question_li):
    expect(question_li.locator(".save-state")).to_have_text("Saved", timeout=5000)


def test_keyboard_only_review_of_a_pdf_item(
    page, live_server, login, screenshot, review_project, start_review
):
    rater = member(review_project, Role.RATER, username="kbd")
    page.set_viewport_size({"width": 1280, "height": 800})
    login("kbd", PASSWORD)
    start_review(review_project.slug)
    expect(page.get_by_role("heading", name="statement-0001")).to_be_visible()
    # The first question cites page 3: the viewer opens there.
    expect(page.locator("#page-label")).to_have_text("3 / 3")
    questions = page.locator("#questions > li.question")
    expect(questions).to_have_count(3)
    screenshot("review-pdf-start", full_page=False)

    page.keyboard.press("1")  # closing balance: first candidate
    _saved(page, questions.nth(0))
    # Its citation is on page 3: the viewer follows the focused question's evidence.
    expect(page.locator("#page-label")).to_have_text("3 / 3")
    expect(page.locator(".mark-active")).to_have_count(1)
    page.keyboard.press("j")
    page.keyboard.press("2")  # total due: second candidate
    _saved(page, questions.nth(1))
    page.keyboard.press("j")
    page.keyboard.press("e")
    page.keyboard.type("March 2024")
    page.keyboard.press("Escape")
    _saved(page, questions.nth(2))
    # $.period cites page 1: the viewer went there with the focused question.
    expect(page.locator("#page-label")).to_have_text("1 / 3")
    page.keyboard.press("+")
    page.keyboard.press("[")  # no page before 1: stays
    page.keyboard.press("]")
    expect(page.locator("#page-label")).to_have_text("2 / 3")
    page.keyboard.press("?")
    expect(page.locator("#cheatsheet")).to_be_visible()
    screenshot("review-cheatsheet", full_page=False)
    page.keyboard.press("Escape")
    screenshot("review-pdf-answered", full_page=False)

    # A reload mid-review keeps every answer.
    page.reload()
    expect(questions.nth(0).locator("input[name=choice]:checked")).to_have_count(1)
    expect(questions.nth(2).locator(".value-input")).to_have_value("March 2024")
    expect(questions.nth(1).locator("input[name=choice][data-key='2']")).to_be_checked()

    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", name="receipt-0001")).to_be_visible()

    answers = {
        a.question.key: a
        for a in Answer.objects.filter(rater=rater).select_related("question", "chosen_claim")
    }
    assert answers["$.closing_balance"].value == "12,480.55"
    assert answers["$.total_due"].value == "1,290.00"
    assert answers["$.period"].value == "March 2024"
    assert Assignment.objects.get(rater=rater, item__external_id="statement-0001").status == (
        AssignmentStatus.SUBMITTED
    )


def test_mouse_review_of_an_image_item(page, live_server, login, screenshot, review_project):
    rater = member(review_project, Role.RATER, username="mouse")
    statement = review_project.items.get(external_id="statement-0001")
    Assignment.objects.create(
        item=statement,
        rater=rater,
        status=AssignmentStatus.SKIPPED,
        skip_reason="testing the image item",
    )
    page.set_viewport_size({"width": 1280, "height": 800})
    login("mouse", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    page.get_by_role("button", name="Start").click()
    expect(page.get_by_role("heading", name="receipt-0001")).to_be_visible()
    expect(page.locator("#page-image")).to_have_js_property("naturalWidth", 480)
    total = page.locator("#questions > li.question").nth(0)
    total.get_by_text("23.40").click()
    _saved(page, total)
    date = page.locator("#questions > li.question").nth(1)
    date.get_by_text("Omit field").click()
    _saved(page, date)
    page.get_by_role("button", name="Zoom in").click()
    screenshot("review-image", full_page=False)
    page.get_by_role("button", name="Submit & next").click()
    expect(page.get_by_text("Nothing else is waiting for you")).to_be_visible()
    answers = {
        a.question.key: a for a in Answer.objects.filter(rater=rater).select_related("question")
    }
    assert answers["$.total"].value == "23.40"
    assert answers["$.date"].decision == "omit"
