"""Two prompt versions compared on screen: from the judge page's *Compare versions item by
item* to the compare page, which lists the items whose label flipped and the prompt diff."""

import pytest
from playwright.sync_api import expect

from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from reviews.models import Role
from tests.factories import PASSWORD, ProjectFactory, member
from tests.judging.run_helpers import judge, labelled_project
from tests.judging.test_compare_judges import LENIENT, STRICT, V1_WRONG, V2_WRONG, N, by_prompt
from tests.judging.wire_server import WireServer

pytestmark = pytest.mark.django_db(transaction=True)


def test_compare_two_versions_from_the_judge_page(page, live_server, login, screenshot, tmp_path):
    project = labelled_project(ProjectFactory(slug="cmp"), tmp_path, n=N)
    admin = member(project, Role.ADMIN)
    with WireServer("openai-compatible", answer=by_prompt) as srv:
        for prompt in (LENIENT, STRICT):
            saved = judge(project, srv.url, name="j", prompt=prompt)
            run_execute(run_create(config=saved.config, split="all", confirm_held_out=True))

    page.set_viewport_size({"width": 1280, "height": 900})
    login(admin.username, PASSWORD)
    page.goto(f"{live_server.url}/p/cmp/judges/j/")
    form = page.locator("#compare-versions")
    expect(form.get_by_label("Compare")).to_have_value("j@1")
    expect(form.get_by_label("with")).to_have_value("j@2")
    form.get_by_role("button", name="Compare versions item by item").click()
    expect(page.get_by_role("heading", name="Compare judges item by item")).to_be_visible()

    # Every item, held-out ones included: a recorded look, asked for on the page.
    page.locator("#compare-form").get_by_label("Split").select_option("all")
    page.get_by_role("button", name="Compare", exact=True).click()
    page.get_by_role("button", name="Show held-out figures").click()
    expect(page.locator("#n-flipped")).to_have_text("9")
    flips = page.locator("#flips tbody tr")
    expect(flips).to_have_count(9)
    for i in sorted(V1_WRONG | V2_WRONG):
        expect(page.locator("#flips")).to_contain_text(f"i{i:02}")
    diff = page.locator("#prompt-diff")
    expect(diff.locator(".diff-del")).to_have_text("-Is it faithful? {{ labels }}.")
    expect(diff.locator(".diff-add").first).to_have_text(
        "+Strict: is it faithful to the reference?"
    )
    expect(page.locator("#settings tr.changed")).to_contain_text("prompt_sha256")
    screenshot("compare-versions")
