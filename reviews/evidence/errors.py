"""The evidence package's one error: a refused file, named safely in a sentence."""

from __future__ import annotations

import re
import unicodedata

from reviews.evidence import pdf

_UNSAFE_NAME_CHARS = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def display_name(name: object, limit: int = 80) -> str:
    """A file name fit for a message: last path component, no control/bidi characters."""
    text = str(name or "").replace("\\", "/").rsplit("/", 1)[-1]
    text = _UNSAFE_NAME_CHARS.sub("", unicodedata.normalize("NFC", text))
    text = " ".join(text.split()) or "(unnamed file)"
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f'"{text}"'


class EvidenceError(ValueError):
    """An evidence file was refused. ``str(err)`` is a sentence naming the file.

    ``code`` is stable for programs: too_large, empty, unknown_type, corrupt_pdf, encrypted,
    no_pages, too_many_pages, corrupt_image, too_many_pixels, no_such_page.
    """

    def __init__(self, name: object, reason: str, *, code: str = "invalid"):
        self.name = str(name or "")
        self.reason = reason
        self.code = code
        super().__init__(f"{display_name(name)} {reason}")


def from_pdf_error(name: object, exc: pdf.RendererError) -> EvidenceError:
    """The EvidenceError for a PDF backend failure on file ``name``."""
    if isinstance(exc, pdf.PdfPasswordError):
        return EvidenceError(name, "is password-protected", code="encrypted")
    if isinstance(exc, pdf.PdfPageError):
        code = "no_such_page" if str(exc).startswith("has no page") else "corrupt_pdf"
        return EvidenceError(name, str(exc), code=code)
    return EvidenceError(name, "is a damaged PDF and cannot be opened", code="corrupt_pdf")
