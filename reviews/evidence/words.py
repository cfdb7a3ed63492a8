"""Words on an evidence page and where a cited quote is, for highlights and click-a-word.

Coordinates: points (1/72 inch), origin top-left of the page as displayed (CropBox, /Rotate
applied), boxes ``[x0, y0, x1, y1]``. Image pages measure in pixels, so the browser's formula
is the same for both: ``scale = rendered_image_width / page_width``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from reviews.evidence import limits, pdf
from reviews.evidence.encode import encode_rgb
from reviews.evidence.errors import from_pdf_error
from reviews.evidence.identify import Source, sniff_source, source_label
from reviews.evidence.images import image_page_size, image_pixels
from reviews.evidence.limits import DEFAULT_MAX_PIXELS

BBox = list[float]
# Images are read at no more than this many pixels (downscaled first): Tesseract reads text at
# ~300 dpi well, and a 50-megapixel photo would take it a minute. Boxes are scaled back.
OCR_MAX_PIXELS = 12_000_000


@dataclass(frozen=True, slots=True)
class Word:
    x0: float
    y0: float
    x1: float
    y1: float
    text: str

    @property
    def bbox(self) -> BBox:
        return [self.x0, self.y0, self.x1, self.y1]

    def as_dict(self) -> dict:
        return {"text": self.text, "bbox": [round(v, 2) for v in self.bbox]}


def ocr_available() -> bool:
    """Whether image pages have words: Tesseract (Debian's tesseract-ocr) is installed."""
    return pdf.tessdata() is not None


def page_size(source: Source, page: int, *, name: str | None = None) -> tuple[float, float]:
    """(width, height) of ``page`` in points (images: pixels after EXIF orientation)."""
    label = name or source_label(source)
    fmt = sniff_source(source, label)
    if fmt != "PDF":
        return image_page_size(source, label, fmt, page)
    try:
        return pdf.page_size(source, page)
    except pdf.RendererError as exc:
        raise from_pdf_error(label, exc) from exc


def page_words(source: Source, page: int, *, name: str | None = None) -> list[Word]:
    """Words on ``page`` in content order with boxes in points (images: pixels).

    PDF: the text layer. Images: what Tesseract reads, when it is installed (see
    :func:`ocr_available`; [] otherwise). OCR takes seconds: callers cache the result.
    """
    label = name or source_label(source)
    fmt = sniff_source(source, label)
    if fmt != "PDF":
        return _image_words(source, label, fmt, page) if ocr_available() else []
    try:
        words = pdf.page_words(source, page)
    except pdf.RendererError as exc:
        raise from_pdf_error(label, exc) from exc
    return [Word(x0, y0, x1, y1, text) for x0, y0, x1, y1, text in words]


def _image_words(source: Source, label: str, fmt: str, page: int) -> list[Word]:
    width, height = image_page_size(source, label, fmt, page)
    limit = int(limits.setting("EVIDENCE_MAX_PIXELS", DEFAULT_MAX_PIXELS))
    pixels = image_pixels(source, label, fmt, page, 72, limit, OCR_MAX_PIXELS)
    scale = width / pixels.width  # back from the (possibly downscaled) image to page pixels
    try:
        found = pdf.ocr_words(encode_rgb(pixels, "png"))
    except pdf.RendererError:
        return []  # Tesseract failed on this image: no words, as without OCR
    return [
        Word(x0 * scale, y0 * scale, x1 * scale, y1 * scale, text)
        for x0, y0, x1, y1, text in found
        if text.strip()
    ]


_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"))
_LOOKALIKES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u2010": "-",
        "\u2011": "-",
        "\u00a0": " ",
    }
)
MAX_QUOTE_CHARS = 2000


def normalize_quote(quote: str) -> str:
    """Whitespace runs (incl. newlines, NBSP) -> one space; invisible characters dropped."""
    text = unicodedata.normalize("NFKC", str(quote or "")).translate(_INVISIBLE)
    return " ".join(text.split())


def _token_key(text: str) -> str:
    return text.translate(_LOOKALIKES).casefold()


def locate_quote(source: Source, page: int, quote: str, *, name: str | None = None) -> list[BBox]:
    """Boxes ``[x0, y0, x1, y1]`` (points) where ``quote`` appears on ``page``; [] if absent.

    Whitespace in the quote is normalised. MuPDF's search runs first (case-insensitive; a hit
    spanning lines or separated spans gives several boxes); if it finds nothing, the quote is
    matched word by word against the page's words (tolerating curly quotes, dashes and
    layout gaps), one box per line of the match. Images are matched against their OCR words
    ([] without OCR). Quotes longer than MAX_QUOTE_CHARS are not searched ([]).
    """
    label = name or source_label(source)
    text = normalize_quote(quote)
    if not text or len(text) > MAX_QUOTE_CHARS:
        return []
    hits = []
    if sniff_source(source, label) == "PDF":
        try:
            hits = pdf.search_quote(source, page, text)
        except pdf.RendererError as exc:
            raise from_pdf_error(label, exc) from exc
    if not hits:
        hits = _match_words(page_words(source, page, name=label), text)
    return [[round(v, 2) for v in box] for box in hits]


def find_quote(words: list[Word], quote: str) -> list[BBox]:
    """Boxes where ``quote`` reads in ``words`` (e.g. an image's cached OCR words), matched
    word by word as :func:`locate_quote`'s fallback does; [] if absent."""
    text = normalize_quote(quote)
    if not text or len(text) > MAX_QUOTE_CHARS:
        return []
    return [[round(v, 2) for v in box] for box in _match_words(words, text)]


def _match_words(words: list[Word], quote: str) -> list[tuple[float, float, float, float]]:
    """Every run of consecutive words equal to the quote's tokens, merged per line."""
    tokens = [_token_key(t) for t in quote.split()]
    keys = [_token_key(w.text) for w in words]
    n = len(tokens)
    boxes: list[tuple[float, float, float, float]] = []
    for start in range(len(words) - n + 1):
        if keys[start : start + n] == tokens:
            boxes.extend(_merge_lines(words[start : start + n]))
    return boxes


def _merge_lines(words: Iterable[Word]) -> list[tuple[float, float, float, float]]:
    lines: list[list[float]] = []
    for w in words:
        if lines:
            x0, y0, x1, y1 = lines[-1]
            mid = (w.y0 + w.y1) / 2
            if y0 <= mid <= y1 and w.x0 >= x0:
                lines[-1] = [x0, min(y0, w.y0), max(x1, w.x1), max(y1, w.y1)]
                continue
        lines.append([w.x0, w.y0, w.x1, w.y1])
    return [tuple(line) for line in lines]
