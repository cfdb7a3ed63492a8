"""Broken evidence for tests and the bad-input corpus: generated, never committed as files.

Each is small and fast to build (the 20k x 20k PNG bomb is 52 KB), and each must be refused
by the evidence service with its own clear message.
"""

from __future__ import annotations

import math
import struct
import zlib

from reviews.demo import documents
from reviews.evidence import DrawText, build_pdf, encrypt_pdf


def zero_page_pdf() -> bytes:
    """A well-formed PDF whose page tree is empty (/Kids [], /Count 0).

    PyMuPDF opens it with page_count == 0; evidence refuses it as "has no pages".
    """
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [] /Count 0 >>",
    ]
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def encrypted_pdf(password: str = "open-sesame") -> bytes:  # noqa: S107 - test data
    """A one-page PDF that needs ``password`` to open (AES-256)."""
    plain = build_pdf([[DrawText(72, 72, "Confidential statement", size=12)]])
    return encrypt_pdf(plain, user_password=password)


def truncated_png() -> bytes:
    """The receipt cut in half: a valid header, then the pixel data stops."""
    data = documents.receipt_png()
    return data[: len(data) // 2]


def bomb_png(width: int = 20000, height: int = 20000) -> bytes:
    """A complete, valid 1-bit PNG of ``width`` x ``height`` black pixels, made cheaply.

    20000 x 20000 is ~48 KB on disk but 400 megapixels decoded (Pillow would need ~400 MB).
    Building it never holds more than one 256 KB block: the raw rows are all zero, so one
    block is deflated once (full flush => the compressor state resets, so every repeat of the
    block compresses to the same bytes), repeated, and closed with our own adler32.
    """
    if width <= 0 or height <= 0 or width >= 2**31 or height >= 2**31:
        raise ValueError("PNG dimensions must be 1..2**31-1")
    row = 1 + math.ceil(width / 8)  # filter byte + packed 1-bit pixels, all zero
    rows_per_block = max(1, (256 * 1024) // row)
    full_blocks, rest_rows = divmod(height, rows_per_block)
    block = bytes(row * rows_per_block)

    comp = zlib.compressobj(9)
    parts: list[bytes] = []
    adler = 1
    if full_blocks:
        first = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)  # starts with the header
        again = comp.compress(block) + comp.flush(zlib.Z_FULL_FLUSH)
        parts.append(first)
        parts.extend([again] * (full_blocks - 1))
        for _ in range(full_blocks):
            adler = zlib.adler32(block, adler)
    if rest_rows:
        rest = bytes(row * rest_rows)
        parts.append(comp.compress(rest) + comp.flush(zlib.Z_FULL_FLUSH))
        adler = zlib.adler32(rest, adler)
    # Final empty fixed-Huffman block (BFINAL=1, BTYPE=01, end-of-block) + adler32.
    parts.append(b"\x03\x00" + struct.pack(">I", adler))
    idat = b"".join(parts)

    def chunk(tag: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(tag + data)
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", crc)

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)  # 1-bit greyscale
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
