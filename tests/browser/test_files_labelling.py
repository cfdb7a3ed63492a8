"""A labelling project from nothing but files (issue 28), in the browser at 1280x800: a question
defined with the builder on the new-project form, three images and a PDF uploaded at once, each
labelled by a rater, approved, and the browser's export .zip verified as downloaded."""

import io
import json
import zipfile

import pytest
from django.core.management import call_command
from PIL import Image, ImageDraw
from playwright.sync_api import expect

from reviews.evidence import DrawText, build_pdf
from reviews.models import Item, Project, Role
from tests.browser.page_checks import keyboard_stops
from tests.factories import PASSWORD, UserFactory, member

pytestmark = pytest.mark.django_db(transaction=True)


def _scan(path, text: str, fmt: str) -> None:
    image = Image.new("RGB", (480, 300), "white")
    ImageDraw.Draw(image).text((30, 130), text, fill="black")
    image.save(path, fmt)


def _files(folder):
    _scan(folder / "receipt-1.png", "RECEIPT  Total 12.00", "PNG")
    _scan(folder / "receipt-2.jpg", "RECEIPT  Total 7.50", "JPEG")
    _scan(folder / "receipt-3.webp", "RECEIPT  Total 3.20", "WEBP")
    pdf = build_pdf([[DrawText(40, 80, "Statement  Closing balance 100.00", size=14)]])
    (folder / "statement.pdf").write_bytes(pdf)
    return sorted(folder.iterdir())


def test_files_to_labels_to_a_verified_export(
    page, live_server, login, screenshot, tmp_path, capsys
):
    UserFactory(username="stella", is_staff=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    login("stella", PASSWORD)

    # 1. The question, defined with the builder on the new-project form.
    page.goto(f"{live_server.url}/projects/new/")
    page.get_by_label("Name", exact=True).fill("Receipts to label")
    page.get_by_label("Overlap").fill("1")
    stops = keyboard_stops(page)
    assert [s["name"] for s in stops if not s["shown"]] == [], stops  # every focus is drawn
    assert {"Yes / no", "q-name", "q-labels", "Create project"} <= {s["name"] for s in stops}
    page.get_by_role("button", name="Yes / no").focus()
    page.keyboard.press("Enter")  # a template from the keyboard
    expect(page.get_by_label("Labels")).to_have_value("yes\nno")
    page.get_by_label("Question name").fill("legible")
    page.get_by_label("Guidance").fill("Can you read every figure on the page?")
    preview = page.locator("#question-preview")
    expect(preview.locator(".question-title")).to_have_text("legible")
    expect(preview).to_contain_text("Can you read every figure on the page?")
    expect(preview.locator("label.choice")).to_have_text(["1 yes", "2 no", "f Unclear"])
    expect(preview).to_contain_text("Passing label: yes")
    screenshot("files-builder")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_text("every import asks criterion:legible")).to_be_visible()
    project = Project.objects.get(slug="receipts-to-label")
    page.get_by_role("link", name="Questions").first.click()
    row = page.locator("tbody tr", has_text="legible")
    expect(row).to_contain_text("Pass / fail")
    expect(row).to_contain_text("v1")
    screenshot("files-questions")
    page.go_back()
    member(project, Role.RATER, username="rina")
    member(project, Role.APPROVER, username="april")

    # 2. Three images and a PDF at once; the page says such files are accepted.
    page.get_by_role("link", name="Import").first.click()
    expect(page.get_by_text("Images and PDFs", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="how files import")).to_have_attribute(
        "href", "/docs/formats/#7-files-images-and-pdfs"
    )
    page.get_by_label("File", exact=True).set_input_files([str(p) for p in _files(tmp_path)])
    page.get_by_role("button", name="Import", exact=True).click()
    expect(page.locator("main")).to_contain_text("imported 4 items, 4 questions")
    screenshot("files-imported")
    assert Item.objects.filter(project=project).count() == 4
    page.context.clear_cookies()

    # 3. The rater labels each file beside its evidence.
    login("rina", PASSWORD)
    page.goto(f"{live_server.url}/queue/")
    page.locator("tr[data-project='receipts-to-label']").get_by_role("button").click()
    for n in range(4):
        title = page.locator(".item-title h1").inner_text()
        question = page.locator("#questions > li.question").first
        expect(question.locator(".criterion-text")).to_have_text(
            "Can you read every figure on the page?"
        )
        expect(page.locator(".viewer img, .viewer canvas").first).to_be_visible()
        if n % 2:  # by keyboard: 1 is the first label, Enter submits and opens the next
            page.keyboard.press("1")
            expect(question.locator(".save-state")).to_have_text("Saved")
            page.keyboard.press("Enter")
        else:
            question.locator("label.choice", has_text="yes").click()
            expect(question.locator(".save-state")).to_have_text("Saved")
            if n == 0:
                screenshot("files-rater", full_page=False)
            page.get_by_role("button", name="Submit & next").click()
        expect(page.locator("h1", has_text=title)).to_have_count(0)  # the next item, or done
    page.context.clear_cookies()

    # 4. The approver signs each; the label is the signed row.
    login("april", PASSWORD)
    for n in range(4):
        page.goto(f"{live_server.url}/p/{project.slug}/approvals/")
        page.get_by_role("link", name="Review & approve").first.click()
        expect(page.locator("main")).to_contain_text("$.labels['legible']")
        if n == 0:
            screenshot("files-approve")
        page.get_by_role("checkbox").check()
        page.get_by_label("Your password").fill(PASSWORD)
        page.get_by_role("button", name="Sign and approve").click()
        expect(page.locator(".message-success")).to_contain_text("ground truth v2")

    # 5. The export button names the .zip it downloads; verify_approval reads it as it is.
    page.goto(f"{live_server.url}/p/{project.slug}/")
    with page.expect_download() as download:
        page.get_by_role("button", name="References (.zip of .json)").click()
    saved = tmp_path / download.value.suggested_filename
    download.value.save_as(saved)
    assert saved.name == "receipts-to-label-ground-truth-reference.zip"
    archive = zipfile.ZipFile(saved)
    first = json.loads(archive.read(sorted(archive.namelist())[0]))
    assert first["rows"] == [{"path": "$.labels['legible']", "expected_value": "yes"}]
    capsys.readouterr()
    call_command("verify_approval", str(saved))
    assert "all 4 approval(s) verify" in capsys.readouterr().out
    assert io.BytesIO(saved.read_bytes()).getbuffer().nbytes > 0
