"""Evidence service: identification by content, refusals, limits, and its public interface.

Renders, words and quotes are in test_evidence_pages.py. No database and no Django settings:
every call passes its limits and cache folder explicitly.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from pathlib import Path

import pytest
from PIL import Image

from reviews import evidence
from reviews.demo import documents as demo_evidence
from reviews.evidence import EvidenceError, identify, images, limits, pdf
from tests import bad_evidence
from tests.helpers import evidence_refusal

MB = 1024 * 1024
LIMITS = {"max_bytes": 50 * MB, "max_pages": 500, "max_pixels": 50_000_000}


def _boom(*args, **kwargs):
    raise AssertionError("must not be called")


def _image_bytes(fmt: str, **save) -> bytes:
    out = io.BytesIO()
    Image.open(io.BytesIO(demo_evidence.receipt_png())).save(out, fmt, **save)
    return out.getvalue()


def inspect(data, name="file", **limits):
    return evidence.inspect_evidence(data, name=name, **{**LIMITS, **limits})


# ---------------------------------------------------------------------------------------------
# Identification by content


def test_pdf_named_png_is_a_pdf(statement):
    info = inspect(statement, name="scan.png")
    assert info.kind == "pdf"
    assert info.mime == "application/pdf"
    assert info.extension == ".pdf"
    assert info.page_count == 3
    assert info.page_sizes == ((612.0, 792.0),) * 3
    assert info.sha256 == hashlib.sha256(statement).hexdigest()
    assert info.size_bytes == len(statement)
    assert info.width is None and not info.encrypted


def test_png_named_pdf_is_an_image(receipt):
    info = inspect(receipt, name="statement.pdf")
    assert (info.kind, info.mime, info.format) == ("image", "image/png", "PNG")
    assert (info.width, info.height, info.page_count) == (480, 760, 1)
    assert info.page_sizes == ((480.0, 760.0),)
    assert info.as_dict()["page_sizes"] == [[480.0, 760.0]]


@pytest.mark.parametrize(
    ("fmt", "save", "mime"),
    [
        ("JPEG", {"quality": 85}, "image/jpeg"),
        ("WEBP", {"quality": 80}, "image/webp"),
        ("WEBP", {"lossless": True}, "image/webp"),
        ("TIFF", {"compression": "tiff_lzw"}, "image/tiff"),
    ],
)
def test_other_image_formats_by_content(fmt, save, mime):
    info = inspect(_image_bytes(fmt, **save), name="upload.bin")
    assert info.kind == "image" and info.mime == mime
    assert (info.width, info.height) == (480, 760)


def test_multipage_tiff_has_a_page_per_frame():
    small = Image.new("RGB", (40, 30), "white")
    out = io.BytesIO()
    small.save(out, "TIFF", save_all=True, append_images=[Image.new("L", (20, 50), 128)])
    info = inspect(out.getvalue(), name="scan.tif")
    assert info.page_count == 2
    assert info.page_sizes == ((40.0, 30.0), (20.0, 50.0))


def test_exif_orientation_is_applied_to_sizes():
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees when displayed
    out = io.BytesIO()
    Image.new("RGB", (200, 100), "white").save(out, "JPEG", exif=exif)
    info = inspect(out.getvalue(), name="phone.jpg")
    assert (info.width, info.height) == (100, 200)


def test_pdf_with_only_an_owner_password_is_accepted():
    plain = pdf.build_pdf([[pdf.DrawText(72, 72, "readable")]])
    data = pdf.encrypt_pdf(plain, user_password="", owner_password="owner-only")
    info = inspect(data, name="restricted.pdf")
    assert info.encrypted and info.page_count == 1


@pytest.mark.parametrize(
    ("fmt", "save"),
    [
        ("PNG", {}),
        ("JPEG", {}),
        ("JPEG", {"progressive": True}),
        ("WEBP", {"quality": 80}),
        ("WEBP", {"lossless": True}),
        ("WEBP", {"exif": Image.Exif()}),
    ],
)
def test_header_dimensions_without_decoding(fmt, save):
    data = _image_bytes(fmt, **save)
    assert images.header_dimensions(data, fmt) == (480, 760)
    assert images.header_dimensions(data[:20], fmt) is None


def test_text_file_named_pdf_is_refused():
    with pytest.raises(EvidenceError) as caught:
        inspect(b"Invoice total: 23.40\nThanks!\n", name="invoice.pdf")
    assert caught.value.code == "unknown_type"
    assert '"invoice.pdf"' in str(caught.value)
    assert "not a PDF" in str(caught.value)


def test_unsupported_image_format_is_refused():
    gif = io.BytesIO()
    Image.new("P", (10, 10)).save(gif, "GIF")
    with pytest.raises(EvidenceError, match="not a PDF or a PNG, JPEG, TIFF or WebP") as caught:
        inspect(gif.getvalue(), name="anim.gif")
    assert caught.value.code == "unknown_type"


# ---------------------------------------------------------------------------------------------
# Refusals: each has its own code and message, naming the file


REFUSALS = [
    ("empty.pdf", lambda: b"", "empty", "is empty"),
    ("notes.pdf", lambda: b"just some text", "unknown_type", "not a PDF"),
    ("broken.pdf", lambda: b"%PDF-1.7\n%\xe2\xe3\nxref\n", "corrupt_pdf", "damaged or incomplete"),
    ("mangled.pdf", lambda: b"%PDF-1.7\n1 0 obj garbage", "corrupt_pdf", "no readable pages"),
    ("locked.pdf", bad_evidence.encrypted_pdf, "encrypted", "is password-protected"),
    ("hollow.pdf", bad_evidence.zero_page_pdf, "no_pages", "is a PDF with no pages"),
    ("half.png", bad_evidence.truncated_png, "corrupt_image", "truncated or damaged PNG"),
    ("bomb.png", bad_evidence.bomb_png, "too_many_pixels", "20000 x 20000 pixels"),
]


@pytest.mark.parametrize(("name", "make", "code", "phrase"), REFUSALS)
def test_each_refusal_names_the_file(name, make, code, phrase):
    with pytest.raises(EvidenceError) as caught:
        inspect(make(), name=name)
    err = caught.value
    assert err.code == code
    assert err.name == name
    assert str(err).startswith(f'"{name}" ')
    assert phrase in str(err)


def test_refusal_messages_are_distinct():
    messages = set()
    for _, make, _, _ in REFUSALS:
        with pytest.raises(EvidenceError) as caught:
            inspect(make(), name="same-name")
        messages.add(str(caught.value))
    messages.add(
        str(evidence_refusal(lambda: inspect(b"%PDF-" + bytes(60 * MB), name="same-name")))
    )
    assert len(messages) == len(REFUSALS) + 1


def test_too_many_pages(statement):
    err = evidence_refusal(lambda: inspect(statement, name="long.pdf", max_pages=2))
    assert err.code == "too_many_pages" and "3 (limit 2)" in str(err)


def test_truncated_jpeg_is_refused():
    data = _image_bytes("JPEG", quality=90)
    err = evidence_refusal(lambda: inspect(data[: len(data) * 2 // 3], name="cut.jpg"))
    assert err.code == "corrupt_image" and "JPEG" in str(err)


def test_file_names_are_sanitised_in_messages():
    err = evidence_refusal(lambda: inspect(b"x", name="C:\\up/loads/ev\x1b[31mil\u202egpj.pdf"))
    message = str(err)
    assert message.startswith('"ev[31milgpj.pdf" ')
    assert "\x1b" not in message and "\u202e" not in message and "loads" not in message
    long = evidence_refusal(lambda: inspect(b"x", name="a" * 500 + ".pdf"))
    assert len(str(long)) < 250


# ---------------------------------------------------------------------------------------------
# Size and pixel limits, checked before the work


def test_60mb_input_refused_by_size_without_processing(monkeypatch):
    big = b"%PDF-1.7\n" + bytes(60 * MB)
    monkeypatch.setattr(pdf, "pdf_info", _boom)
    monkeypatch.setattr(Image, "open", _boom)
    monkeypatch.setattr(identify.hashlib, "sha256", _boom)
    # The patched functions prove no processing; how fast that is, is `python -m bench evidence`.
    err = evidence_refusal(
        lambda: evidence.inspect_evidence(big, name="huge.pdf", max_bytes=50 * MB)
    )
    assert err.code == "too_large"
    assert str(err) == '"huge.pdf" is too large: 60.0 MB (limit 50.0 MB)'


def test_upload_with_known_size_is_refused_before_reading():
    class Upload(io.RawIOBase):  # like Django's UploadedFile: has .size
        size = 60 * MB

        def readable(self):
            return True

        def read(self, *args):
            raise AssertionError("must not read")

    err = evidence_refusal(lambda: inspect(Upload(), name="upload.pdf"))
    assert err.code == "too_large" and "60.0 MB" in str(err)


def test_path_is_refused_by_stat_before_reading(tmp_path, monkeypatch):
    sparse = tmp_path / "sparse.pdf"
    with open(sparse, "wb") as f:
        f.truncate(60 * MB)  # sparse: no 60 MB written to disk
    monkeypatch.setattr(identify, "_read_stream", _boom)
    err = evidence_refusal(lambda: inspect(sparse, name="sparse.pdf"))
    assert err.code == "too_large"


def test_stream_of_unknown_size_stops_reading_past_the_limit():
    class Endless(io.RawIOBase):
        served = 0

        def readable(self):
            return True

        def seekable(self):
            return False

        def read(self, n=-1):
            n = 1 << 16 if n is None or n < 0 else n
            self.served += n
            return b"%" * n

    stream = Endless()
    err = evidence_refusal(lambda: inspect(stream, name="pipe.pdf", max_bytes=2 * MB))
    assert err.code == "too_large" and "more than 2.0 MB" in str(err)
    assert stream.served <= 2 * MB + 1


def test_stream_position_is_restored(statement):
    upload = io.BytesIO(statement)
    assert inspect(upload, name="s.pdf").page_count == 3
    assert upload.tell() == 0


def test_20k_bomb_refused_without_decoding(monkeypatch):
    bomb = bad_evidence.bomb_png(20000, 20000)
    assert len(bomb) < 200_000
    monkeypatch.setattr(Image.Image, "load", _boom)
    monkeypatch.setattr(Image, "open", _boom)  # refused from the header, before Pillow
    err = evidence_refusal(lambda: inspect(bomb, name="bomb.png"))
    assert err.code == "too_many_pixels"
    assert "400.0 megapixels (limit 50.0)" in str(err)


def test_own_pixel_limit_below_pillows(monkeypatch):
    # 8000 x 8000 = 64 MP: under Pillow's 89.5 MP guard, over our 50 MP default.
    monkeypatch.setattr(Image.Image, "load", _boom)
    err = evidence_refusal(lambda: inspect(bad_evidence.bomb_png(8000, 8000), name="big.png"))
    assert err.code == "too_many_pixels" and "8000 x 8000" in str(err)


def test_pillow_guard_is_an_error_too(monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100_000)
    err = evidence_refusal(lambda: inspect(demo_evidence.receipt_png(), name="r.png"))
    assert err.code == "too_many_pixels" and "limit 0.1" in str(err)


@pytest.mark.parametrize("fmt", ["JPEG", "WEBP", "TIFF"])
def test_pixel_limit_applies_to_every_format_before_decoding(fmt, monkeypatch):
    data = _image_bytes(fmt)
    monkeypatch.setattr(Image.Image, "load", _boom)
    err = evidence_refusal(lambda: inspect(data, name=f"x.{fmt.lower()}", max_pixels=100_000))
    assert err.code == "too_many_pixels" and "480 x 760" in str(err)


# ---------------------------------------------------------------------------------------------
# Settings are optional


def test_defaults_without_django_settings(monkeypatch, statement):
    monkeypatch.setattr(limits, "setting", lambda name, default: default)
    assert evidence.inspect_evidence(statement, name="s.pdf").page_count == 3


_PYMUPDF_IMPORT = re.compile(r"^\s*(import|from)\s+(pymupdf|fitz)\b", re.MULTILINE)


def test_only_the_pdf_backend_imports_pymupdf():
    root = Path(evidence.__file__).resolve().parents[2]
    backend = Path(pdf.__file__).resolve()
    offenders = []
    for folder in ("reviews", "judging", "evalsite", "bench", "tests"):
        for file in (root / folder).rglob("*.py"):
            text = file.read_text(encoding="utf-8", errors="replace")
            if file.resolve() != backend and _PYMUPDF_IMPORT.search(text):
                offenders.append(os.fspath(file.relative_to(root)))
    assert offenders == []
    assert _PYMUPDF_IMPORT.search(backend.read_text(encoding="utf-8"))  # the check can fail


_SUBMODULE_IMPORT = re.compile(
    r"^\s*(from\s+reviews\.evidence\.\w+\s+import|import\s+reviews\.evidence\.)", re.MULTILINE
)
_PRIVATE_NAME_IMPORT = re.compile(
    r"^from\s+reviews\.evidence\S*\s+import\s+(\([^)]*\b_\w+[^)]*\)|[^\n(]*\b_\w+)", re.MULTILINE
)


def test_the_package_is_used_through_its_public_interface():
    """Production code outside reviews/evidence/ imports from ``reviews.evidence`` only, and no
    module (inside the package either) imports another's private names."""
    root = Path(evidence.__file__).resolve().parents[2]
    package = Path(evidence.__file__).resolve().parent
    outside, private = [], []
    for folder in ("reviews", "judging", "evalsite"):
        for file in (root / folder).rglob("*.py"):
            text = file.read_text(encoding="utf-8", errors="replace")
            if package not in file.resolve().parents and _SUBMODULE_IMPORT.search(text):
                outside.append(os.fspath(file.relative_to(root)))
            if _PRIVATE_NAME_IMPORT.search(text):
                private.append(os.fspath(file.relative_to(root)))
    assert outside == [] and private == []
    assert _PRIVATE_NAME_IMPORT.search("from reviews.evidence.images import (\n    _oriented,\n)")
