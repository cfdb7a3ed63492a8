"""Rendering an evidence page to PNG or WebP: PDF pages through the PDF backend, images through
Pillow, both encoded by :mod:`reviews.evidence.encode`.

Only the zoom levels in ``ZOOM_DPIS`` are rendered. Caching is the caller's: ``render_key``
names a render by content (sha256, page, dpi, format), so a key never goes stale.
"""

from __future__ import annotations

import re

from reviews.evidence import limits, pdf
from reviews.evidence.encode import encode_rgb
from reviews.evidence.errors import from_pdf_error
from reviews.evidence.identify import Source, sniff_source, source_label
from reviews.evidence.images import image_pixels
from reviews.evidence.limits import DEFAULT_MAX_PIXELS, FORMATS, MAX_RENDER_PIXELS, check_dpi

_SHA256 = re.compile(r"[0-9a-f]{64}")


def render_key(sha256: str, page: int, dpi: int, fmt: str) -> str:
    """``ab/abcdef.../p<page>-<dpi>.<fmt>``: a render's name (every part validated, no path
    tricks). ``sha256`` is the content hash from :func:`inspect_evidence`."""
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise ValueError("sha256 must be 64 lowercase hex digits")
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}")
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise ValueError("page must be an integer >= 1")
    return f"{sha256[:2]}/{sha256}/p{page}-{check_dpi(dpi)}.{fmt}"


def render_page(
    source: Source,
    page: int = 1,
    *,
    dpi: int = limits.DEFAULT_DPI,
    fmt: str = "png",
    name: str | None = None,
    max_pixels: int | None = None,
) -> bytes:
    """``page`` (1-based) of ``source`` (a path or the file's bytes) as PNG or WebP bytes.

    ``dpi`` must be one of ZOOM_DPIS (ValueError otherwise).
    PDF pages: zoom = dpi / 72, so a 612 pt wide page at 150 dpi is 1275 px wide.
    Images: treated as pages whose points are pixels, zoom = min(dpi / 72, 1): a thumbnail dpi
    below 72 downscales, higher dpi shows the image at its own size (never upscaled; the
    browser can zoom). Output is capped at MAX_RENDER_PIXELS (boxes scale by image width).
    """
    dpi = check_dpi(dpi)
    fmt = str(fmt).lower()
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}")
    label = name or source_label(source)
    kind = sniff_source(source, label)
    if kind == "PDF":
        try:
            pixels = pdf.render_pixels(source, page, dpi=dpi, max_pixels=MAX_RENDER_PIXELS)
        except pdf.RendererError as exc:
            raise from_pdf_error(label, exc) from exc
    else:
        limit = int(max_pixels or limits.setting("EVIDENCE_MAX_PIXELS", DEFAULT_MAX_PIXELS))
        pixels = image_pixels(source, label, kind, page, dpi, limit)
    return encode_rgb(pixels, fmt)
