"""PNG and WebP encoding of raw RGB pixels (zlib and Pillow; no PyMuPDF).

Both PDF pages (pixels from :mod:`reviews.evidence.pdf`) and raster images (decoded by Pillow)
end up here, so the two kinds of evidence are encoded the same way.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from io import BytesIO


@dataclass(frozen=True, slots=True)
class Pixels:
    """Packed 8-bit RGB pixels, ``stride`` bytes per row (stride >= 3 * width)."""

    width: int
    height: int
    stride: int
    samples: bytes | memoryview


# Measured here on a 150-dpi statement page (1275 x 1650 RGB, 6.3 MB raw), median ms:
#   get_pixmap .......................................  5-7
#   MuPDF pix.tobytes("png") .........................  86   320 KB
#   Pillow PNG compress_level=1 / 0 ..................  70 / 51   359 KB / 6.3 MB
#   Pillow WebP lossy q80 method 0 / method 4 ........  61 / 207  241 KB / 189 KB
#   Pillow WebP lossless method 0 ....................  70   334 KB
#   zlib PNG, filter None, level 1 ...................  30   343 KB   <- chosen for "png"
#   zlib PNG, filter Up/Sub (numpy), level 1 .........  32-34  383 KB
#   zlib PNG, filter None, level 6 ...................  73   320 KB
# So PNG encoding dominates and MuPDF's encoder (zlib's default level with per-row filtering)
# is the slow part. Documents are mostly flat white runs that deflate well unfiltered, so
# filter None + zlib level 1 is ~3x faster than MuPDF's PNG for ~7% more bytes: a first render
# costs about half of PyMuPDF's own render+PNG. WebP (lossy, quality 90, method 0) is offered
# for smaller transfers; it is not faster and blurs thin coloured text slightly.

PNG_ZLIB_LEVEL = 1
WEBP_QUALITY = 90
WEBP_MAX_SIDE = 16383
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def encode_rgb(pixels: Pixels, fmt: str = "png") -> bytes:
    """Encode packed RGB pixels as ``"png"`` (lossless, fast) or ``"webp"`` (lossy, smaller)."""
    w, h, stride = pixels.width, pixels.height, pixels.stride
    if w <= 0 or h <= 0:
        raise ValueError("empty image")
    if len(pixels.samples) < stride * h or stride < 3 * w:
        raise ValueError("pixel buffer too small for its size")
    if fmt == "png":
        # Rows go to zlib in blocks of 64, each row prefixed by its filter byte 0 (None):
        # no full-size temporary copy, and few enough calls that Python overhead is nil.
        samples = memoryview(pixels.samples).cast("B")
        deflate = zlib.compressobj(PNG_ZLIB_LEVEL)
        parts, row_bytes, nul = [], 3 * w, b"\x00"
        for first in range(0, h, 64):
            rows = range(first, min(h, first + 64))
            block = nul + nul.join(samples[y * stride : y * stride + row_bytes] for y in rows)
            parts.append(deflate.compress(block))
        parts.append(deflate.flush())
        idat = b"".join(parts)
        header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8-bit RGB, no interlace
        return b"".join(
            (
                _PNG_SIGNATURE,
                _png_chunk(b"IHDR", header),
                _png_chunk(b"IDAT", idat),
                _png_chunk(b"IEND", b""),
            )
        )
    if fmt == "webp":
        from PIL import Image

        image = Image.frombuffer("RGB", (w, h), bytes(pixels.samples), "raw", "RGB", stride, 1)
        if max(w, h) > WEBP_MAX_SIDE:  # the format's limit; boxes scale by image width anyway
            image.thumbnail((WEBP_MAX_SIDE, WEBP_MAX_SIDE))
        out = BytesIO()
        image.save(out, "WEBP", quality=WEBP_QUALITY, method=0)
        return out.getvalue()
    raise ValueError(f"unsupported format {fmt!r} (png or webp)")
