"""The Content-Security-Policy is sent and no page breaks it: review, adjudication, approval,
dashboards. A violation shows in the console ("Refused to ...") and fires a
`securitypolicyviolation` event; both are collected on every page."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from reviews.models import Project, Role
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db(transaction=True)

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
});
"""


def test_no_csp_violation_on_the_working_pages(page, live_server, login, screenshot):
    call_command("load_demo")
    demo = Project.objects.get(slug="demo")
    judged = Project.objects.get(slug="judge-demo")
    member(demo, *Role.values, username="csp")
    member(judged, *Role.values, username="csp")
    console = []
    page.on("console", lambda m: console.append(m.text))
    page.add_init_script(RECORD_VIOLATIONS)
    page.set_viewport_size({"width": 1280, "height": 800})
    login("csp", PASSWORD)

    def visit(path: str, ready: str):
        response = page.goto(f"{live_server.url}{path}")
        assert response.ok, path
        policy = response.headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy, path
        assert "camera=()" in response.headers["permissions-policy"], path
        expect(page.locator(ready).first).to_be_visible()
        page.wait_for_load_state("networkidle")
        return page

    # Review: claimed with the queue's Start button (a POST), then an autosave through htmx.
    visit("/queue/", "table")
    page.locator("tr[data-project='demo']").get_by_role("button").click()
    # review.js marks the first question current once its key handlers are in place.
    expect(page.locator("#questions > li.question.current")).to_have_count(1)
    page.keyboard.press("1")
    expect(page.locator("#questions .save-state").first).to_have_text("Saved")
    page.wait_for_load_state("networkidle")
    item_pk = page.url.rstrip("/").split("/")[-2]
    screenshot("csp-review", full_page=False)

    # The item being rated stays hidden from its rater's other roles: overseer pages of another.
    other = demo.items.exclude(pk=item_pk).order_by("pk").first().pk
    visit(f"/p/demo/items/{other}/", "#questions, .questions")  # adjudication panel
    screenshot("csp-adjudicate", full_page=False)
    visit("/p/demo/adjudication/", "main h1")
    visit("/p/demo/approvals/", "main h1")
    visit(f"/p/demo/items/{other}/approve/", "main h1")
    screenshot("csp-approve", full_page=False)
    visit("/p/demo/instructions/", "#id_instructions")  # the guidelines page (project admin)
    screenshot("guidelines-page", full_page=False)
    visit("/p/judge-demo/dashboard/", "main h1")
    page.get_by_role("button", name="Show held-out figures").click()
    expect(page.locator(".decision").first).to_be_visible()
    page.wait_for_load_state("networkidle")
    screenshot("csp-dashboard", full_page=False)
    visit("/p/judge-demo/dashboard/criteria/faithful/", "main h1")
    visit("/p/judge-demo/dashboard/disagreements/", "main h1")

    violations = page.evaluate("window.__cspViolations")
    refused = [text for text in console if "Content Security Policy" in text or "Refused" in text]
    assert violations == [] and refused == [], (violations, refused)
