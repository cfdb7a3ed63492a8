"""Storing evidence files once by content, inside an import's transaction.

Files are written to storage before the database commits; if the import fails, the files it
newly wrote are removed again (`StoredFiles.discard`), so a failed import leaves nothing behind.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import BinaryIO

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction

from reviews.evidence import DEFAULT_MAX_BYTES, EvidenceError, inspect_evidence
from reviews.models import Document

_CHUNK = 1 << 20


@dataclass
class StoredFiles:
    """Storage names written during one import, to remove if it rolls back."""

    names: list[str] = field(default_factory=list)
    on_store: Callable[[str], None] | None = None  # told each name (a background job's journal)

    def add(self, name: str) -> None:
        self.names.append(name)
        if self.on_store is not None:
            self.on_store(name)

    def discard(self) -> None:
        """Remove them, except any a concurrent import committed a Document for meanwhile."""
        from reviews.services.files.gc import remove_unreferenced

        remove_unreferenced(self.names)
        self.names.clear()


def read_evidence(
    source: str | os.PathLike | BinaryIO, *, name: str, size: int | None = None
) -> bytes:
    """The bytes of an evidence file, refused by its size BEFORE it is read.

    `source` is a path (its size comes from the file system) or a binary stream; pass `size`
    when it is known (a zip member's declared size: zipfile never reads past it). Reading goes
    in 1 MB chunks and stops at the limit + 1 byte whatever the size claimed. Over
    ``EVIDENCE_MAX_BYTES``: EvidenceError too_large, worded like ``inspect_evidence``.
    """
    limit = int(getattr(settings, "EVIDENCE_MAX_BYTES", None) or DEFAULT_MAX_BYTES)
    if isinstance(source, str | os.PathLike):
        with open(source, "rb") as handle:
            known = os.fstat(handle.fileno()).st_size if size is None else size
            return read_evidence(handle, name=name, size=known)
    if size is not None:
        _check_size(name, size, limit)
    chunks, total = [], 0
    # Not one read(limit + 1): that allocates the whole limit up front, even for a small file.
    while chunk := source.read(min(_CHUNK, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise EvidenceError(
                name,
                f"is too large: more than {_mb(limit)} (limit {_mb(limit)})",
                code="too_large",
            )
    return b"".join(chunks)


def _check_size(name: str, size: int, limit: int) -> None:
    if size > limit:
        reason = f"is too large: {_mb(size)} (limit {_mb(limit)})"
        raise EvidenceError(name, reason, code="too_large")


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):,.1f} MB"


def document_for_bytes(data: bytes, *, name: str, written: StoredFiles) -> tuple[Document, bool]:
    """The Document holding `data` (created if new); raises EvidenceError for unusable files."""
    info = inspect_evidence(data, name=name)
    existing = Document.objects.filter(sha256=info.sha256).first()
    if existing is not None:
        return existing, False
    storage_name = f"documents/{info.sha256[:2]}/{info.sha256}{info.extension}"
    if not default_storage.exists(storage_name):
        # Named before it is written: a worker killed while it writes leaves no file its job's
        # journal does not name. Naming a file never written, or another import's, is safe:
        # files are removed only if no committed Document references them, under the
        # evidence lock no import holds then (reviews/services/files/gc.py).
        written.add(storage_name)
        if (saved := default_storage.save(storage_name, ContentFile(data))) != storage_name:
            written.add(saved)  # the name was taken meanwhile
            storage_name = saved
    fields = dict(
        sha256=info.sha256,
        kind=info.kind,
        mime=info.mime,
        file=storage_name,
        original_name=name.rsplit("/", 1)[-1][:255],
        page_count=info.page_count,
        page_sizes=[[round(w, 2), round(h, 2)] for w, h in info.page_sizes],
        size_bytes=info.size_bytes,
        width=info.width,
        height=info.height,
    )
    # A savepoint: on PostgreSQL a concurrent import storing the same file makes this insert
    # wait, then fail once that import commits; its row is then the document.
    try:
        with transaction.atomic():
            return Document.objects.create(**fields), True
    except IntegrityError:
        return Document.objects.get(sha256=info.sha256), False


__all__ = ["EvidenceError", "StoredFiles", "document_for_bytes", "read_evidence"]
