"""Identify an evidence file by its content and check it is usable, or refuse it.

Identification is by content (magic bytes, then a real open), never by file name: PDF, PNG,
JPEG, TIFF and WebP. File names and PDF text are untrusted; names are sanitised before they
appear in messages, and nothing is ever passed to a shell.
"""

from __future__ import annotations

import hashlib
import io
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import BinaryIO, Literal

from reviews.evidence import limits, pdf
from reviews.evidence.errors import EvidenceError
from reviews.evidence.images import (
    check_pixels,
    format_label,
    frame_count,
    header_dimensions,
    open_image,
    oriented_size,
    pixel_limit,
)
from reviews.evidence.limits import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_PAGES,
    DEFAULT_MAX_PIXELS,
)

_IMAGE_MIME = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "TIFF": "image/tiff",
    "WEBP": "image/webp",
}
Source = bytes | bytearray | memoryview | str | os.PathLike  # a stored file: path or bytes
_EXTENSION = {"PDF": ".pdf", "PNG": ".png", "JPEG": ".jpg", "TIFF": ".tif", "WEBP": ".webp"}


@dataclass(frozen=True, slots=True)
class EvidenceInfo:
    kind: Literal["pdf", "image"]
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


def sniff(head: bytes) -> str | None:
    """The format named by the first bytes: PDF, PNG, JPEG, TIFF, WEBP, or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "PNG"
    if head.startswith(b"\xff\xd8\xff"):
        return "JPEG"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):
        return "TIFF"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WEBP"
    # A zip is never a PDF, though a stored (uncompressed) PDF member puts "%PDF-" in its
    # first bytes: a bundle of review files and their PDFs must stay a bundle.
    if head.startswith(b"PK\x03\x04"):
        return None
    # PDF readers accept a header anywhere in the first 1024 bytes.
    if b"%PDF-" in head[:1024]:
        return "PDF"
    return None


def sniff_source(source: Source, name: object) -> str:
    """The format of a stored file (path or bytes) by its first bytes; EvidenceError if none
    we read."""
    if isinstance(source, bytes | bytearray | memoryview):
        fmt = sniff(bytes(source[:1024]))
    else:
        with open(source, "rb") as f:
            fmt = sniff(f.read(1024))
    if fmt is None:
        raise EvidenceError(name, "is not a PDF or a supported image", code="unknown_type")
    return fmt


def source_label(source: Source) -> str:
    """A name for messages when the caller gave none: the file name, or "(file)" for bytes."""
    if isinstance(source, bytes | bytearray | memoryview):
        return "(file)"
    return Path(source).name


def read_limited(data, name: object, max_bytes: int) -> bytes:
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
    max_bytes = int(max_bytes or limits.setting("EVIDENCE_MAX_BYTES", DEFAULT_MAX_BYTES))
    max_pages = int(max_pages or limits.setting("EVIDENCE_MAX_PAGES", DEFAULT_MAX_PAGES))
    max_pixels = int(max_pixels or limits.setting("EVIDENCE_MAX_PIXELS", DEFAULT_MAX_PIXELS))

    blob = read_limited(data, name, max_bytes)
    if not blob:
        raise EvidenceError(name, "is empty", code="empty")
    fmt = sniff(blob[:1024])
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
    return _inspect_image(blob, name, fmt, sha256, max_pages, pixel_limit(max_pixels))


def _inspect_pdf(blob: bytes, name: object, sha256: str, max_pages: int) -> EvidenceInfo:
    try:
        info = pdf.pdf_info(blob, max_pages=max_pages)
    except pdf.PdfPageError as exc:
        raise EvidenceError(name, f"is a damaged PDF: {exc}", code="corrupt_pdf") from exc
    except pdf.RendererError as exc:
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


def _inspect_image(
    blob: bytes, name: object, fmt: str, sha256: str, max_pages: int, limit: int
) -> EvidenceInfo:
    header = header_dimensions(blob, fmt)
    if header:
        check_pixels(name, *header, limit)
    sizes: list[tuple[float, float]] = []
    with open_image(io.BytesIO(blob), name, fmt) as image:
        frames = frame_count(image, fmt)
        if frames > max_pages:
            raise EvidenceError(
                name, f"has too many pages: {frames} (limit {max_pages})", code="too_many_pages"
            )
        for index in range(frames):
            try:
                if index:
                    image.seek(index)
                width, height = image.size
                check_pixels(name, width, height, limit)  # before decoding this frame
                image.load()  # full decode: truncated or corrupt data fails here
            except EvidenceError:
                raise
            except Exception as exc:
                where = f" (page {index + 1})" if frames > 1 else ""
                raise EvidenceError(
                    name,
                    f"is a truncated or damaged {format_label(fmt)} image{where}",
                    code="corrupt_image",
                ) from exc
            sizes.append(tuple(float(v) for v in oriented_size(image, width, height)))
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
