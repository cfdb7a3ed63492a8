"""The viewer's evidence endpoints over the render cache: only the zoom levels are rendered, the
cache stays under EVIDENCE_CACHE_MAX_BYTES by evicting the least recently used, a hit never
renders, and image words come from OCR (or say they are not available)."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlencode

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse
from PIL import Image

from reviews import evidence
from reviews.demo import documents as demo_documents
from reviews.evidence import pdf
from reviews.models import CachedRender, ItemSource
from reviews.services.files import renders
from reviews.services.files.documents import StoredFiles, document_for_bytes

pytestmark = pytest.mark.django_db


def _boom(*args, **kwargs):
    raise AssertionError("must not be called")


@pytest.fixture
def viewer(client, project, rater, review_item, attach_evidence):
    item = review_item(project)
    pdf_document = attach_evidence(item)  # one 300 x 200 pt page
    receipt, _ = document_for_bytes(
        demo_documents.receipt_png(), name="receipt.png", written=StoredFiles()
    )
    ItemSource.objects.create(
        item=item, artifact_id="receipt", document=receipt, path="receipt.png", page=1
    )
    client.force_login(rater)

    def get(view: str, document=pdf_document, page: int = 1, **query):
        kwargs = {"slug": project.slug, "sha256": document.sha256, "page": page}
        return client.get(reverse(view, kwargs=kwargs) + "?" + urlencode(query))

    return SimpleNamespace(get=get, pdf=pdf_document, receipt=receipt)


def _stored() -> set[str]:
    root = Path(default_storage.location) / renders.PREFIX
    return {p.relative_to(default_storage.location).as_posix() for p in root.rglob("*.*")}


def test_every_zoom_level_renders_and_no_other_dpi_does(viewer):
    for dpi in evidence.ZOOM_DPIS:
        response = viewer.get("evidence_page", dpi=dpi)
        assert response.status_code == 200 and response["Content-Type"] == "image/png"
        image = Image.open(io.BytesIO(b"".join(response.streaming_content)))
        width, height = image.size  # MuPDF rounds the pixel box outwards
        assert abs(width - 300 * dpi / 72) < 1 and abs(height - 200 * dpi / 72) < 1
    for bad in ("110", "37", "400", "2400", "150.0", "-72", "abc", "1e3"):
        response = viewer.get("evidence_page", dpi=bad)
        assert response.status_code == 400
        assert b"dpi must be one of the zoom levels: 36, 72, 100, 150, 200, 300" in response.content
    assert viewer.get("evidence_page", format="gif").status_code == 400
    assert viewer.get("evidence_page").status_code == 200  # no dpi: the default level, 150
    names = set(CachedRender.objects.values_list("name", flat=True))
    assert len(names) == len(evidence.ZOOM_DPIS) and names == _stored()


def test_a_cache_hit_reads_storage_and_never_renders(viewer, monkeypatch):
    first = b"".join(viewer.get("evidence_page", dpi=100, format="webp").streaming_content)
    monkeypatch.setattr(evidence, "render_page", _boom)
    monkeypatch.setattr(pdf, "render_pixels", _boom)
    again = viewer.get("evidence_page", dpi=100, format="webp")
    assert b"".join(again.streaming_content) == first and first[8:12] == b"WEBP"


def test_the_cache_evicts_the_least_recently_used_beyond_its_bound(viewer, settings, monkeypatch):
    monkeypatch.setattr(renders, "TOUCH_EVERY", timedelta(0))  # record every use
    path = viewer.pdf.file.path
    size = {dpi: len(evidence.render_page(path, 1, dpi=dpi)) for dpi in (36, 72, 100, 150)}
    settings.EVIDENCE_CACHE_MAX_BYTES = size[36] + size[72] + size[100]
    for dpi in (36, 72, 100):
        viewer.get("evidence_page", dpi=dpi)
    assert CachedRender.objects.count() == 3  # exactly at the bound: nothing evicted
    viewer.get("evidence_page", dpi=36)  # used again: now the most recent
    viewer.get("evidence_page", dpi=150)

    # Least recently used first: 72, then 100, then 36, until the rest fits.
    kept = [72, 100, 36, 150]
    while sum(size[dpi] for dpi in kept) > settings.EVIDENCE_CACHE_MAX_BYTES:
        kept.pop(0)
    names = {n.rsplit("-", 1)[1] for n in CachedRender.objects.values_list("name", flat=True)}
    assert names == {f"{dpi}.png" for dpi in kept} and "72.png" not in names
    assert {n.rsplit("-", 1)[1] for n in _stored()} == names  # files and index agree
    assert sum(CachedRender.objects.values_list("size_bytes", flat=True)) <= (
        settings.EVIDENCE_CACHE_MAX_BYTES
    )


def test_a_file_evicted_by_another_process_is_rendered_again(viewer):
    viewer.get("evidence_page", dpi=72)
    (name,) = CachedRender.objects.values_list("name", flat=True)
    default_storage.delete(name)  # the row is still there
    response = viewer.get("evidence_page", dpi=72)
    assert response.status_code == 200 and Image.open(io.BytesIO(response.getvalue())).size
    assert default_storage.exists(name)


def test_a_hit_records_its_use_at_most_once_per_interval(viewer):
    viewer.get("evidence_page", dpi=72)
    row = CachedRender.objects.get()
    CachedRender.objects.update(used_at=row.used_at - renders.TOUCH_EVERY * 2)
    viewer.get("evidence_page", dpi=72)
    touched = CachedRender.objects.get().used_at
    assert touched > row.used_at
    viewer.get("evidence_page", dpi=72)
    assert CachedRender.objects.get().used_at == touched  # within the interval: no write


def test_image_words_say_they_are_unavailable_without_ocr(viewer, monkeypatch):
    monkeypatch.setattr(pdf, "tessdata", lambda: None)
    response = viewer.get("evidence_words", document=viewer.receipt)
    assert response.json()["words_available"] is False and response.json()["words"] == []
    assert response["Cache-Control"] == "private, no-cache"  # ask again once OCR is installed
    located = viewer.get("evidence_locate", document=viewer.receipt, q="TOTAL 23.40")
    assert located.json()["boxes"] == []
    pdf_words = viewer.get("evidence_words").json()
    assert pdf_words["words_available"] is True and pdf_words["words"]


@pytest.mark.skipif(not evidence.ocr_available(), reason="Tesseract is not installed")
def test_image_words_come_from_ocr_once_then_from_the_cache(viewer, monkeypatch):
    calls = []
    real = pdf.ocr_words
    monkeypatch.setattr(pdf, "ocr_words", lambda *a, **k: calls.append(1) or real(*a, **k))
    first = viewer.get("evidence_words", document=viewer.receipt).json()
    assert first["words_available"] is True
    assert {"TOTAL", "23.40"} <= {w["text"] for w in first["words"]}
    boxes = viewer.get("evidence_locate", document=viewer.receipt, q="total 23.40").json()["boxes"]
    assert len(boxes) == 1
    assert viewer.get("evidence_words", document=viewer.receipt).json() == first
    assert len(calls) == 1  # OCR ran once; the rest came from the cache
    assert CachedRender.objects.filter(name__endswith="p1.words.json").count() == 1
