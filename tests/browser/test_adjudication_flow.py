"""The adjudicator's day: open on the question to decide, keys to decide, the viewer keeps its
page across a save, and "next item" leads through the queue."""

import time

import pytest
from playwright.sync_api import expect

from reviews.evidence import DrawText, build_pdf
from reviews.models import ItemSource, ItemStatus, Project, Resolution, Role
from reviews.services.files.documents import StoredFiles, document_for_bytes
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db(transaction=True)


def _three_pages(item):
    pages = [[DrawText(20, 60, f"Page {n}: total 1,200.00 EUR", size=11)] for n in (1, 2, 3)]
    pdf = build_pdf(pages, page_size=(300.0, 200.0))
    document, _ = document_for_bytes(pdf, name="statement.pdf", written=StoredFiles())
    source = ItemSource.objects.create(
        item=item, artifact_id="statement", document=document, path="statement.pdf", page=1
    )
    item.claims.update(source=source, page=1)


def test_adjudicator_decides_by_keys_and_moves_to_the_next_item(
    page, live_server, login, screenshot, review_item, rate
):
    project = Project.objects.create(slug="adj", name="Adjudication", overlap=2)
    raters = [member(project, Role.RATER, username=f"r{n}") for n in (1, 2)]
    member(project, Role.ADJUDICATOR, username="adj")
    items = []
    for n in (1, 2):
        item = review_item(
            project,
            {"$.date": ["2024-03-14"], "$.total": ["1,200.00", "1,290.00"]},
            external_id=f"case-{n}",
        )
        _three_pages(item)
        rate(raters[0], item, {"$.date": "2024-03-14", "$.total": "1,200.00"})
        rate(raters[1], item, {"$.date": "2024-03-14", "$.total": "1,290.00"})
        item.refresh_from_db()
        assert item.status == ItemStatus.ADJUDICATION
        items.append(item)

    page.set_viewport_size({"width": 1280, "height": 800})
    login("adj", PASSWORD)
    page.goto(f"{live_server.url}/p/adj/items/{items[0].pk}/")
    total = page.locator("li.question", has=page.locator("code", has_text="$.total"))
    # Opens on the question waiting for a decision, not the resolved $.date above it.
    expect(total).to_be_focused()
    page.keyboard.press("2")  # the second candidate, 1,290.00
    expect(total.locator("input[data-key='2']")).to_be_checked()
    _page_on_to(page, "3 / 3")
    page.keyboard.press("n")
    expect(total.get_by_placeholder("Reason (required)")).to_be_focused()
    page.keyboard.type("Page 3 shows 1,290.00")
    screenshot("adjudicate-keys", full_page=False)
    page.keyboard.press("Control+Enter")
    expect(page.get_by_text("Decided $.total.")).to_be_visible()
    assert Resolution.objects.filter(question__item=items[0], value="1,290.00").exists()
    # The viewer stayed on page 3 through the save; nothing is left here, so Enter moves on.
    expect(page.locator("#page-label")).to_have_text("3 / 3")
    next_link = page.get_by_role("link", name="Next item →")
    expect(next_link).to_be_focused()
    screenshot("adjudicate-next", full_page=False)
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_server.url}/p/adj/items/{items[1].pk}/")
    expect(
        page.locator("li.question", has=page.locator("code", has_text="$.total"))
    ).to_be_focused()
    expect(page.get_by_role("link", name="Next item →")).to_have_count(0)  # the queue's last


def test_a_403_names_the_missing_role_in_the_site_layout(page, live_server, login, screenshot):
    project = Project.objects.create(slug="roles", name="Roles project")
    member(project, Role.RATER, username="rita")
    page.set_viewport_size({"width": 1280, "height": 800})
    login("rita", PASSWORD)
    response = page.goto(f"{live_server.url}/p/roles/approvals/")
    assert response.status == 403
    expect(page.get_by_text("This needs the approver role in Roles project.")).to_be_visible()
    expect(page.get_by_role("link", name="My queue").first).to_be_visible()  # the site's layout
    screenshot("forbidden")


def _page_on_to(page, label: str, seconds: float = 20) -> None:
    """Press "]" until the viewer shows `label` and stays there, as a person would: on a busy
    machine the choice just made can still move the viewer to its citation (showQuestion) after
    the first presses."""
    deadline = time.monotonic() + seconds
    steady = 0
    while steady < 2:
        assert time.monotonic() < deadline, f"the viewer never settled on page {label}"
        if page.locator("#page-label").inner_text().strip() == label:
            steady += 1
        else:
            steady = 0
            page.keyboard.press("]")
        page.wait_for_timeout(300)
