"""A demo rater logs in and finds their projects."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from reviews.demo.load import DEMO_USERS

pytestmark = pytest.mark.django_db(transaction=True)


def test_demo_rater_logs_in_and_sees_the_project_list(page, live_server, login, screenshot):
    call_command("load_demo")
    rita = next(u for u in DEMO_USERS if u.username == "rita")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}/")
    expect(page.get_by_role("button", name="Log in")).to_be_visible()
    screenshot("login")
    login(rita.username, rita.password)
    expect(page.get_by_role("heading", name="Projects")).to_be_visible()
    expect(page.get_by_role("link", name="Statements & receipts (demo)")).to_be_visible()
    screenshot("project-list")
    page.get_by_role("link", name="Statements & receipts (demo)").click()
    expect(page.get_by_role("heading", name="Statements & receipts (demo)")).to_be_visible()
    screenshot("project-home")
