"""Words on image evidence: read by OCR when Tesseract is installed (click-a-word works on the
receipt), and said to be unavailable when it is not (instead of "click a word on the page")."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from reviews import evidence
from reviews.demo import files as demo_files
from reviews.evidence import pdf
from reviews.models import Assignment, AssignmentStatus, Project, Role
from reviews.services.imports.pipeline import file_import
from tests.factories import PASSWORD, member

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def receipt_review(tmp_path, page, live_server, login):
    """A rater on the review page of the demo receipt (a PNG), at 1280 x 800."""
    project = Project.objects.create(slug="ocr-ui", name="OCR UI", blind=False)
    folder = tmp_path / "bundle"
    demo_files.write_demo_reviews(folder)
    path = folder / "receipt.jsonl"
    path.write_text(json.dumps(demo_files.demo_cases()[4]))
    file_import(actor=None, project=project, path=path, format="review")
    item = project.items.get()
    rater = member(project, Role.RATER, username="ocr")
    Assignment.objects.create(
        item=item,
        rater=rater,
        status=AssignmentStatus.ACTIVE,
        lease_expires_at=timezone.now() + timedelta(hours=1),
    )
    page.set_viewport_size({"width": 1280, "height": 800})
    login("ocr", PASSWORD)

    def open_page():
        page.goto(f"{live_server.url}/p/{project.slug}/items/{item.pk}/review/")
        expect(page.locator("#page-image")).to_have_js_property("naturalWidth", 480)

    return open_page


def test_without_ocr_the_value_box_says_words_are_not_available(page, receipt_review, monkeypatch):
    monkeypatch.setattr(pdf, "tessdata", lambda: None)  # the live server runs in this process
    receipt_review()
    value = page.locator(".value-input").first
    expect(value).to_have_attribute(
        "placeholder", "Type a value (words are not available on this image)"
    )
    expect(page.locator("#page-overlay .word")).to_have_count(0)


@pytest.mark.skipif(not evidence.ocr_available(), reason="Tesseract is not installed")
def test_with_ocr_a_word_on_the_image_fills_the_value_box(page, receipt_review, screenshot):
    receipt_review()
    word = page.locator("#page-overlay .word[data-text='23.40']").last  # subtotal, then total
    expect(word).to_be_attached(timeout=30_000)  # OCR of a fresh page takes seconds
    value = page.locator(".value-input").first
    expect(value).to_have_attribute("placeholder", "Type a value (or click a word on the page)")
    value.focus()
    word.click()
    expect(value).to_have_value("23.40")
    screenshot("review-image-ocr-words", full_page=False)
