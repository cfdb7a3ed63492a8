"""Evidence files: identify and check them, render their pages, find words and quotes.

No model, no database: callers pass the stored file (a path or its bytes). Everything a caller
outside this package needs is imported from here::

    sniff(head) -> "PDF" | "PNG" | "JPEG" | "TIFF" | "WEBP" | None   # by the first bytes
    inspect_evidence(data, *, name, max_bytes=None, max_pages=None, max_pixels=None)
        -> EvidenceInfo                         # raises EvidenceError(name, reason, code=...)
    render_page(source, page=1, *, dpi=150, fmt="png") -> bytes   # dpi one of ZOOM_DPIS
    render_key(sha256, page, dpi, fmt) -> "ab/abcdef.../p3-150.png"  # a cache name
    page_size(source, page) -> (width, height)
    page_words(source, page) -> list[Word]      # images: OCR when Tesseract is installed
    ocr_available() -> bool
    locate_quote(source, page, quote) -> list[[x0, y0, x1, y1]]
    find_quote(words, quote) -> list[[x0, y0, x1, y1]]   # in a page's (cached) words
    svg_to_png(svg, scale=2.0) -> bytes         # the dashboards' chart downloads

Inside, by subdomain: ``identify`` (content sniffing, the checks an upload passes), ``render``
(page images at the zoom levels), ``words`` (word boxes, OCR, quote search), ``images``
(Pillow), ``encode`` (PNG/WebP), ``limits`` (limits and settings), ``drawing`` and ``pdf``,
the only module that imports PyMuPDF. Limits not passed in come from settings
(``EVIDENCE_MAX_BYTES``, ``EVIDENCE_MAX_PAGES``, ``EVIDENCE_MAX_PIXELS``).

Coordinates are points (1/72 inch), origin top-left of the page as displayed; an image is a
page whose points are its pixels after EXIF orientation.
"""

from reviews.evidence.drawing import DrawBox, DrawLine, DrawText
from reviews.evidence.errors import EvidenceError
from reviews.evidence.identify import EvidenceInfo, inspect_evidence, sniff
from reviews.evidence.limits import (
    DEFAULT_DPI,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_PIXELS,
    THUMBNAIL_DPI,
    ZOOM_DPIS,
    check_dpi,
)

# build_pdf, encrypt_pdf, text_bbox, text_width (with the Draw* operations): the primitives the
# demo documents (reviews/demo/) and the test files are drawn with.
from reviews.evidence.pdf import build_pdf, encrypt_pdf, svg_to_png, text_bbox, text_width
from reviews.evidence.render import render_key, render_page
from reviews.evidence.words import (
    MAX_QUOTE_CHARS,
    Word,
    find_quote,
    locate_quote,
    normalize_quote,
    ocr_available,
    page_size,
    page_words,
)

__all__ = [
    "DEFAULT_DPI",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_PAGES",
    "DEFAULT_MAX_PIXELS",
    "MAX_QUOTE_CHARS",
    "THUMBNAIL_DPI",
    "ZOOM_DPIS",
    "DrawBox",
    "DrawLine",
    "DrawText",
    "EvidenceError",
    "EvidenceInfo",
    "Word",
    "build_pdf",
    "check_dpi",
    "encrypt_pdf",
    "find_quote",
    "inspect_evidence",
    "locate_quote",
    "normalize_quote",
    "ocr_available",
    "page_size",
    "page_words",
    "render_key",
    "render_page",
    "sniff",
    "svg_to_png",
    "text_bbox",
    "text_width",
]
