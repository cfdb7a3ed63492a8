"""Evidence page images and OCR word lists for the viewer, cached in storage under a size bound.

Renders live in the default storage (the media folder, or the S3 bucket) under ``renders/``,
named by content (sha256, page, dpi, format), and are indexed by CachedRender rows in the
shared database. A miss renders, stores the file, records its size and evicts the least
recently used files until the cache holds at most ``EVIDENCE_CACHE_MAX_BYTES``. A hit is one
indexed SELECT and a read from storage; its use is recorded at most once per TOUCH_EVERY, so a
page viewed often costs no write per request.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import IO

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import OperationalError, transaction
from django.db.models import Sum
from django.utils import timezone

from reviews import evidence
from reviews.models import CachedRender, Document, DocumentKind
from reviews.services.files.stored import path_or_bytes

logger = logging.getLogger(__name__)

PREFIX = "renders/"
TOUCH_EVERY = timedelta(minutes=1)
DEFAULT_MAX_BYTES = 2 * 1024**3


def page_image(document: Document, page: int, *, dpi: int, fmt: str) -> IO[bytes]:
    """``page`` of ``document`` as PNG/WebP at one of the zoom levels (ValueError otherwise)."""
    name = PREFIX + evidence.render_key(document.sha256, page, dpi, fmt)
    return _cached(
        name,
        lambda: evidence.render_page(
            path_or_bytes(document.file), page, dpi=dpi, fmt=fmt, name=document.original_name
        ),
    )


def words_available(document: Document) -> bool:
    """Whether ``document``'s pages can have words (PDF text, or OCR for images)."""
    return document.kind != DocumentKind.IMAGE or evidence.ocr_available()


def page_words(document: Document, page: int) -> list[evidence.Word]:
    """Words of ``page``: a PDF's text layer (fast, not cached), an image's OCR (cached)."""
    if document.kind != DocumentKind.IMAGE:
        return evidence.page_words(path_or_bytes(document.file), page, name=document.original_name)
    if not evidence.ocr_available():
        return []
    sha = document.sha256
    name = f"{PREFIX}{sha[:2]}/{sha}/p{int(page)}.words.json"

    def read() -> bytes:
        words = evidence.page_words(path_or_bytes(document.file), page, name=document.original_name)
        return json.dumps([[*w.bbox, w.text] for w in words]).encode()

    with _cached(name, read) as handle:
        return [evidence.Word(*row) for row in json.loads(handle.read())]


def locate_quote(document: Document, page: int, quote: str) -> list[list[float]]:
    """Boxes of ``quote`` on ``page`` (images: matched against their OCR words)."""
    if document.kind == DocumentKind.IMAGE:
        return evidence.find_quote(page_words(document, page), quote)
    return evidence.locate_quote(
        path_or_bytes(document.file), page, quote, name=document.original_name
    )


def _cached(name: str, build: Callable[[], bytes]) -> IO[bytes]:
    row = CachedRender.objects.filter(name=name).first()
    if row is not None:
        try:
            handle = default_storage.open(name, "rb")
        except FileNotFoundError:  # evicted by another process between the SELECT and now
            handle = None
        if handle is not None:
            now = timezone.now()
            if now - row.used_at >= TOUCH_EVERY:
                _best_effort(CachedRender.objects.filter(pk=row.pk).update, used_at=now)
            return handle
    data = build()
    _store(name, data)
    return io.BytesIO(data)


def _store(name: str, data: bytes) -> None:
    # A file without a row is a leftover (a crash mid-write, a lost race): not trusted.
    default_storage.delete(name)
    saved = default_storage.save(name, ContentFile(data))
    if saved != name:  # another process stored the same render meanwhile: same bytes
        default_storage.delete(saved)
    _best_effort(
        CachedRender.objects.update_or_create,
        name=name,
        defaults={"size_bytes": len(data), "used_at": timezone.now()},
    )
    _best_effort(evict)


def _best_effort(write, *args, **kwargs) -> None:
    """Run a cache-index write; if the database refuses it (a lock held too long), serve the
    page anyway: the render is simply made again next time, and the next miss evicts."""
    try:
        with transaction.atomic():
            write(*args, **kwargs)
    except OperationalError as exc:
        logger.warning("render cache index not updated: %s", exc)


def evict(max_bytes: int | None = None) -> int:
    """Delete least recently used renders until the cache fits; returns how many went."""
    limit = max_bytes if max_bytes is not None else cache_max_bytes()
    total = CachedRender.objects.aggregate(total=Sum("size_bytes"))["total"] or 0
    removed = 0
    if total <= limit:
        return removed
    oldest = CachedRender.objects.order_by("used_at", "pk").values_list("pk", "name", "size_bytes")
    while total > limit:
        batch = list(oldest[:200])
        if not batch:
            break
        for pk, name, size in batch:
            if total <= limit:
                break
            # Row first: a reader that misses the row re-renders rather than reading a file
            # being deleted; whoever deleted the row deletes the file.
            if CachedRender.objects.filter(pk=pk).delete()[0]:
                default_storage.delete(name)
                removed += 1
            total -= size  # gone either way (another process may have evicted it)
    return removed


def cache_max_bytes() -> int:
    return int(getattr(settings, "EVIDENCE_CACHE_MAX_BYTES", DEFAULT_MAX_BYTES))
