"""Changed outputs uploaded on the import page: the item's page marks the verdict and label
given on the earlier output (with the diff of the outputs) and the dashboard counts them apart."""

import json

import pytest
from playwright.sync_api import expect

from reviews.models import Item, Role
from reviews.services.imports.pipeline import file_import
from tests.factories import PASSWORD, ProjectFactory, member

pytestmark = pytest.mark.django_db(transaction=True)

CRITERION = {
    "type": "criterion",
    "name": "faithful",
    "labels": ["pass", "fail"],
    "positive": "pass",
}
JUDGE = {"provider": "openai", "model": "gpt-4o", "temperature": 0.2}


def _items(changed=()):
    return [
        {
            "type": "item",
            "item_id": f"i{i}",
            "input": f"question {i}",
            "output": f"a better answer {i}" if i in changed else f"answer {i}",
            "reference": f"answer {i}",
        }
        for i in range(4)
    ]


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_changed_outputs_by_upload_are_marked_on_the_item_and_the_dashboard(
    page, live_server, login, screenshot, tmp_path
):
    project = ProjectFactory(name="Answers", slug="answers")
    admin = member(project, Role.ADMIN, username="ada")
    records = [CRITERION, *_items()]
    for i in range(4):
        label = "pass" if i % 2 == 0 else "fail"
        records.append(
            {
                "type": "verdict",
                "item_id": f"i{i}",
                "criterion": "faithful",
                "label": label,
                "judge": JUDGE,
            }
        )
        records.append(
            {
                "type": "human_label",
                "item_id": f"i{i}",
                "criterion": "faithful",
                "rater": "rita",
                "label": label,
            }
        )
    file_import(actor=admin, project=project, path=_write(tmp_path / "v1.jsonl", records))

    page.set_viewport_size({"width": 1280, "height": 900})
    login("ada", PASSWORD)
    page.goto(f"{live_server.url}{project.get_absolute_url()}")
    page.get_by_role("link", name="Import").first.click()
    page.get_by_label("File", exact=True).set_input_files(
        str(_write(tmp_path / "v2.jsonl", _items(changed={1})))
    )
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator("main")).to_contain_text("(3 unchanged, 1 with changed content)")
    screenshot("revisions-upload")

    page.goto(f"{live_server.url}/p/answers/dashboard/")
    show = page.get_by_role("button", name="Show held-out figures")
    if show.count():
        show.click()
    recompute = page.get_by_role("button", name="Recompute")
    if recompute.count():
        recompute.click()  # a job: its page, then back to the dashboard
        expect(page.locator("#job-progress")).to_contain_text("Figures recomputed")
        page.get_by_role("link", name="Back").click()
    mark = page.locator(".stale-mark").first
    expect(mark).to_have_text("stale: 1 judged, 1 labelled on an earlier output")
    expect(page.locator("table.dashboard-table td.num").first).to_contain_text("3")
    screenshot("revisions-dashboard")

    item = Item.objects.get(project=project, external_id="i1")
    page.goto(f"{live_server.url}/p/answers/dashboard/items/{item.pk}/")
    stale = page.locator(".stale")
    expect(stale).to_contain_text("given on an earlier output")
    expect(stale).to_contain_text("human label by rita: fail")
    expect(page.locator(".earlier-output pre")).to_contain_text("+a better answer 1")
    expect(page.locator(".earlier-output pre")).to_contain_text("-answer 1")
    screenshot("revisions-item")
