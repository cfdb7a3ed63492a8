"""At 1280x800: the batch-approval summary shows each differing path's values behind one
expand per item (select-all in the queue), and a bulk action on filtered item-list rows."""

import re

import pytest
from playwright.sync_api import expect

from reviews.models import AssignmentBatch, ItemSlice, Role, Slice
from tests.factories import PASSWORD, ItemFactory, ProjectFactory, member

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_batch_summary_shows_every_differing_value(
    page, live_server, login, screenshot, review_item, rate
):
    project = ProjectFactory(slug="batch-ui", name="Batch UI")
    raters = [member(project, Role.RATER, username=f"br{n}") for n in (1, 2)]
    member(project, Role.APPROVER, username="appr")
    for n in range(3):
        item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]},
                           rows={"$.currency": "EUR"}, external_id=f"stmt-{n}")  # fmt: skip
        for rater in raters:
            rate(rater, item, {"$.total": "1,290.00"})
    page.set_viewport_size({"width": 1280, "height": 800})
    login("appr", PASSWORD)
    page.goto(f"{live_server.url}/p/batch-ui/approvals/")
    page.get_by_label("Select every item on this page").check()  # select-all
    expect(page.locator("input[name=item]:checked")).to_have_count(3)
    page.get_by_role("button", name="Approve selected…").click()
    expect(page.get_by_role("heading", name="Approve 3 of 3 selected items")).to_be_visible()
    first = page.locator("tr[data-differences='stmt-0'] details")
    expect(first.locator("summary")).to_have_text(
        "1 path differs from the generated reference: show it"
    )
    first.locator("summary").click()
    row = first.locator("tr.change-added")
    expect(row).to_contain_text("$.total")
    expect(row).to_contain_text("1,290.00")
    expect(row).to_contain_text("unanimous")
    expect(row).to_be_in_viewport()
    screenshot("batch-summary-values", full_page=False)


def test_a_bulk_action_on_filtered_rows(page, live_server, login, screenshot):
    project = ProjectFactory(slug="bulk-ui", name="Bulk UI")
    member(project, Role.ADMIN, username="boss")
    rita = member(project, Role.RATER, username="rita")
    urgent = Slice.objects.create(project=project, name="urgent")
    for n in range(60):
        item = ItemFactory(project=project, external_id=f"case-{n:03d}", title=f"Case {n}")
        if n % 3 == 0:
            ItemSlice.objects.create(item=item, slice=urgent)
    page.set_viewport_size({"width": 1280, "height": 800})
    login("boss", PASSWORD)
    page.goto(f"{live_server.url}/p/bulk-ui/items/")
    expect(page.get_by_role("heading", name=re.compile(r"Items \(60\)"))).to_be_visible()
    page.get_by_label("Slice").select_option(label="urgent")
    page.get_by_label("Status").select_option("open")
    page.get_by_role("button", name="Filter").click()
    expect(page.get_by_role("heading", name=re.compile(r"Items \(20 matching\)"))).to_be_visible()
    assert f"slice={urgent.pk}" in page.url and "status=open" in page.url  # kept in the URL
    page.get_by_label("Tick every item on this page").check()
    expect(page.locator("[data-select-note]")).to_be_visible()
    page.get_by_label("or all 20 items matching these filters").check()
    page.get_by_label("Rater").select_option(label="rita")
    screenshot("item-list-bulk-before", full_page=False)
    page.get_by_role("button", name="Assign", exact=True).click()
    page.wait_for_load_state()
    print("MESSAGES", page.locator(".messages").all_inner_texts(), page.url)
    expect(page.locator(".message-success")).to_have_text(
        "20 items assigned to rita (batch Assigned to rita)."
    )
    assert f"slice={urgent.pk}" in page.url  # back on the same filtered list
    expect(page.get_by_role("heading", name=re.compile(r"Items \(20 matching\)"))).to_be_visible()
    screenshot("item-list-bulk-after", full_page=False)
    batch = AssignmentBatch.objects.get()
    assigned = set(batch.assignments.values_list("item__external_id", flat=True))
    assert assigned == {f"case-{n:03d}" for n in range(0, 60, 3)}
    assert set(batch.assignments.values_list("rater", flat=True)) == {rita.pk}
