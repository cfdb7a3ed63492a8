"""Evidence files: identify and check uploads, render pages (cached on disk), find words.

No model, no database. Django is optional: a limit or folder not passed in is read lazily from
settings (``EVIDENCE_MAX_BYTES``, ``EVIDENCE_MAX_PAGES``, ``EVIDENCE_MAX_PIXELS``,
``EVIDENCE_CACHE_DIR``), falling back to the module defaults when Django is not configured.
Every function works without settings when given explicit parameters.

Public API::

    inspect_evidence(data, *, name, max_bytes=None, max_pages=None, max_pixels=None)
        -> EvidenceInfo                         # raises EvidenceError(name, reason)
    render_page(source_path, sha256, page=1, *, dpi=150, fmt="png", cache_dir=None)
        -> Path                                 # cache_dir/ab/abcdef.../p3-150.png
    page_size(source_path, page) -> (width, height)
    page_words(source_path, page) -> list[Word]
    locate_quote(source_path, page, quote) -> list[[x0, y0, x1, y1]]

Identification is by content (magic bytes, then a real open), never by file name: PDF, PNG,
JPEG, TIFF and WebP. File names and PDF text are untrusted; names are sanitised before they
appear in messages, and nothing is ever passed to a shell.

Coordinates: points (1/72 inch), origin top-left of the page as displayed (CropBox, /Rotate
applied), boxes ``[x0, y0, x1, y1]``. An image is treated as a page whose size in points is its
size in pixels (after EXIF orientation), so image boxes are pixels and the same browser formula
works for both: ``scale = rendered_image_width / page_width``.

PDF work goes through ``reviews.services.renderer`` (the only PyMuPDF importer); images are
handled with Pillow here.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import struct
from pathlib import Path
from typing import BinaryIO

from reviews.services import renderer
from reviews.services.evidence_types import (  # re-exported: callers import them from here
    EvidenceError,
    EvidenceInfo,
)

# ---------------------------------------------------------------------------------------------
# Limits and defaults

DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_PAGES = 500
# Decoded pixels allowed for an image (per page/frame). 50 MP is an A4 scan at ~720 dpi and
# ~150 MB as RGB; Pillow's own guard (Image.MAX_IMAGE_PIXELS, 89.5 MP by default) still applies
# on top: the effective limit is the smaller of the two.
DEFAULT_MAX_PIXELS = 50_000_000
# dpi is clamped to MIN_DPI..MAX_DPI and rounded to a whole number (so 150.4 and 150 share one
# cache entry). Viewers should request a handful of zoom steps, e.g. DPI_STEPS.
MIN_DPI = 36
MAX_DPI = 400
DEFAULT_DPI = 150
DPI_STEPS = (72, 100, 150, 200, 300)
# Upper bound on a rendered bitmap: a (legal) 200 x 200 inch PDF page at 400 dpi would be 6.4
# gigapixels. Beyond this the zoom is reduced to fit; boxes still scale by image/page width.
MAX_RENDER_PIXELS = 40_000_000
FORMATS = ("png", "webp")

_IMAGE_MIME = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "TIFF": "image/tiff",
    "WEBP": "image/webp",
}
_EXTENSION = {"PDF": ".pdf", "PNG": ".png", "JPEG": ".jpg", "TIFF": ".tif", "WEBP": ".webp"}
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _setting(name: str, default):
    """``settings.<name>`` if Django is configured, else ``default`` (read lazily)."""
    try:
        from django.conf import settings

        return getattr(settings, name, default)
    except Exception:  # Django not installed or settings not configured
        return default


def default_cache_dir() -> Path:
    """``settings.EVIDENCE_CACHE_DIR``, else ``MEDIA_ROOT/renders``."""
    configured = _setting("EVIDENCE_CACHE_DIR", None)
    if configured:
        return Path(configured)
    media_root = _setting("MEDIA_ROOT", None)
    if media_root:
        return Path(media_root) / "renders"
    raise RuntimeError(
        "No render cache folder: pass cache_dir= or set EVIDENCE_CACHE_DIR / MEDIA_ROOT"
    )


# ---------------------------------------------------------------------------------------------
# Identification


def _sniff(head: bytes) -> str | None:
    """The format named by the first bytes: PDF, PNG, JPEG, TIFF, WEBP, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "TIFF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    # PDF readers accept a header anywhere in the first 1024 bytes.
    if b"%PDF-" in head[:1024]:
        return "PDF"
    return None


def _sniff_file(path: Path) -> str | None:
    with open(path, "rb") as f:
        return _sniff(f.read(1024))


def _header_dimensions(data: bytes, fmt: str) -> tuple[int, int] | None:
    """Width/height from the file header without decoding (None if not found here).

    Done before Pillow sees the data so a bomb is refused by *our* limit, cheaply, with its
    size in the message. TIFF is left to Pillow (Image.open reads only the header).
    """
    try:
        if fmt == "PNG" and data[12:16] == b"IHDR":
            return struct.unpack(">II", data[16:24])
        if fmt == "WEBP" and len(data) >= 30:
            chunk = data[12:16]
            if chunk == b"VP8 ":
                w, h = struct.unpack("<HH", data[26:30])
                return w & 0x3FFF, h & 0x3FFF
            if chunk == b"VP8L":
                bits = int.from_bytes(data[21:25], "little")
                return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
            if chunk == b"VP8X":
                w = int.from_bytes(data[24:27], "little") + 1
                h = int.from_bytes(data[27:30], "little") + 1
                return w, h
        if fmt == "JPEG":
            i = 2
            while i + 9 < len(data) and i < 1 << 20:
                if data[i] != 0xFF:
                    return None
                marker = data[i + 1]
                if marker == 0xFF:  # fill byte
                    i += 1
                    continue
                if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                    i += 2
                    continue
                length = struct.unpack(">H", data[i + 2 : i + 4])[0]
                if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                    h, w = struct.unpack(">HH", data[i + 5 : i + 9])
                    return w, h
                i += 2 + length
    except struct.error:
        return None
    return None


def _pixel_limit(max_pixels: int) -> int:
    from PIL import Image

    pillow = Image.MAX_IMAGE_PIXELS
    return min(max_pixels, int(pillow)) if pillow else max_pixels


def _check_pixels(name: object, width: int, height: int, limit: int) -> None:
    if width <= 0 or height <= 0:
        raise EvidenceError(name, "is a corrupt image (it has no pixels)", code="corrupt_image")
    if width * height > limit:
        raise EvidenceError(
            name,
            f"is too large to open: {width} x {height} pixels = "
            f"{width * height / 1e6:,.1f} megapixels (limit {limit / 1e6:,.1f})",
            code="too_many_pixels",
        )


def _read_limited(data, name: object, max_bytes: int) -> bytes:
    """Bytes of ``data`` (bytes, path or binary file), refusing > max_bytes before reading."""
    too_large = "is too large: {size} (limit {limit})"

    def refuse(size_text: str) -> EvidenceError:
        return EvidenceError(
            name, too_large.format(size=size_text, limit=_mb(max_bytes)), code="too_large"
        )

    if isinstance(data, bytes | bytearray | memoryview):
        if len(data) > max_bytes:
            raise refuse(_mb(len(data)))
        return bytes(data)
    if isinstance(data, str | os.PathLike):
        size = os.stat(data).st_size
        if size > max_bytes:
            raise refuse(_mb(size))
        with open(data, "rb") as f:
            return _read_stream(f, name, max_bytes, refuse)
    # A binary stream, e.g. a Django UploadedFile: use its known size first.
    size = getattr(data, "size", None)
    if size is None:
        try:
            size = os.fstat(data.fileno()).st_size
        except (AttributeError, OSError, io.UnsupportedOperation):
            size = None
    if isinstance(size, int) and size > max_bytes:
        raise refuse(_mb(size))
    position = None
    try:
        if data.seekable():
            position = data.tell()
    except (AttributeError, OSError):
        position = None
    try:
        return _read_stream(data, name, max_bytes, refuse)
    finally:
        if position is not None:
            data.seek(position)  # leave the upload readable for whoever stores it


def _read_stream(f: BinaryIO, name: object, max_bytes: int, refuse) -> bytes:
    chunks, total = [], 0
    while True:
        chunk = f.read(min(1 << 20, max_bytes + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:
            raise refuse(f"more than {_mb(max_bytes)}")


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):,.1f} MB"


def inspect_evidence(
    data: bytes | bytearray | memoryview | BinaryIO | str | os.PathLike,
    *,
    name: str,
    max_bytes: int | None = None,
    max_pages: int | None = None,
    max_pixels: int | None = None,
) -> EvidenceInfo:
    """Identify ``data`` by content and check it is usable evidence, or raise EvidenceError.

    ``data`` is bytes, a path, or a binary file (e.g. a Django UploadedFile; its position is
    restored). The size is checked before anything is read when it is known (path, ``.size``,
    ``fileno()``), and reading stops at ``max_bytes + 1`` otherwise. Images are fully decoded
    once (truncation shows up only then), after their header size passed the pixel limit.
    """
    max_bytes = int(max_bytes or _setting("EVIDENCE_MAX_BYTES", DEFAULT_MAX_BYTES))
    max_pages = int(max_pages or _setting("EVIDENCE_MAX_PAGES", DEFAULT_MAX_PAGES))
    max_pixels = int(max_pixels or _setting("EVIDENCE_MAX_PIXELS", DEFAULT_MAX_PIXELS))

    blob = _read_limited(data, name, max_bytes)
    if not blob:
        raise EvidenceError(name, "is empty", code="empty")
    fmt = _sniff(blob[:1024])
    if fmt is None:
        raise EvidenceError(
            name,
            "is not a PDF or a PNG, JPEG, TIFF or WebP image (files are identified by their "
            "content, not their name)",
            code="unknown_type",
        )
    sha256 = hashlib.sha256(blob).hexdigest()
    if fmt == "PDF":
        return _inspect_pdf(blob, name, sha256, max_pages)
    return _inspect_image(blob, name, fmt, sha256, max_pages, _pixel_limit(max_pixels))


def _inspect_pdf(blob: bytes, name: object, sha256: str, max_pages: int) -> EvidenceInfo:
    try:
        info = renderer.pdf_info(blob, max_pages=max_pages)
    except renderer.PdfPageError as exc:
        raise EvidenceError(name, f"is a damaged PDF: {exc}", code="corrupt_pdf") from exc
    except renderer.RendererError as exc:
        raise EvidenceError(
            name, "is a damaged or incomplete PDF and cannot be opened", code="corrupt_pdf"
        ) from exc
    if info.needs_password:
        raise EvidenceError(
            name, "is password-protected; upload a copy without a password", code="encrypted"
        )
    if info.page_count == 0 and info.repaired:
        raise EvidenceError(
            name, "is a damaged PDF: no readable pages could be recovered", code="corrupt_pdf"
        )
    if info.page_count == 0:
        raise EvidenceError(name, "is a PDF with no pages", code="no_pages")
    if info.page_count > max_pages:
        raise EvidenceError(
            name,
            f"has too many pages: {info.page_count} (limit {max_pages})",
            code="too_many_pages",
        )
    for number, (w, h) in enumerate(info.page_sizes, start=1):
        if not (w > 0 and h > 0):
            raise EvidenceError(
                name, f"is a damaged PDF: page {number} has no area", code="corrupt_pdf"
            )
    return EvidenceInfo(
        kind="pdf",
        mime="application/pdf",
        format="PDF",
        extension=".pdf",
        sha256=sha256,
        size_bytes=len(blob),
        page_count=info.page_count,
        page_sizes=info.page_sizes,
        encrypted=info.encrypted,
    )


def _oriented(image, width: int, height: int) -> tuple[int, int]:
    """Size after EXIF orientation (what browsers display): 5-8 swap width and height."""
    try:
        orientation = image.getexif().get(0x0112)
    except Exception:
        orientation = None
    return (height, width) if orientation in (5, 6, 7, 8) else (width, height)


def _open_image(source, name: object, fmt: str):
    """Pillow open restricted to the sniffed format (no guessing, no EPS/Ghostscript)."""
    from PIL import Image

    try:
        image = Image.open(source, formats=[fmt])
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise EvidenceError(
            name, f"is too large to open safely ({exc})", code="too_many_pixels"
        ) from exc
    except Exception as exc:
        raise EvidenceError(
            name, f"is a damaged {_label(fmt)} image and cannot be opened", code="corrupt_image"
        ) from exc
    if image.format != fmt:
        image.close()
        raise EvidenceError(name, f"is not a valid {_label(fmt)} image", code="corrupt_image")
    return image


def _label(fmt: str) -> str:
    return {"WEBP": "WebP"}.get(fmt, fmt)


def _inspect_image(
    blob: bytes, name: object, fmt: str, sha256: str, max_pages: int, limit: int
) -> EvidenceInfo:
    header = _header_dimensions(blob, fmt)
    if header:
        _check_pixels(name, *header, limit)
    sizes: list[tuple[float, float]] = []
    with _open_image(io.BytesIO(blob), name, fmt) as image:
        frames = int(getattr(image, "n_frames", 1) or 1) if fmt == "TIFF" else 1
        if frames > max_pages:
            raise EvidenceError(
                name, f"has too many pages: {frames} (limit {max_pages})", code="too_many_pages"
            )
        for index in range(frames):
            try:
                if index:
                    image.seek(index)
                width, height = image.size
                _check_pixels(name, width, height, limit)  # before decoding this frame
                image.load()  # full decode: truncated or corrupt data fails here
            except EvidenceError:
                raise
            except Exception as exc:
                where = f" (page {index + 1})" if frames > 1 else ""
                raise EvidenceError(
                    name,
                    f"is a truncated or damaged {_label(fmt)} image{where}",
                    code="corrupt_image",
                ) from exc
            sizes.append(tuple(float(v) for v in _oriented(image, width, height)))
    first_w, first_h = sizes[0]
    return EvidenceInfo(
        kind="image",
        mime=_IMAGE_MIME[fmt],
        format=fmt,
        extension=_EXTENSION[fmt],
        sha256=sha256,
        size_bytes=len(blob),
        page_count=frames,
        page_sizes=tuple(sizes),
        width=int(first_w),
        height=int(first_h),
    )
