"""Rendering evidence pages (PDF via the renderer module, images via Pillow), cached on disk
by (sha256, page, dpi, format) so a cached page never touches PyMuPDF."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from reviews.services import renderer
from reviews.services.evidence import (
    _SHA256,
    DEFAULT_DPI,
    DEFAULT_MAX_PIXELS,
    FORMATS,
    MAX_DPI,
    MAX_RENDER_PIXELS,
    MIN_DPI,
    _check_pixels,
    _label,
    _open_image,
    _oriented,
    _setting,
    _sniff_file,
    default_cache_dir,
)
from reviews.services.evidence_types import EvidenceError, _pdf_error

# ---------------------------------------------------------------------------------------------
# Rendering with an on-disk cache


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
    kind = _sniff_file(Path(source_path))
    limit = int(max_pixels or _setting("EVIDENCE_MAX_PIXELS", DEFAULT_MAX_PIXELS))
    if kind == "PDF":
        encoded = _render_pdf_page(source_path, label, page, dpi, fmt)
    elif kind is not None:
        encoded = _render_image_page(source_path, label, kind, page, dpi, fmt, limit)
    else:
        raise EvidenceError(label, "is not a PDF or a supported image", code="unknown_type")
    _write_atomic(target, encoded)
    return target


def _render_pdf_page(source_path, name: object, page: int, dpi: int, fmt: str) -> bytes:
    try:
        pixels = renderer.render_pixels(source_path, page, dpi=dpi, max_pixels=MAX_RENDER_PIXELS)
    except renderer.RendererError as exc:
        raise _pdf_error(name, exc) from exc
    return renderer.encode_rgb(pixels, fmt)


def _render_image_page(
    source_path, name: object, fmt_in: str, page: int, dpi: int, fmt: str, limit: int
) -> bytes:
    from PIL import Image, ImageOps

    with _open_image(source_path, name, fmt_in) as image:
        frames = int(getattr(image, "n_frames", 1) or 1) if fmt_in == "TIFF" else 1
        if page > frames:
            raise EvidenceError(name, f"has no page {page} (it has {frames})", code="no_such_page")
        try:
            if page > 1:
                image.seek(page - 1)
            raw_w, raw_h = image.size
            _check_pixels(name, raw_w, raw_h, limit)
            zoom = min(dpi / 72.0, 1.0)
            if raw_w * raw_h * zoom * zoom > MAX_RENDER_PIXELS:
                zoom = (MAX_RENDER_PIXELS / (raw_w * raw_h)) ** 0.5
            out_w, out_h = max(1, round(raw_w * zoom)), max(1, round(raw_h * zoom))
            turned = _oriented(image, 1, 2) == (2, 1)  # EXIF says rotate by 90 degrees
            if fmt_in == "JPEG" and zoom < 1:
                image.draft("RGB", (out_w, out_h))  # DCT-domain downscale: much less work
            image.load()
            frame = image
            if image.getexif().get(0x0112, 1) != 1:
                frame = ImageOps.exif_transpose(image)
            frame = _to_rgb(frame)
            size = (out_h, out_w) if turned else (out_w, out_h)
            if frame.size != size:
                frame = frame.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
            pixels = renderer.Pixels(frame.width, frame.height, frame.width * 3, frame.tobytes())
        except EvidenceError:
            raise
        except Exception as exc:
            raise EvidenceError(
                name, f"is a truncated or damaged {_label(fmt_in)} image", code="corrupt_image"
            ) from exc
    return renderer.encode_rgb(pixels, fmt)


def _to_rgb(image):
    """8-bit RGB on a white background, whatever the mode (RGBA, P, L, 1, CMYK, I;16...)."""
    from PIL import Image

    if image.mode == "RGB":
        return image
    if image.mode in ("I;16", "I;16L", "I;16B", "I;16N", "I"):
        image = image.convert("I").point(lambda v: v * (1 / 256)).convert("L")
    elif image.mode == "F":
        image = image.convert("L")
    has_alpha = image.mode in ("RGBA", "LA", "PA", "RGBa", "La") or (
        image.mode == "P" and "transparency" in image.info
    )
    if has_alpha:
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")


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
