"""Evidence pages: renders at the zoom levels, and the words and quotes found on a page.

Identification, refusals and limits are in test_evidence.py; like it, no database and no Django
settings.
"""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import pytest
from PIL import Image

from reviews import evidence
from reviews.demo import documents as demo_evidence
from reviews.evidence import pdf
from tests.helpers import evidence_refusal


@pytest.fixture
def statement_file(tmp_path, statement) -> tuple[Path, str]:
    path = tmp_path / "evidence" / "blob"  # stored without an extension, as uploads are
    path.parent.mkdir()
    path.write_bytes(statement)
    return path, hashlib.sha256(statement).hexdigest()


@pytest.fixture
def receipt_file(tmp_path, receipt) -> tuple[Path, str]:
    path = tmp_path / "receipt.png"
    path.write_bytes(receipt)
    return path, hashlib.sha256(receipt).hexdigest()


# ---------------------------------------------------------------------------------------------
# Rendering at the zoom levels (the cache is reviews.services.files.renders, tested in test_renders)


def _png(data: bytes) -> Image.Image:
    return Image.open(io.BytesIO(data))


def test_render_pdf_page_dimensions_match_dpi(statement_file):
    path, _ = statement_file
    with _png(evidence.render_page(path, 1, dpi=150)) as image:
        assert image.format == "PNG" and image.mode == "RGB"
        assert image.size == (1275, 1650)  # 612 x 792 pt * 150 / 72
    assert _png(evidence.render_page(path, 3, dpi=72)).size == (612, 792)
    assert _png(evidence.render_page(path.read_bytes(), 2, dpi=36)).size == (306, 396)


@pytest.mark.parametrize("dpi", [35, 37, 110, 149.6, 150.0, "150", 400, True, None])
def test_only_the_zoom_levels_are_rendered(statement_file, dpi):
    path, _ = statement_file
    with pytest.raises(ValueError, match="not a zoom level"):
        evidence.render_page(path, 1, dpi=dpi)
    with pytest.raises(ValueError, match="not a zoom level"):
        evidence.render_key("a" * 64, 1, dpi, "png")


def test_render_key_names_a_render_by_content():
    sha = "ab" + "c" * 62
    assert evidence.render_key(sha, 3, 150, "webp") == f"ab/{sha}/p3-150.webp"
    with pytest.raises(ValueError, match="sha256"):
        evidence.render_key("../../etc/passwd", 1, 150, "png")
    with pytest.raises(ValueError, match="fmt"):
        evidence.render_key(sha, 1, 150, "gif")
    with pytest.raises(ValueError, match="page"):
        evidence.render_key(sha, 0, 150, "png")


def test_webp_render(statement_file):
    path, _ = statement_file
    out = evidence.render_page(path, 2, dpi=72, fmt="WebP")
    assert out[8:12] == b"WEBP"
    assert _png(out).size == (612, 792)


def test_render_refuses_bad_formats_and_pages(statement_file):
    path, _ = statement_file
    with pytest.raises(ValueError, match="fmt"):
        evidence.render_page(path, 1, fmt="gif")
    err = evidence_refusal(lambda: evidence.render_page(path, 4, name="s.pdf"))
    assert err.code == "no_such_page" and str(err) == '"s.pdf" has no page 4 (it has 3)'


def test_image_render_never_upscales_and_downscales_thumbnails(receipt_file):
    path, _ = receipt_file
    full = _png(evidence.render_page(path, 1, dpi=150))
    thumb = _png(evidence.render_page(path, 1, dpi=36))
    assert full.size == (480, 760)
    assert thumb.size == (240, 380)
    original = Image.open(path).convert("RGB")
    assert full.convert("RGB").tobytes() == original.tobytes()  # lossless PNG


def test_image_render_applies_exif_orientation_and_flattens_alpha(tmp_path):
    exif = Image.Exif()
    exif[0x0112] = 6
    jpeg = tmp_path / "phone.jpg"
    Image.new("RGB", (400, 200), "navy").save(jpeg, "JPEG", exif=exif)
    assert _png(evidence.render_page(jpeg, 1, dpi=36)).size == (100, 200)
    assert evidence.page_size(jpeg, 1) == (200.0, 400.0)

    clear = tmp_path / "clear.png"
    Image.new("RGBA", (10, 10), (0, 0, 0, 0)).save(clear)
    assert _png(evidence.render_page(clear, 1, dpi=72)).getpixel((5, 5)) == (255, 255, 255)


def test_tiff_pages_render(tmp_path):
    tif = tmp_path / "scan.tif"
    Image.new("RGB", (40, 30), "red").save(
        tif, "TIFF", save_all=True, append_images=[Image.new("L", (20, 50), 0)]
    )
    second = _png(evidence.render_page(tif, 2, dpi=72))
    assert second.size == (20, 50)
    assert second.getpixel((1, 1)) == (0, 0, 0)
    err = evidence_refusal(lambda: evidence.render_page(tif, 3))
    assert err.code == "no_such_page"


# ---------------------------------------------------------------------------------------------
# Words and quotes


def test_words_on_page_one_include_the_account_number(statement_file):
    path, _ = statement_file
    words = evidence.page_words(path, 1)
    texts = [w.text for w in words]
    assert "NW-004512" in texts and "Northwind" in texts and "USD" in texts
    word = words[texts.index("NW-004512")]
    expected = demo_evidence.citation("statement", "account_number").bbox
    assert word.bbox == pytest.approx(list(expected), abs=0.5)
    width, height = evidence.page_size(path, 1)
    assert (width, height) == (612.0, 792.0)
    assert all(0 <= w.x0 < w.x1 <= width and 0 <= w.y0 < w.y1 <= height for w in words)
    assert word.as_dict() == {"text": "NW-004512", "bbox": [round(v, 2) for v in word.bbox]}


def test_locate_total_due_on_page_three(statement_file):
    path, _ = statement_file
    boxes = evidence.locate_quote(path, 3, "Total due 1,200.00")
    assert boxes
    union = [min(b[0] for b in boxes), min(b[1] for b in boxes),
             max(b[2] for b in boxes), max(b[3] for b in boxes)]  # fmt: skip
    expected = demo_evidence.citation("statement", "total_due").bbox
    assert union == pytest.approx(list(expected), abs=0.5)
    assert evidence.locate_quote(path, 3, "  Total\n due\u00a0 1,200.00 ") == boxes
    assert evidence.locate_quote(path, 2, "Total due 1,200.00") == []
    assert evidence.locate_quote(path, 3, "   ") == []


@pytest.mark.parametrize("citation", demo_evidence.statement_citations(), ids=lambda c: c.field)
def test_every_statement_citation_is_found_where_the_layout_put_it(statement_file, citation):
    path, _ = statement_file
    boxes = evidence.locate_quote(path, citation.page, citation.quote)
    assert any(
        box[0] >= citation.bbox[0] - 0.5
        and box[2] <= citation.bbox[2] + 0.5
        and abs(box[1] - citation.bbox[1]) < 0.5
        for box in boxes
    )


def test_word_fallback_tolerates_typographic_variants(statement_file, monkeypatch):
    path, _ = statement_file
    monkeypatch.setattr(pdf, "search_quote", lambda *a: [])  # force the fallback
    boxes = evidence.locate_quote(path, 2, "incoming transfer \u2013 margie\u2019s travel")
    assert len(boxes) == 1
    x0, y0, x1, y1 = boxes[0]
    assert x1 - x0 > 100 and y1 - y0 < 15


def test_images_have_no_words_without_ocr(receipt_file, monkeypatch):
    path, _ = receipt_file
    monkeypatch.setattr(pdf, "tessdata", lambda: None)  # as on a machine without Tesseract
    assert not evidence.ocr_available()
    assert evidence.page_words(path, 1) == []
    assert evidence.locate_quote(path, 1, "TOTAL 23.40") == []
    assert evidence.page_size(path, 1) == (480.0, 760.0)


needs_ocr = pytest.mark.skipif(
    not evidence.ocr_available(),
    reason="Tesseract is not installed (apt-get install tesseract-ocr)",
)


@needs_ocr
def test_image_words_come_from_ocr_in_page_pixels(receipt_file):
    path, _ = receipt_file
    words = evidence.page_words(path, 1)
    texts = [w.text for w in words]
    assert "TOTAL" in texts and "23.40" in texts
    for word in words:
        assert 0 <= word.x0 < word.x1 <= 480 and 0 <= word.y0 < word.y1 <= 760
    expected = demo_evidence.citation("receipt", "total").bbox  # pixels, from the layout
    (box,) = evidence.find_quote(words, "total 23.40")
    assert box[0] >= expected[0] - 4 and box[2] <= expected[2] + 4
    assert abs(box[1] - expected[1]) < 12 and abs(box[3] - expected[3]) < 12
    assert evidence.locate_quote(path, 1, "TOTAL 23.40") == [box]
    assert evidence.find_quote(words, "no such words here") == []


def test_words_on_missing_page(statement_file):
    path, _ = statement_file
    assert evidence_refusal(lambda: evidence.page_words(path, 9)).code == "no_such_page"
    assert evidence_refusal(lambda: evidence.locate_quote(path, 0, "x")).code == "no_such_page"


def test_rotated_page_boxes_line_up_with_the_render(tmp_path):
    op = pdf.DrawText(100, 150, "ROTATED", size=20)
    data = pdf.build_pdf([[op]], page_size=(300, 400), rotation=90)
    path = tmp_path / "rotated.pdf"
    path.write_bytes(data)
    assert evidence.page_size(path, 1) == (400.0, 300.0)
    (x0, y0, x1, y1), = evidence.locate_quote(path, 1, "ROTATED")  # fmt: skip
    assert y1 - y0 > x1 - x0  # the word now runs downwards
    image = _png(evidence.render_page(path, 1, dpi=72)).convert("L")
    assert image.size == (400, 300)
    ink = image.point(lambda v: 255 if v < 128 else 0).getbbox()
    assert ink is not None
    assert ink[0] >= x0 - 1 and ink[1] >= y0 - 1 and ink[2] <= x1 + 1 and ink[3] <= y1 + 1
