"""Evidence files: identify and check them, render their pages (cached), find words and quotes.

No model, no database: callers pass a file path (or bytes) and the content hash. Everything a
caller outside this package needs is imported from here::

    inspect_evidence(data, *, name, max_bytes=None, max_pages=None, max_pixels=None)
        -> EvidenceInfo                         # raises EvidenceError(name, reason, code=...)
    render_page(source_path, sha256, page=1, *, dpi=150, fmt="png", cache_dir=None)
        -> Path                                 # cache_dir/ab/abcdef.../p3-150.png
    page_size(source_path, page) -> (width, height)
    page_words(source_path, page) -> list[Word]
    locate_quote(source_path, page, quote) -> list[[x0, y0, x1, y1]]
    svg_to_png(svg, scale=2.0) -> bytes         # the dashboards' chart downloads

Inside, by subdomain: ``identify`` (content sniffing, limits, the checks an upload passes),
``render`` (page images and their cache), ``words`` (word boxes, quote search), ``images``
(Pillow), ``encode`` (PNG/WebP) and ``pdf``, the only module that imports PyMuPDF. Limits not
passed in come from settings (``EVIDENCE_MAX_BYTES``, ``EVIDENCE_MAX_PAGES``,
``EVIDENCE_MAX_PIXELS``, ``EVIDENCE_CACHE_DIR``), see ``limits``.

Coordinates are points (1/72 inch), origin top-left of the page as displayed; an image is a
page whose points are its pixels after EXIF orientation.
"""

from reviews.evidence.errors import EvidenceError
from reviews.evidence.identify import EvidenceInfo, inspect_evidence
from reviews.evidence.limits import (
    DEFAULT_DPI,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_PIXELS,
    DPI_STEPS,
    MAX_DPI,
    MIN_DPI,
)

# DrawBox/DrawLine/DrawText, build_pdf, encrypt_pdf, text_bbox, text_width: the primitives the
# demo documents (reviews/demo/) and the test files are drawn with.
from reviews.evidence.pdf import (
    DrawBox,
    DrawLine,
    DrawText,
    build_pdf,
    encrypt_pdf,
    svg_to_png,
    text_bbox,
    text_width,
)
from reviews.evidence.render import cache_path, clamp_dpi, render_page
from reviews.evidence.words import (
    MAX_QUOTE_CHARS,
    Word,
    locate_quote,
    normalize_quote,
    page_size,
    page_words,
)

__all__ = [
    "DEFAULT_DPI",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_PAGES",
    "DEFAULT_MAX_PIXELS",
    "DPI_STEPS",
    "MAX_DPI",
    "MAX_QUOTE_CHARS",
    "MIN_DPI",
    "DrawBox",
    "DrawLine",
    "DrawText",
    "EvidenceError",
    "EvidenceInfo",
    "Word",
    "build_pdf",
    "cache_path",
    "clamp_dpi",
    "encrypt_pdf",
    "inspect_evidence",
    "locate_quote",
    "normalize_quote",
    "page_size",
    "page_words",
    "render_page",
    "svg_to_png",
    "text_bbox",
    "text_width",
]
