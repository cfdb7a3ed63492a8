"""Rendering evidence pages (PDF via the PDF backend, images via Pillow), cached on disk by
(sha256, page, dpi, format) so a cached page never touches the source or PyMuPDF."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

from reviews.evidence import limits, pdf
from reviews.evidence.encode import encode_rgb
from reviews.evidence.errors import from_pdf_error
from reviews.evidence.identify import sniff_file
from reviews.evidence.images import image_pixels
from reviews.evidence.limits import (
    DEFAULT_DPI,
    DEFAULT_MAX_PIXELS,
    FORMATS,
    MAX_DPI,
    MAX_RENDER_PIXELS,
    MIN_DPI,
    default_cache_dir,
)

_SHA256 = re.compile(r"[0-9a-f]{64}")


def clamp_dpi(dpi: float | int | str) -> int:
    """dpi as used for rendering and cache keys: a whole number within MIN_DPI..MAX_DPI."""
    try:
        value = float(dpi)
    except (TypeError, ValueError):
        value = DEFAULT_DPI
    if value != value:  # NaN
        value = DEFAULT_DPI
    return int(round(min(max(value, MIN_DPI), MAX_DPI)))


def cache_path(cache_dir: str | os.PathLike, sha256: str, page: int, dpi: int, fmt: str) -> Path:
    """``cache_dir/ab/abcdef.../p<page>-<dpi>.<fmt>`` (sha256 validated: no path tricks)."""
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise ValueError("sha256 must be 64 lowercase hex digits")
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}")
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise ValueError("page must be an integer >= 1")
    return Path(cache_dir) / sha256[:2] / sha256 / f"p{page}-{int(dpi)}.{fmt}"


def render_page(
    source_path: str | os.PathLike,
    sha256: str,
    page: int = 1,
    *,
    dpi: float = DEFAULT_DPI,
    fmt: str = "png",
    cache_dir: str | os.PathLike | None = None,
    name: str | None = None,
    max_pixels: int | None = None,
) -> Path:
    """Path of ``page`` (1-based) rendered at ``dpi`` as PNG/WebP, rendering it on a miss.

    The cache key is (sha256, page, clamped dpi, fmt); ``sha256`` is the content hash from
    :func:`inspect_evidence` and is trusted to match ``source_path``. A hit is one ``stat``:
    neither the source nor PyMuPDF is touched. A miss renders, writes a temp file in the same
    folder and ``os.replace``-s it into place, so concurrent renders of the same page are safe
    (readers see the old file or the whole new one; the last writer wins with identical bytes).

    PDF pages: zoom = dpi / 72, so a 612 pt wide page at 150 dpi is 1275 px wide.
    Images: treated as pages whose points are pixels, zoom = min(dpi / 72, 1): a thumbnail dpi
    below 72 downscales, higher dpi shows the image at its own size (never upscaled; the
    browser can zoom). Output is also capped at MAX_RENDER_PIXELS.
    """
    fmt = str(fmt).lower()
    dpi = clamp_dpi(dpi)
    target = cache_path(cache_dir or default_cache_dir(), sha256, page, dpi, fmt)
    if target.is_file():
        return target
    label = name or Path(source_path).name
    kind = sniff_file(source_path, label)
    if kind == "PDF":
        try:
            pixels = pdf.render_pixels(source_path, page, dpi=dpi, max_pixels=MAX_RENDER_PIXELS)
        except pdf.RendererError as exc:
            raise from_pdf_error(label, exc) from exc
    else:
        limit = int(max_pixels or limits.setting("EVIDENCE_MAX_PIXELS", DEFAULT_MAX_PIXELS))
        pixels = image_pixels(source_path, label, kind, page, dpi, limit)
    _write_atomic(target, encode_rgb(pixels, fmt))
    return target


def _write_atomic(target: Path, data: bytes) -> None:
    """Write ``data`` to ``target`` via a temp file in the same folder + os.replace.

    No fsync: this is a cache, and a render lost in a crash is simply made again.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; a web server may serve the cache
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
