"""Page images made to fit what a provider accepts: a longest side and a size in bytes.

Each provider class names its limits (`Provider.image_limits`); `fit_image` scales a page down
to the longest side and, when a PNG is still too large, sends it as JPEG at falling quality.
An image already within the limits is sent as it is (its bytes, and so the call's fingerprint,
do not change). Pillow only; no HTTP, no ORM.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import BytesIO


@dataclass(frozen=True)
class ImageLimits:
    max_side: int  # pixels, the longest side
    max_bytes: int  # the encoded image, before base64


class ImageTooLarge(ValueError):
    """No quality makes the page fit; the message names the limit."""


JPEG_QUALITIES = (85, 70, 55, 40)
MIN_SIDE = 64  # smaller than this, a page says nothing: refuse instead


def fit_image(data: bytes, media_type: str, limits: ImageLimits) -> tuple[bytes, str]:
    """(bytes, media type) of the page within `limits`: scaled to the longest side; as PNG if
    that fits, else JPEG at falling quality, then smaller by quarters until it fits."""
    from PIL import Image

    with Image.open(BytesIO(data)) as image:
        if max(image.size) <= limits.max_side and len(data) <= limits.max_bytes:
            return data, media_type
        rgb = image.convert("RGB")
    if max(rgb.size) > limits.max_side:
        rgb.thumbnail((limits.max_side, limits.max_side), Image.Resampling.LANCZOS)
    png = _encode(rgb, "PNG")
    if len(png) <= limits.max_bytes:
        return png, "image/png"
    while min(rgb.size) >= MIN_SIDE:
        for quality in JPEG_QUALITIES:
            jpeg = _encode(rgb, "JPEG", quality=quality)
            if len(jpeg) <= limits.max_bytes:
                return jpeg, "image/jpeg"
        rgb = rgb.resize((rgb.size[0] * 3 // 4, rgb.size[1] * 3 // 4), Image.Resampling.LANCZOS)
    raise ImageTooLarge(f"a page does not fit in {limits.max_bytes:,} bytes, even made small")


def _encode(image, fmt: str, **options) -> bytes:
    out = BytesIO()
    image.save(out, fmt, **options)
    return out.getvalue()
