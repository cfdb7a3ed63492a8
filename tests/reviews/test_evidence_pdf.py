"""The PDF backend (the PyMuPDF adapter), PNG/WebP encoding and the demo evidence generators."""

from __future__ import annotations

import io
import struct
import zlib

import pytest
from PIL import Image

from reviews.demo import documents as demo_evidence
from reviews.evidence import encode, pdf
from tests import bad_evidence


def test_pdf_info(statement, tmp_path):
    info = pdf.pdf_info(statement)
    assert info == pdf.PdfInfo(3, False, False, False, ((612.0, 792.0),) * 3)
    path = tmp_path / "no-extension"
    path.write_bytes(statement)
    assert pdf.pdf_info(path).page_count == 3  # opened as PDF whatever the name
    assert pdf.pdf_info(statement, max_pages=2).page_sizes == ()


def test_locked_and_broken_pdfs():
    locked = pdf.pdf_info(bad_evidence.encrypted_pdf("pw"))
    assert locked.needs_password and locked.encrypted and locked.page_sizes == ()
    with pytest.raises(pdf.PdfPasswordError):
        pdf.page_words(bad_evidence.encrypted_pdf("pw"), 1)
    with pytest.raises(pdf.PdfOpenError):
        pdf.pdf_info(b"%PDF-1.4 nonsense")
    with pytest.raises(pdf.PdfOpenError):
        pdf.pdf_info(demo_evidence.receipt_png())


def test_zero_page_pdf_opens_with_no_pages():
    info = pdf.pdf_info(bad_evidence.zero_page_pdf())
    assert info.page_count == 0 and not info.repaired
    assert pdf.pdf_info(b"%PDF-1.7\n1 0 obj garbage").repaired


def test_page_errors(statement):
    with pytest.raises(pdf.PdfPageError, match="has no page 4"):
        pdf.page_size(statement, 4)
    with pytest.raises(pdf.PdfPageError):
        pdf.render_pixels(statement, 0, dpi=72)


def test_render_pixels_and_png_round_trip(statement):
    pixels = pdf.render_pixels(statement, 1, dpi=72)
    assert (pixels.width, pixels.height) == (612, 792)
    png = encode.encode_rgb(pixels, "png")
    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.mode == "RGB" and image.size == (612, 792)
    raw = bytes(pixels.samples)
    expected = b"".join(
        raw[y * pixels.stride : y * pixels.stride + 3 * pixels.width] for y in range(pixels.height)
    )
    assert image.tobytes() == expected  # lossless
    same_page = Image.open(io.BytesIO(pdf.mupdf_png(statement, 1, dpi=72))).convert("RGB")
    assert same_page.tobytes() == expected  # identical pixels to PyMuPDF's own PNG


def test_render_respects_max_pixels(statement):
    pixels = pdf.render_pixels(statement, 1, dpi=300, max_pixels=100_000)
    assert pixels.width * pixels.height <= 100_000
    assert abs(pixels.width / pixels.height - 612 / 792) < 0.01


def test_encode_rejects_bad_input():
    with pytest.raises(ValueError):
        encode.encode_rgb(encode.Pixels(2, 2, 6, b"\x00" * 12), "gif")
    with pytest.raises(ValueError):
        encode.encode_rgb(encode.Pixels(2, 2, 6, b"\x00" * 5), "png")
    webp = encode.encode_rgb(encode.Pixels(2, 2, 6, b"\xff" * 12), "webp")
    assert Image.open(io.BytesIO(webp)).size == (2, 2)
    tall = encode.encode_rgb(encode.Pixels(1, 20000, 3, b"\xff" * 60000), "webp")
    assert max(Image.open(io.BytesIO(tall)).size) <= encode.WEBP_MAX_SIDE


def test_words_match_text_bbox():
    op = pdf.DrawText(72, 100, "Hello NW-004512", size=11, font="hebo")
    data = pdf.build_pdf([[op]])
    words = pdf.page_words(data, 1)
    assert [w[4] for w in words] == ["Hello", "NW-004512"]
    x0, y0, x1, y1 = pdf.text_bbox(op)
    assert words[0][0] == pytest.approx(x0, abs=0.01)
    assert words[1][2] == pytest.approx(x1, abs=0.01)
    assert words[0][1] == pytest.approx(y0, abs=0.01) and words[0][3] == pytest.approx(y1, abs=0.01)
    assert pdf.search_quote(data, 1, "nw-004512") == [pytest.approx(words[1][:4])]
    assert pdf.search_quote(data, 1, "") == []


def test_build_pdf_is_deterministic_and_validates():
    ops = [[pdf.DrawText(10, 20, "x"), pdf.DrawBox(5, 5, 50, 50, fill=(1, 0, 0))]]
    assert pdf.build_pdf(ops) == pdf.build_pdf(ops)
    with pytest.raises(ValueError):
        pdf.build_pdf([[pdf.DrawText(10, 20, "x", font="comic")]])
    with pytest.raises(ValueError):
        pdf.build_pdf(ops, rotation=45)


# ---------------------------------------------------------------------------------------------
# Demo evidence


def test_statement_is_deterministic_and_realistic(statement):
    demo_evidence.statement_pdf.cache_clear()
    demo_evidence._statement_layout.cache_clear()
    assert demo_evidence.statement_pdf() == statement
    page1 = " ".join(w[4] for w in pdf.page_words(statement, 1))
    page3 = " ".join(w[4] for w in pdf.page_words(statement, 3))
    for text in ("Northwind Traders Ltd", "NW-004512", "USD", "01 Mar 2024 - 31 Mar 2024"):
        assert text in page1
    assert "Closing balance 12,480.55" in page3 and "Total due 1,200.00" in page3
    page2 = [w[4] for w in pdf.page_words(statement, 2)]
    assert page2.count("Mar") >= 19  # one row per transaction
    fields = {c.field: c for c in demo_evidence.statement_citations()}
    assert fields["account_number"].page == 1 and fields["total_due"].page == 3
    assert fields["closing_balance"].quote == "Closing balance 12,480.55"
    assert fields["total_due"].as_dict()["unit"] == "pt"


def test_receipt_is_deterministic_and_cited():
    data = demo_evidence.receipt_png()
    demo_evidence._receipt.cache_clear()
    assert demo_evidence.receipt_png() == data
    image = Image.open(io.BytesIO(data))
    assert image.size == (480, 760)
    total = demo_evidence.citation("receipt", "total")
    assert total.quote == "TOTAL 23.40" and total.unit == "px"
    x0, y0, x1, y1 = (int(v) for v in total.bbox)
    crop = image.convert("L").crop((x0, y0, x1, y1))
    assert crop.getextrema()[0] < 80  # dark text inside the cited box
    with pytest.raises(ValueError):
        demo_evidence.citations("invoice")


def test_bomb_png_is_a_complete_valid_png():
    data = bad_evidence.bomb_png(3000, 2000)
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    assert (width, height, depth, colour) == (3000, 2000, 1, 0)
    image = Image.open(io.BytesIO(data))
    image.load()  # small enough to decode here: proves the stream is well-formed
    assert image.size == (3000, 2000) and image.getextrema() == (0, 0)


def test_bomb_png_20k_stream_is_valid_with_bounded_memory():
    data = bad_evidence.bomb_png()
    assert struct.unpack(">II", data[16:24]) == (20000, 20000)
    length = struct.unpack(">I", data[33:37])[0]
    assert data[37:41] == b"IDAT"
    stream, total = data[41 : 41 + length], 0
    decoder = zlib.decompressobj()
    while stream:  # 1 MB at a time: never the whole 50 MB
        total += len(decoder.decompress(stream, 1 << 20))
        stream = decoder.unconsumed_tail
    assert decoder.eof and total == 20000 * (1 + 20000 // 8)
