"""The calibration dashboard on the demo: from a HOLD to the disagreeing item's evidence."""

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from judging.models import FailureTag

pytestmark = pytest.mark.django_db(transaction=True)


def test_from_hold_to_evidence_in_two_clicks(page, live_server, login, screenshot):
    call_command("load_demo")
    page.set_viewport_size({"width": 1280, "height": 800})
    login("ada", "ada-demo-2026")
    page.goto(f"{live_server.url}/p/judge-demo/dashboard/")
    expect(page.get_by_role("heading", name="Can the judge be trusted yet?")).to_be_visible()
    expect(page.locator(".decision")).to_have_count(0)  # held-out figures hide until asked for
    screenshot("dashboard-held-out-hidden")
    page.get_by_role("button", name="Show held-out figures").click()  # logged, once a session
    gpt = page.locator(".decision", has_text="openai/gpt-4o")
    expect(gpt.locator(".gate")).to_have_text("HOLD")
    expect(gpt).to_contain_text("faithful")
    screenshot("dashboard")

    gpt.get_by_role("link", name="See where it disagrees").click()  # click 1
    expect(page.get_by_role("heading", name="Disagreements")).to_be_visible()
    screenshot("disagreements")
    first = page.locator("tbody tr").first
    expect(first.locator("td").nth(1)).to_have_text("faithful")  # led by the failing criterion
    item_id = first.locator("td").first.inner_text()
    first.get_by_role("link", name=item_id).click()  # click 2
    expect(page.get_by_role("heading", name=item_id)).to_be_visible()
    expect(page.get_by_role("heading", name="Evidence")).to_be_visible()
    expect(page.get_by_text("Output being judged")).to_be_visible()
    expect(page.locator(".judge-block.disagrees").first).to_be_visible()

    # An adjudicator tags the disagreement with a failure bucket, right there.
    block = page.locator(".judge-block.disagrees").first
    # The form posts on change (htmx): wait for that response, not for a fixed time.
    with page.expect_response(lambda r: r.request.method == "POST" and r.ok):
        block.get_by_label("Failure bucket").select_option(label="grader/judge error")
    assert FailureTag.objects.get().bucket.name == "grader/judge error"
    screenshot("dashboard-item")

    page.goto(f"{live_server.url}/p/judge-demo/dashboard/criteria/faithful/")
    expect(page.get_by_role("heading", name="Confusion matrices")).to_be_visible()
    expect(page.locator("figure svg[role=img]").first).to_be_visible()
    screenshot("criterion")
