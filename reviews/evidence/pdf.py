"""The PDF backend: the only module in Evalsite that imports PyMuPDF (a test enforces it).

PyMuPDF is AGPL, so it stays behind this small interface; another backend (pdfium, poppler)
could replace this file without touching callers. Everything here speaks plain Python types:

* reading: ``pdf_info(source)`` -> :class:`PdfInfo`, ``page_size``, ``page_words``,
  ``search_quote``
* rendering: ``render_pixels(source, page, dpi=...)`` -> :class:`~reviews.evidence.encode.Pixels`
  (raw RGB; :mod:`reviews.evidence.encode` turns it into PNG/WebP), ``mupdf_png`` (PyMuPDF's own
  render + PNG, the benchmark reference), ``svg_to_png`` (the dashboards' chart downloads)
* OCR: ``tessdata()`` (is Tesseract installed?), ``ocr_words(png)`` (word boxes in pixels)
* writing: ``build_pdf(pages)`` from drawing operations, ``text_bbox``/``text_width`` (font
  metrics) and ``encrypt_pdf``: the primitives the demo data and the tests draw their PDFs with
  (the documents themselves are built in ``reviews/demo/`` and ``tests/``)

Failures raise ``RendererError`` subclasses: PdfOpenError, PdfPasswordError, PdfPageError (a
missing file raises the builtin FileNotFoundError).

``source`` is PDF bytes or a filesystem path (opened as PDF whatever its extension). Pages are
1-based. Coordinates are PDF points (1/72 inch) with the origin at the top-left of the page *as
displayed*: the CropBox is the page, and /Rotate is applied, so a box lines up with the image
that ``render_pixels`` produces (pixel = point * dpi / 72).

MuPDF is not thread-safe, so every PyMuPDF call runs under one process-wide lock. Pixels are
copied out of MuPDF before the lock is released, and encoding runs outside the lock.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import pymupdf

from reviews.evidence.drawing import FONTS, DrawBox, DrawLine, DrawOp, DrawText
from reviews.evidence.encode import Pixels

Source = bytes | bytearray | memoryview | str | os.PathLike
BBox = tuple[float, float, float, float]

_LOCK = threading.RLock()

MIN_RENDER_DPI = 1.0
MAX_RENDER_DPI = 2400.0


class RendererError(Exception):
    """Base class for renderer failures (the message never includes PDF content)."""


class PdfOpenError(RendererError):
    """The data cannot be opened as a PDF (corrupt, truncated, not a PDF)."""


class PdfPasswordError(RendererError):
    """The PDF needs a password to be read."""


class PdfPageError(RendererError):
    """The requested page does not exist or cannot be loaded."""


@dataclass(frozen=True, slots=True)
class PdfInfo:
    page_count: int
    encrypted: bool  # the file uses PDF encryption (possibly with an empty user password)
    needs_password: bool  # ...and cannot be read without one
    repaired: bool  # MuPDF had to reconstruct a damaged file to open it
    page_sizes: tuple[tuple[float, float], ...]  # (width, height) in points; () if locked


# --------------------------------------------------------------------------------------------
# Reading


def _open(source: Source) -> pymupdf.Document:
    """Open ``source`` as a PDF (never by extension). Call with _LOCK held."""
    # PyMuPDF appends every MuPDF warning to a module-level list that is never trimmed; in a
    # long-running server fed damaged PDFs that grows forever, so keep only the latest file's.
    pymupdf.TOOLS.reset_mupdf_warnings()
    try:
        if isinstance(source, bytes | bytearray | memoryview):
            doc = pymupdf.open(stream=bytes(source), filetype="pdf")
        else:
            doc = pymupdf.open(os.fspath(source), filetype="pdf")
    except FileNotFoundError:
        raise
    except pymupdf.FileNotFoundError as exc:  # not a subclass of the builtin one
        raise FileNotFoundError(os.fspath(source)) from exc
    except Exception as exc:  # MuPDF raises FileDataError/RuntimeError/ValueError on junk
        raise PdfOpenError("cannot be opened as a PDF") from exc
    if not doc.is_pdf:
        doc.close()
        raise PdfOpenError("is not a PDF")
    return doc


def _load_page(doc: pymupdf.Document, page: int) -> pymupdf.Page:
    if doc.needs_pass:
        raise PdfPasswordError("is password-protected")
    if not isinstance(page, int) or not 1 <= page <= doc.page_count:
        raise PdfPageError(f"has no page {page} (it has {doc.page_count})")
    try:
        return doc.load_page(page - 1)
    except Exception as exc:
        raise PdfPageError(f"page {page} cannot be read") from exc


def pdf_info(source: Source, *, max_pages: int | None = None) -> PdfInfo:
    """Page count, encryption and every page's displayed size in points.

    Raises PdfOpenError if the data is not a readable PDF, PdfPageError if a page cannot be
    loaded. A password-protected file is *reported* (needs_password=True), not raised. With
    more than ``max_pages`` pages, page sizes are not read (page_sizes is empty).
    """
    with _LOCK:
        doc = _open(source)
        try:
            encrypted = bool(doc.is_encrypted or doc.needs_pass or doc.metadata.get("encryption"))
            repaired = bool(doc.is_repaired)
            if doc.needs_pass:
                return PdfInfo(doc.page_count, True, True, repaired, ())
            if max_pages is not None and doc.page_count > max_pages:
                return PdfInfo(doc.page_count, encrypted, False, repaired, ())
            sizes = []
            for index in range(doc.page_count):
                try:
                    rect = doc.load_page(index).rect
                except Exception as exc:
                    raise PdfPageError(f"page {index + 1} cannot be read") from exc
                sizes.append((float(rect.width), float(rect.height)))
            return PdfInfo(doc.page_count, encrypted, False, repaired, tuple(sizes))
        finally:
            doc.close()


def page_size(source: Source, page: int) -> tuple[float, float]:
    """(width, height) in points of ``page`` as displayed (CropBox, rotation applied)."""
    with _LOCK:
        doc = _open(source)
        try:
            rect = _load_page(doc, page).rect
            return float(rect.width), float(rect.height)
        finally:
            doc.close()


def _to_display(page: pymupdf.Page, rect) -> BBox:
    """Map a text-extraction rect (unrotated page space) to displayed page space."""
    r = pymupdf.Rect(rect)
    if page.rotation:
        r = r * page.rotation_matrix
    r.normalize()
    return (float(r.x0), float(r.y0), float(r.x1), float(r.y1))


def page_words(source: Source, page: int) -> list[tuple[float, float, float, float, str]]:
    """Words of ``page`` in content order: (x0, y0, x1, y1, text), displayed points."""
    with _LOCK:
        doc = _open(source)
        try:
            p = _load_page(doc, page)
            words = p.get_text("words", sort=False)
            return [(*_to_display(p, w[:4]), str(w[4])) for w in words]
        finally:
            doc.close()


def search_quote(source: Source, page: int, quote: str) -> list[BBox]:
    """MuPDF's text search (case-insensitive, one rect per line of a hit); [] if absent."""
    if not quote:
        return []
    with _LOCK:
        doc = _open(source)
        try:
            p = _load_page(doc, page)
            return [_to_display(p, r) for r in p.search_for(quote)]
        finally:
            doc.close()


# --------------------------------------------------------------------------------------------
# Rendering


def render_pixels(
    source: Source, page: int, *, dpi: float, max_pixels: int | None = None
) -> Pixels:
    """Render ``page`` to RGB at ``dpi`` (zoom = dpi / 72), no alpha, white background.

    If the result would exceed ``max_pixels`` the zoom is reduced to fit (a huge page must not
    exhaust memory); callers scale boxes by image width / page width, so that stays correct.
    """
    dpi = float(dpi)
    if not MIN_RENDER_DPI <= dpi <= MAX_RENDER_DPI:
        raise ValueError(f"dpi must be within {MIN_RENDER_DPI}..{MAX_RENDER_DPI}")
    zoom = dpi / 72.0
    with _LOCK:
        doc = _open(source)
        try:
            p = _load_page(doc, page)
            if max_pixels:
                w, h = p.rect.width, p.rect.height
                area = w * zoom * h * zoom
                if area > max_pixels:
                    zoom *= math.sqrt(max_pixels / area)
                    # MuPDF rounds the pixel box outwards: leave room for a pixel each way.
                    while zoom > 1e-3 and (w * zoom + 1) * (h * zoom + 1) > max_pixels:
                        zoom *= 0.99
            try:
                pix = p.get_pixmap(
                    matrix=pymupdf.Matrix(zoom, zoom), colorspace=pymupdf.csRGB, alpha=False
                )
            except Exception as exc:
                raise PdfPageError(f"page {page} cannot be rendered") from exc
            # Copy out of MuPDF (~1 ms at 150 dpi) so encoding can run without the lock.
            return Pixels(pix.width, pix.height, pix.stride, pix.samples)
        finally:
            doc.close()


def mupdf_png(source: Source, page: int, *, dpi: float) -> bytes:
    """PyMuPDF's own ``get_pixmap(dpi=...)`` + ``tobytes("png")``: the benchmark reference."""
    with _LOCK:
        doc = _open(source)
        try:
            return _load_page(doc, page).get_pixmap(dpi=dpi).tobytes("png")
        finally:
            doc.close()


def svg_to_png(svg: bytes, *, scale: float = 2.0) -> bytes:
    """Rasterise an SVG chart (for the dashboards' PNG downloads)."""
    with _LOCK:
        doc = pymupdf.open(stream=svg, filetype="svg")
        try:
            pix = doc[0].get_pixmap(matrix=pymupdf.Matrix(scale, scale), alpha=False)
            return pix.tobytes("png")
        finally:
            doc.close()


# --------------------------------------------------------------------------------------------
# OCR (Tesseract through PyMuPDF, when Debian's tesseract-ocr is installed)

_TESSDATA: list[str | None] = []  # found once per process: [path] or [None]


def tessdata() -> str | None:
    """Tesseract's language data folder (``TESSDATA_PREFIX`` or the installed one), or None."""
    if not _TESSDATA:
        try:
            found = pymupdf.get_tessdata()
        except Exception:  # RuntimeError "Tesseract is not installed"
            found = None
        _TESSDATA.append(found or None)
    return _TESSDATA[0]


def ocr_words(png: bytes, *, language: str = "eng") -> list[tuple[float, float, float, float, str]]:
    """Words Tesseract reads in a PNG image: (x0, y0, x1, y1, text) in the image's pixels.

    Raises RendererError if Tesseract is not installed (check :func:`tessdata` first).
    """
    folder = tessdata()
    if folder is None:
        raise RendererError("Tesseract is not installed")
    with _LOCK:
        pix = pymupdf.Pixmap(png)
        width = pix.width
        try:
            scanned = pix.pdfocr_tobytes(language=language, tessdata=folder)
        except Exception as exc:
            raise RendererError("OCR failed") from exc
        doc = pymupdf.open(stream=scanned, filetype="pdf")
        try:
            p = doc[0]
            scale = width / p.rect.width  # the OCR page is in points at the pixmap's resolution
            return [
                (w[0] * scale, w[1] * scale, w[2] * scale, w[3] * scale, str(w[4]))
                for w in p.get_text("words", sort=False)
            ]
        finally:
            doc.close()


# --------------------------------------------------------------------------------------------
# Writing (the primitives demo data and tests draw their PDFs with)


def text_width(text: str, *, size: float = 10.0, font: str = "helv") -> float:
    """Advance width of ``text`` in points."""
    with _LOCK:
        return float(pymupdf.get_text_length(text, fontname=font, fontsize=size))


def text_bbox(op: DrawText) -> BBox:
    """Where MuPDF will report ``op``'s text: font ascender to descender, origin top-left."""
    with _LOCK:
        font = pymupdf.Font(op.font)
        width = pymupdf.get_text_length(op.text, fontname=op.font, fontsize=op.size)
        ascender, descender = font.ascender, font.descender
    return (
        float(op.x),
        float(op.y - ascender * op.size),
        float(op.x + width),
        float(op.y - descender * op.size),
    )


def build_pdf(
    pages: Sequence[Sequence[DrawOp]],
    *,
    page_size: tuple[float, float] = (612.0, 792.0),
    title: str = "",
    author: str = "",
    rotation: int = 0,
) -> bytes:
    """A PDF with one page per entry of ``pages``; byte-for-byte deterministic.

    Operations use unrotated page coordinates; ``rotation`` (0/90/180/270) sets every page's
    /Rotate afterwards, as scanners and "rotate page" tools do.
    """
    if rotation % 90:
        raise ValueError("rotation must be a multiple of 90")
    width, height = page_size
    with _LOCK:
        doc = pymupdf.open()
        try:
            for ops in pages:
                p = doc.new_page(width=width, height=height)
                for op in ops:
                    if isinstance(op, DrawText):
                        if op.font not in FONTS:
                            raise ValueError(f"unknown font {op.font!r}")
                        p.insert_text(
                            (op.x, op.y),
                            op.text,
                            fontsize=op.size,
                            fontname=op.font,
                            color=op.color,
                        )
                    elif isinstance(op, DrawLine):
                        p.draw_line((op.x0, op.y0), (op.x1, op.y1), color=op.color, width=op.width)
                    elif isinstance(op, DrawBox):
                        p.draw_rect(
                            pymupdf.Rect(op.x0, op.y0, op.x1, op.y1),
                            color=op.stroke,
                            fill=op.fill,
                            width=op.width,
                        )
                    else:
                        raise TypeError(f"not a drawing operation: {op!r}")
                if rotation % 360:
                    p.set_rotation(rotation % 360)
            fixed = "D:20240401000000Z"
            doc.set_metadata(
                {
                    "title": title,
                    "author": author,
                    "subject": "",
                    "keywords": "",
                    "creator": "Evalsite",
                    "producer": "Evalsite",
                    "creationDate": fixed,
                    "modDate": fixed,
                }
            )
            return doc.tobytes(garbage=3, deflate=True, no_new_id=True)
        finally:
            doc.close()


def encrypt_pdf(data: bytes, *, user_password: str, owner_password: str | None = None) -> bytes:
    """``data`` re-saved with AES-256 encryption (needs ``user_password`` to open)."""
    with _LOCK:
        doc = _open(data)
        try:
            return doc.tobytes(
                encryption=pymupdf.PDF_ENCRYPT_AES_256,
                user_pw=user_password,
                owner_pw=owner_password or user_password + "-owner",
                permissions=int(pymupdf.PDF_PERM_PRINT | pymupdf.PDF_PERM_COPY),
            )
        finally:
            doc.close()
