"""Raster evidence (PNG, JPEG, TIFF, WebP) through Pillow: open safely, size, decode to pixels.

An image is treated as a page whose size in points is its size in pixels after EXIF
orientation (what browsers display); a multi-frame TIFF has one page per frame.
"""

from __future__ import annotations

import io

from reviews.evidence.encode import Pixels
from reviews.evidence.errors import EvidenceError
from reviews.evidence.limits import MAX_RENDER_PIXELS


def format_label(fmt: str) -> str:
    """How a format is named in messages: WebP, PNG, JPEG, TIFF."""
    return {"WEBP": "WebP"}.get(fmt, fmt)


def header_dimensions(data: bytes, fmt: str) -> tuple[int, int] | None:
    """Width/height from the file header without decoding (None if it cannot be read).

    Pillow's format plugin reads only the header; it is called directly, not through
    ``Image.open``, whose own bomb guard would refuse a huge image before *our* limit could,
    without its size in the message.
    """
    from PIL import JpegImagePlugin, PngImagePlugin, TiffImagePlugin, WebPImagePlugin

    plugin = {
        "PNG": PngImagePlugin.PngImageFile,
        "JPEG": JpegImagePlugin.JpegImageFile,
        "TIFF": TiffImagePlugin.TiffImageFile,
        "WEBP": WebPImagePlugin.WebPImageFile,
    }.get(fmt)
    if plugin is None:
        return None
    try:
        with plugin(io.BytesIO(data)) as image:
            return image.size
    except Exception:  # a truncated or malformed header: Pillow's open will say what is wrong
        return None


def pixel_limit(max_pixels: int) -> int:
    """The effective pixel limit: ours, or Pillow's own guard if that is lower."""
    from PIL import Image

    pillow = Image.MAX_IMAGE_PIXELS
    return min(max_pixels, int(pillow)) if pillow else max_pixels


def check_pixels(name: object, width: int, height: int, limit: int) -> None:
    """Refuse an image of ``width`` x ``height`` past ``limit`` pixels (or with none)."""
    if width <= 0 or height <= 0:
        raise EvidenceError(name, "is a corrupt image (it has no pixels)", code="corrupt_image")
    if width * height > limit:
        raise EvidenceError(
            name,
            f"is too large to open: {width} x {height} pixels = "
            f"{width * height / 1e6:,.1f} megapixels (limit {limit / 1e6:,.1f})",
            code="too_many_pixels",
        )


def oriented_size(image, width: int, height: int) -> tuple[int, int]:
    """Size after EXIF orientation (what browsers display): 5-8 swap width and height."""
    try:
        orientation = image.getexif().get(0x0112)
    except Exception:
        orientation = None
    return (height, width) if orientation in (5, 6, 7, 8) else (width, height)


def open_image(source, name: object, fmt: str):
    """Pillow open restricted to the sniffed format (no guessing, no EPS/Ghostscript)."""
    from PIL import Image

    if isinstance(source, bytes | bytearray | memoryview):
        source = io.BytesIO(source)
    try:
        image = Image.open(source, formats=[fmt])
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise EvidenceError(
            name, f"is too large to open safely ({exc})", code="too_many_pixels"
        ) from exc
    except Exception as exc:
        raise EvidenceError(
            name,
            f"is a damaged {format_label(fmt)} image and cannot be opened",
            code="corrupt_image",
        ) from exc
    if image.format != fmt:
        image.close()
        raise EvidenceError(name, f"is not a valid {format_label(fmt)} image", code="corrupt_image")
    return image


def frame_count(image, fmt: str) -> int:
    """Pages of an open image: a TIFF's frames, else 1 (an animation is one page)."""
    return int(getattr(image, "n_frames", 1) or 1) if fmt == "TIFF" else 1


def seek_page(image, fmt: str, name: object, page: int) -> None:
    """Move ``image`` to ``page`` (1-based) or refuse a page it does not have."""
    frames = frame_count(image, fmt)
    if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= frames:
        raise EvidenceError(name, f"has no page {page} (it has {frames})", code="no_such_page")
    if page > 1:
        image.seek(page - 1)


def image_page_size(source, name: object, fmt: str, page: int) -> tuple[float, float]:
    """(width, height) in pixels of ``page`` as displayed."""
    with open_image(source, name, fmt) as image:
        seek_page(image, fmt, name, page)
        w, h = oriented_size(image, *image.size)
        return float(w), float(h)


def image_pixels(
    source,
    name: object,
    fmt: str,
    page: int,
    dpi: int,
    limit: int,
    max_output: int = MAX_RENDER_PIXELS,
) -> Pixels:
    """``page`` decoded to RGB pixels at ``dpi`` (zoom = min(dpi / 72, 1), never upscaled).

    ``limit`` bounds the decoded image, ``max_output`` the result (downscaled to fit); boxes
    scale by image width / page width.
    """
    from PIL import Image, ImageOps

    with open_image(source, name, fmt) as image:
        seek_page(image, fmt, name, page)
        try:
            raw_w, raw_h = image.size
            check_pixels(name, raw_w, raw_h, limit)
            zoom = min(dpi / 72.0, 1.0)
            if raw_w * raw_h * zoom * zoom > max_output:
                zoom = (max_output / (raw_w * raw_h)) ** 0.5
            out_w, out_h = max(1, round(raw_w * zoom)), max(1, round(raw_h * zoom))
            turned = oriented_size(image, 1, 2) == (2, 1)  # EXIF says rotate by 90 degrees
            if fmt == "JPEG" and zoom < 1:
                image.draft("RGB", (out_w, out_h))  # DCT-domain downscale: much less work
            image.load()
            frame = image
            if image.getexif().get(0x0112, 1) != 1:
                frame = ImageOps.exif_transpose(image)
            frame = to_rgb(frame)
            size = (out_h, out_w) if turned else (out_w, out_h)
            if frame.size != size:
                frame = frame.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
            return Pixels(frame.width, frame.height, frame.width * 3, frame.tobytes())
        except EvidenceError:
            raise
        except Exception as exc:
            raise EvidenceError(
                name,
                f"is a truncated or damaged {format_label(fmt)} image",
                code="corrupt_image",
            ) from exc


def to_rgb(image):
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
