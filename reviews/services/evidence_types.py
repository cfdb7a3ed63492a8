"""What the evidence service returns and raises: its error (naming the file safely), the
facts about a file, and word boxes."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass
from typing import Literal

from reviews.services import renderer

Kind = Literal["pdf", "image"]
BBox = list[float]


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


@dataclass(frozen=True, slots=True)
class EvidenceInfo:
    kind: Kind  # "pdf" | "image"
    mime: str  # application/pdf, image/png, image/jpeg, image/tiff, image/webp
    format: str  # PDF, PNG, JPEG, TIFF, WEBP
    extension: str  # the right extension for the content: .pdf .png .jpg .tif .webp
    sha256: str
    size_bytes: int
    page_count: int
    page_sizes: tuple[tuple[float, float], ...]  # per page: points (PDF) / pixels (image)
    width: int | None = None  # images: first page, pixels, after EXIF orientation
    height: int | None = None
    encrypted: bool = False  # PDF encrypted with an empty user password (readable)

    def as_dict(self) -> dict:
        data = asdict(self)
        data["page_sizes"] = [[round(w, 2), round(h, 2)] for w, h in self.page_sizes]
        return data


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


def _pdf_error(name: object, exc: renderer.RendererError) -> EvidenceError:
    if isinstance(exc, renderer.PdfPasswordError):
        return EvidenceError(name, "is password-protected", code="encrypted")
    if isinstance(exc, renderer.PdfPageError):
        code = "no_such_page" if str(exc).startswith("has no page") else "corrupt_pdf"
        return EvidenceError(name, str(exc), code=code)
    return EvidenceError(name, "is a damaged PDF and cannot be opened", code="corrupt_pdf")
