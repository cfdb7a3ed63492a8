"""Each demo role logs in and lands where its work is: My queue, with counts."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from reviews.demo.load import DEMO_USERS

pytestmark = pytest.mark.django_db(transaction=True)


def test_demo_users_land_on_their_work_with_counts(page, live_server, login, screenshot):
    call_command("load_demo")
    users = {u.username: u for u in DEMO_USERS}
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    screenshot("login")
    login("rita", users["rita"].password)
    expect(page.get_by_role("heading", name="My queue")).to_be_visible()
    row = page.locator("tr[data-project='demo']")
    expect(row.get_by_role("button", name="Start")).to_be_visible()
    assert int(row.locator("td.num").first.inner_text()) > 0  # waiting for rita
    screenshot("landing-rater")
    row.get_by_role("link", name="Statements & receipts (demo)").click()
    expect(page.get_by_role("heading", name="Statements & receipts (demo)")).to_be_visible()
    screenshot("project-home")
    for name in ("ada", "april"):
        page.context.clear_cookies()
        login(name, users[name].password)
        expect(page.get_by_role("heading", name="My queue")).to_be_visible()
        expect(page.locator("#work-queues")).to_be_visible()  # their queues, or that none waits
        expect(page.get_by_text("not a rater")).to_have_count(0)
        screenshot(f"landing-{name}")
    page.context.clear_cookies()
    login("alex", users["alex"].password)  # an admin: no queue of his own
    expect(page.get_by_role("heading", name="Projects")).to_be_visible()
