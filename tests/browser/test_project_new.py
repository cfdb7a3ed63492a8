"""The new-project form: name first, the slug follows the name until someone edits it."""

import pytest
from playwright.sync_api import expect

from reviews.models import Membership, Project, Role
from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db(transaction=True)


def test_slug_is_derived_from_the_name_and_can_be_overridden(page, live_server, login, screenshot):
    staff = UserFactory(username="stella", is_staff=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    login("stella", PASSWORD)
    page.goto(f"{live_server.url}/projects/new/")
    name, slug = page.get_by_label("Name", exact=True), page.get_by_label("Slug")
    name.fill("Café Receipts: Q3 2026")
    expect(slug).to_have_value("cafe-receipts-q3-2026")
    screenshot("project-new")
    slug.fill("receipts-q3")
    name.fill("Receipts, third quarter")
    expect(slug).to_have_value("receipts-q3")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", name="Receipts, third quarter")).to_be_visible()
    project = Project.objects.get(slug="receipts-q3")
    assert Membership.objects.filter(project=project, user=staff, role=Role.ADMIN).exists()
