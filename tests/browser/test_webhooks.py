"""The webhooks page by keyboard alone: reach the form, type the endpoint, untick an event, add
it, read the secret once; then the hook's delivery log. No WCAG A/AA violation on either page."""

import pytest
from playwright.sync_api import expect

from reviews.models import Role, Webhook
from reviews.services.webhooks.emit import webhook_event_emit
from tests.browser.axe import axe_violations, with_axe
from tests.factories import PASSWORD, ProjectFactory, member
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db(transaction=True)


def _tab_to(page, selector: str, most: int = 60) -> None:
    for _ in range(most):
        page.keyboard.press("Tab")
        if page.evaluate(f"document.activeElement === document.querySelector('{selector}')"):
            return
    raise AssertionError(f"{selector} is not reachable with Tab")


def test_an_admin_adds_a_webhook_by_keyboard_and_reads_its_deliveries(
    page, context, live_server, login, screenshot
):
    with_axe(context)
    project = ProjectFactory(slug="hooked", name="Hooked")
    member(project, Role.ADMIN, username="boss")
    page.set_viewport_size({"width": 1280, "height": 800})
    login("boss", PASSWORD)
    with Receiver() as receiver:
        page.goto(f"{live_server.url}/p/hooked/webhooks/")
        expect(page.get_by_text(receiver.host_port)).to_be_visible()  # the hosts allowed
        assert axe_violations(page) == []
        _tab_to(page, "#id_url")
        page.keyboard.type(receiver.url)
        page.keyboard.press("Tab")  # the first event: Item approved
        page.keyboard.press("Space")  # untick it
        _tab_to(page, "button.button-primary")
        page.keyboard.press("Enter")
        expect(
            page.get_by_role("heading", name=f"Signing secret of {receiver.url}")
        ).to_be_visible()
        hook = Webhook.objects.get(project=project)
        expect(page.locator("#new-secret")).to_have_text(hook.secret)
        assert "item.approved" not in hook.events and "run.finished" in hook.events
        screenshot("webhooks")

        webhook_event_emit(project, "run.finished", {"run": 1, "status": "done"})
        assert len(receiver.received) == 1
        page.goto(f"{live_server.url}/p/hooked/webhooks/")
        expect(page.locator("#new-secret")).to_have_count(0)  # shown once
        page.get_by_role("link", name="Deliveries").click()
        expect(page.get_by_text("HTTP 204")).to_be_visible()
        assert axe_violations(page) == []
        screenshot("webhook-deliveries")
