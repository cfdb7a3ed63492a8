"""Generating ground truth from the upload page: a 3-page PDF, four expected fields, two blind
readers; agreed fields become the generated reference, the disputed ones questions."""

import pytest
from playwright.sync_api import expect

from reviews.models import Question, Reference, Role
from tests.factories import PASSWORD, member
from tests.judging.run_helpers import judge
from tests.judging.test_generation import FIRST, SECOND, reader, statement
from tests.judging.wire_server import WireServer

pytestmark = pytest.mark.django_db(transaction=True)


def test_upload_pdf_generates_reference_and_questions(
    page, live_server, login, screenshot, project, tmp_path
):
    admin = member(project, Role.ADMIN, username="gen-admin")
    pdf = statement(tmp_path)
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        for name in ("model-a", "model-b"):
            judge(project, srv.url, name=name, model=name, criterion=None,
                  prompt="{{ instruction }} {{ fields }}")  # fmt: skip
        page.set_viewport_size({"width": 1280, "height": 800})
        login(admin.username, PASSWORD)
        page.goto(f"{live_server.url}/p/{project.slug}/judges/")
        page.get_by_role("link", name="Generate ground truth").click()
        page.get_by_label("Files").set_input_files(str(pdf))
        page.get_by_label("Expected fields").fill("$.currency, $.total, $.account, $.iban")
        page.get_by_label("Instruction").fill("Extract the statement fields.")
        page.get_by_label("model-a").check()
        page.get_by_label("model-b").check()
        page.get_by_role("button", name="Generate").click()
        expect(page.get_by_text("Generation queued")).to_be_visible()
        expect(page.locator(".run progress").first).to_be_visible()
        expect(page.locator(".run-status").first).to_have_text("done")
        screenshot("generate-upload")
    rows = Reference.objects.get(authority="generated").rows
    assert sorted(r["path"] for r in rows) == ["$.account", "$.currency"]
    assert set(Question.objects.values_list("key", flat=True)) == {"$.total", "$.iban"}
