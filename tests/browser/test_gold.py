"""Gold items end to end: an admin marks an item gold on its page and sets the share and the
alert, a rater is served it blind and misses it, the project page warns."""

import pytest
from playwright.sync_api import expect

from reviews.models import Assignment, Role
from tests.factories import PASSWORD, ProjectFactory, member

pytestmark = pytest.mark.django_db(transaction=True)

TOTAL = {"$.total": ["1,200.00", "1,290.00"]}


def test_gold_marked_served_blind_and_alerted(
    page, live_server, login, start_review, screenshot, review_item, rate
):
    project = ProjectFactory(slug="claims", name="Claims", overlap=1)
    gold = review_item(project, TOTAL, external_id="claim-0001")
    rate(member(project, Role.RATER, username="rita"), gold, {"$.total": "1,290.00"})
    review_item(project, TOTAL, external_id="claim-0002")
    member(project, Role.ADMIN, username="alex")
    gus = member(project, Role.RATER, username="gus")
    page.set_viewport_size({"width": 1280, "height": 800})

    login("alex", PASSWORD)
    page.goto(f"{live_server.url}/p/claims/items/{gold.pk}/")
    page.get_by_role("button", name="Mark as gold").click()
    expect(page.get_by_text("claim-0001 is gold (known answer from resolutions).")).to_be_visible()
    expect(page.get_by_role("button", name="Take gold mark back")).to_be_visible()
    screenshot("gold-item-marked", full_page=False)
    page.goto(f"{live_server.url}/p/claims/settings/")
    page.get_by_label("Gold share").fill("1")
    page.get_by_role("button", name="Save settings").click()
    page.goto(f"{live_server.url}/p/claims/raters/")
    page.get_by_label("Warn below accuracy on gold").fill("0.9")
    page.get_by_label("Once a rater has this many gold answers").fill("1")
    page.get_by_role("button", name="Save alert").click()
    expect(page.get_by_text("Alert threshold saved.")).to_be_visible()

    page.context.clear_cookies()
    login("gus", PASSWORD)
    start_review("claims")
    expect(page.get_by_role("heading", name="claim-0001")).to_be_visible()
    question = page.locator("li.question").first
    expect(question.locator(".badge", has_text="resolved")).to_have_count(0)
    question.locator("label.candidate", has_text="1,200.00").click()
    expect(question.locator(".save-state")).to_have_text("Saved")
    screenshot("gold-served-blind", full_page=False)
    page.get_by_role("button", name="Submit & next").click()
    expect(page.get_by_role("heading", name="claim-0002")).to_be_visible()
    assert Assignment.objects.get(rater=gus, item=gold).gold

    page.context.clear_cookies()
    login("alex", PASSWORD)
    page.goto(f"{live_server.url}/p/claims/")
    expect(page.get_by_text("gus is at 0.00 on gold items (n = 1)")).to_be_visible()
    page.goto(f"{live_server.url}/p/claims/raters/")
    row = page.locator("tr[data-rater='gus']")
    expect(row).to_have_class("rater-alert")
    expect(row.locator("td").nth(1)).to_have_text("1")
    screenshot("gold-rater-quality", full_page=False)
