"""The rater's day at 1280x800: a 6-question item by mouse, Enter in the value box, two tabs on
one item, Back after submitting, revising, progress and the guidelines panel."""

import json
import re

import pytest
from playwright.sync_api import expect

from reviews.demo import files as demo_files
from reviews.models import Answer, Project, Role
from reviews.services.assignment.batches import batch_create
from reviews.services.imports.pipeline import file_import
from tests.browser.conftest import ARTIFACTS
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db(transaction=True)

LONG = "ACCT-" + "7" * 160  # one unbroken word, far wider than the answer pane


def _six_questions(case: dict) -> dict:
    """The demo statement with its three agreed claims turned into disputed fields too."""
    for claim in case.pop("claims"):
        first = {
            "provider": "openai",
            "expected_value": claim["expected_value"],
            "reference_id": claim["reference_id"],
            "evidence": claim["evidence"],
            "confidence": 0.7,
            "bbox": claim["bbox"],
        }
        second = {**first, "provider": "claude", "expected_value": LONG, "confidence": 0.4}
        del second["bbox"]
        case["review_items"].append(
            {
                "path": claim["path"],
                "reason": "low_confidence",
                "decision": None,
                "value": None,
                "note": None,
                "candidates": [first, second],
            }
        )
    return case


@pytest.fixture
def rater_project(tmp_path):
    project = Project.objects.create(
        slug="rater-ui",
        name="Rater UI",
        overlap=2,
        instructions="Read the **whole statement**.\n\n- Amounts as printed\n- <b onclick=x>no html</b>",
    )
    folder = tmp_path / "bundle"
    demo_files.write_demo_reviews(folder)
    statement, _, _, _, receipt, *_ = demo_files.demo_cases()
    path = folder / "cases.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in (_six_questions(statement), receipt)))
    file_import(actor=None, project=project, path=path, format="review")
    rina = member(project, Role.RATER, username="rina")
    batch_create(
        actor=None, project=project, name="March", raters=[rina], selection="count", count=2
    )
    return project


@pytest.fixture
def reviewing(page, login, start_review, rater_project):
    page.set_viewport_size({"width": 1280, "height": 800})
    login("rina", PASSWORD)
    start_review(rater_project.slug)
    expect(page.get_by_role("heading", name="statement-0001")).to_be_visible()
    return page.locator("#questions > li.question")


def _saved(question):
    expect(question.locator(".save-state")).to_have_text("Saved")


def test_six_questions_by_mouse_at_1280x800(page, reviewing, screenshot):
    questions = reviewing
    expect(questions).to_have_count(6)
    # The viewer opens on the page the focused question cites ($.closing_balance: page 3).
    expect(page.locator("#page-label")).to_have_text("3 / 3")
    expect(page.locator("#trail-position")).to_have_text("Item 1 of 2 · March")
    guidelines = page.locator("#guidelines")
    expect(guidelines.locator("strong")).to_have_text("whole statement")
    assert guidelines.locator("[onclick]").count() == 0  # sanitised Markdown
    expect(questions.nth(3).locator("[data-reason]")).to_have_text("Low confidence")
    submit = page.get_by_role("button", name="Submit & next")
    skip = page.get_by_role("button", name="Skip")
    expect(submit).to_be_in_viewport()
    expect(skip).to_be_in_viewport()
    screenshot("rater-six-start", full_page=False)

    toolbar = page.locator(".viewer-toolbar")
    for index in range(6):
        question = questions.nth(index)
        question.locator("label.candidate").first.click()  # Playwright scrolls the panel
        _saved(question)
        expect(toolbar).to_be_in_viewport()  # focusing a lower question scrolls the panel only
        assert page.evaluate("window.scrollY") == 0
    last = questions.nth(5)
    expect(last).to_be_in_viewport()
    # The long unbroken candidate wraps inside its card.
    overflow = last.evaluate("card => card.scrollWidth - card.clientWidth")
    assert overflow <= 0
    long_value = last.locator(".choice-value", has_text="ACCT-")
    assert long_value.bounding_box()["x"] + long_value.bounding_box()["width"] <= 1280
    expect(submit).to_be_in_viewport()
    screenshot("rater-six-answered", full_page=False)
    submit.click()
    expect(page.get_by_role("heading", name="receipt-0001")).to_be_visible()
    expect(page.locator("#trail-position")).to_have_text("Item 2 of 2 · March")
    expect(page.get_by_role("link", name="‹ Previous")).to_be_visible()


def test_enter_in_the_value_box_saves_and_does_not_navigate(page, reviewing, rater_project):
    url = page.url
    page.evaluate("window.__samePage = true")
    box = reviewing.nth(2).locator(".value-input")
    box.click()
    box.fill("01-31 March 2024")
    box.press("Enter")
    _saved(reviewing.nth(2))
    page.wait_for_load_state("networkidle")
    assert page.url == url and "?" not in page.url
    assert page.evaluate("window.__samePage") is True
    answer = Answer.objects.get(question__key="$.period")
    assert answer.value == "01-31 March 2024"
    expect(reviewing.nth(2)).to_have_class(re.compile(r"\banswered\b"))  # typed, not clicked


def test_two_tabs_on_one_item_keep_the_changed_elsewhere_notice(page, reviewing):
    other = page.context.new_page()
    other.set_viewport_size({"width": 1280, "height": 800})
    other.goto(page.url)
    first_tab = reviewing.nth(0)
    first_tab.locator("label.candidate").nth(0).click()
    _saved(first_tab)
    second_tab = other.locator("#questions > li.question").nth(0)
    mine = second_tab.locator("label.candidate").nth(1)
    my_value = mine.locator(".choice-value").inner_text()
    mine.click()  # stale: the first tab saved first
    status = second_tab.locator(".save-state")
    expect(status).to_have_text("Changed elsewhere: showing the newer answer")
    other.wait_for_load_state("networkidle")
    expect(status).to_have_text("Changed elsewhere: showing the newer answer")
    expect(second_tab.locator("input[name=choice]").nth(0)).to_be_checked()  # the newer answer
    # A warning, not the green of "Saved" (a CSS rule for "Saved" once outranked it).
    expect(status).to_have_css("color", "rgb(163, 84, 0)")
    notice = second_tab.locator(".stale-notice")
    expect(notice).to_contain_text(f"yours was {my_value}")
    other.screenshot(path=str(ARTIFACTS / "rater-two-tabs-stale.png"))
    assert Answer.objects.count() == 1
    # The losing answer is one click away; the refreshed card carries the newer seq, so it saves.
    notice.get_by_role("button", name="Use mine").click()
    expect(status).to_have_text("Saved")
    expect(status).to_have_css("color", "rgb(38, 122, 55)")
    expect(notice).to_have_count(0)
    expect(second_tab.locator("input[name=choice]").nth(1)).to_be_checked()
    assert Answer.objects.count() == 2
    assert Answer.objects.latest("seq").value == my_value


def test_back_after_submit_is_read_only_and_revisable(page, reviewing, screenshot):
    questions = reviewing
    for index in range(6):
        questions.nth(index).locator("label.candidate").first.click()
        _saved(questions.nth(index))
    page.get_by_role("button", name="Submit & next").click()
    expect(page.get_by_role("heading", name="receipt-0001")).to_be_visible()
    page.go_back()
    expect(page.get_by_role("heading", name="statement-0001")).to_be_visible()
    expect(page.locator("#submitted-notice")).to_contain_text("You submitted this item")
    expect(page.get_by_role("button", name="Submit & next")).to_have_count(0)
    first = page.locator("#questions > li.question").nth(0)
    expect(first.locator("input[name=choice]").first).to_be_disabled()
    expect(first.locator("input[name=choice]").first).to_be_checked()
    page.keyboard.press("2")  # keys do nothing on a read-only page
    expect(first.locator("input[name=choice]").nth(1)).not_to_be_checked()
    expect(page.get_by_text("Retry")).to_have_count(0)
    screenshot("rater-back-read-only", full_page=False)

    # The second rater has not answered: the rater may revise until the question is settled.
    page.get_by_role("link", name="Revise my answers").click()
    first = page.locator("#questions > li.question").nth(0)
    with page.expect_response(lambda r: "/answer/" in r.url) as saving:
        first.locator("label.candidate").nth(1).click()
    assert saving.value.status == 200
    _saved(first)
    rows = Answer.objects.filter(question__key="$.closing_balance").order_by("seq")
    assert [a.seq for a in rows] == [1, 2]  # a new row; the first answer stays
    page.get_by_role("link", name="Done revising").click()
    expect(page.locator("#submitted-notice")).to_be_visible()
