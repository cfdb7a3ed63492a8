"""A plain labelling project, Label Studio's most common job, in the browser with no judge
anywhere: a new project, its criterion, items from a CSV with a question each on import, a
rater added on the members page, and the rater's labels. No verdict exists at any point."""

import json

import pytest
from playwright.sync_api import expect

from judging.models import Verdict
from reviews.models import Answer, Decision, Item, Question
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)

CRITERION = {
    "type": "criterion",
    "name": "helpful",
    "labels": ["yes", "no"],
    "text": "Does the answer help the person who asked?",
}


def _upload(page, path, *, kind="", questions=""):
    page.get_by_role("link", name="Import").first.click()
    page.get_by_label("File", exact=True).set_input_files(str(path))
    if kind:
        page.get_by_label("CSV record kind").select_option(kind)
    if questions:
        page.get_by_label("Questions for every imported item").fill(questions)
    page.get_by_role("button", name="Import", exact=True).click()
    page.wait_for_load_state()


def test_csv_import_to_a_raters_labels_with_no_verdicts(
    page, live_server, login, screenshot, tmp_path
):
    UserFactory(username="stella", is_staff=True)
    UserFactory(username="rina")
    criterion = tmp_path / "criterion.jsonl"
    criterion.write_text(json.dumps(CRITERION) + "\n")
    items = tmp_path / "answers.csv"
    items.write_text(
        "item_id,input,output\n"
        'a-1,How do I reset my password?,"Settings, then Security, then Reset."\n'
        "a-2,What are your opening hours?,We sell shoes.\n"
        'a-3,Can I pay by card?,"Yes, every major card."\n'
    )
    page.set_viewport_size({"width": 1280, "height": 800})
    login("stella", PASSWORD)
    page.goto(f"{live_server.url}/projects/new/")
    page.get_by_label("Name", exact=True).fill("Support answers")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", name="Support answers")).to_be_visible()
    home = page.url

    _upload(page, criterion)
    expect(page.locator("main")).to_contain_text("1 criterion")
    page.goto(home)
    _upload(page, items, kind="item", questions="criterion:helpful")
    expect(page.locator("main")).to_contain_text("imported 3 items, 3 questions, 0 errors")
    screenshot("plain-labelling-import")
    assert Question.objects.filter(key="helpful").count() == 3

    page.goto(home)
    page.get_by_role("link", name="Members").first.click()
    page.get_by_label("User", exact=True).fill("rina")
    page.get_by_label("Role", exact=True).select_option("rater")
    page.get_by_role("button", name="Add").click()
    expect(page.locator("table")).to_contain_text("rina")

    page.context.clear_cookies()
    login("rina", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    page.locator("tr[data-project='support-answers']").get_by_role("button").click()
    for _ in range(3):
        question = page.locator("#questions > li.question").first
        expect(question.locator(".criterion-text")).to_have_text(CRITERION["text"])
        question.locator("label.choice", has_text="yes").click()
        expect(question.locator(".save-state")).to_have_text("Saved")
        screenshot("plain-labelling-rater", full_page=False)
        page.get_by_role("button", name="Submit & next").click()
        page.wait_for_load_state()
    done = page.locator("tr[data-project='support-answers']")  # back on My queue, all done
    expect(done).to_contain_text("Nothing waiting")
    expect(done.locator("td").nth(3)).to_have_text("3")  # finished today

    labels = Answer.objects.filter(rater__username="rina", decision=Decision.LABEL)
    assert sorted(labels.values_list("question__item__external_id", "value")) == [
        ("a-1", "yes"),
        ("a-2", "yes"),
        ("a-3", "yes"),
    ]
    assert Item.objects.filter(project__slug="support-answers").count() == 3
    assert not Verdict.objects.exists()  # no verdicts anywhere
