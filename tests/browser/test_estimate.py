"""The true-score page on the demo: from the dashboard's "label N more to decide" to the three
figures, refused until imported labels are assumed random."""

import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

pytestmark = pytest.mark.django_db(transaction=True)


def test_true_score_from_the_dashboard(page, live_server, login, screenshot):
    call_command("load_demo")
    page.set_viewport_size({"width": 1280, "height": 800})
    login("ada", "ada-demo-2026")
    page.goto(f"{live_server.url}/p/judge-demo/dashboard/")
    page.get_by_role("button", name="Show held-out figures").click()
    # gpt-4o holds on faithful, its kappa's lower bound just under the gate: a number of labels
    hint = page.locator("tr", has=page.locator(".judge-cell[data-judge='openai/gpt-4o']"))
    hint = hint.locator(".label-more", has_text="Label")
    expect(hint.first).to_contain_text(re.compile(r"Label \d+ more to decide"))
    expect(hint.first).to_contain_text("shrinks as 1/√n")
    hint.first.scroll_into_view_if_needed()
    screenshot("dashboard-label-more", full_page=False)

    faithful = page.locator("td", has=page.get_by_role("link", name="faithful", exact=True))
    faithful.get_by_role("link", name="True score →").click()
    expect(page.get_by_role("heading", name="True score: faithful")).to_be_visible()
    expect(page.locator("#estimate-refusal")).to_contain_text("no known selection")
    screenshot("estimate-refused")

    page.get_by_label("Treat imported labels as a random sample").check()
    # The demo has people's labels on 221 of its 240 items: aim just under the current ±0.057.
    page.get_by_label("Aim for ± (half-width)").fill("0.056")
    page.get_by_role("button", name="Estimate").click()
    figures = page.locator("#estimate-figures tbody tr")
    expect(figures).to_have_count(3)
    for name in ("PPI++", "Human only", "Judge only"):
        row = page.locator("#estimate-figures tr", has_text=name)
        expect(row.locator("td.num").first).to_have_text(re.compile(r"^0\.\d{3}$"))
        expect(row.locator("svg[role=img]")).to_be_visible()
    expect(page.locator("#label-selection")).to_contain_text("ASSUMED")
    expect(page.locator("#label-more")).to_contain_text(re.compile(r"Label \d+ more"))
    screenshot("estimate")
