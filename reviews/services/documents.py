"""Storing evidence files once by content, inside an import's transaction.

Files are written to storage before the database commits; if the import fails, the files it
newly wrote are removed again (`StoredFiles.discard`), so a failed import leaves nothing behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from reviews.models import Document
from reviews.services.evidence import EvidenceError, inspect_evidence


@dataclass
class StoredFiles:
    """Storage names written during one import, to remove if it rolls back."""

    names: list[str] = field(default_factory=list)

    def discard(self) -> None:
        for name in self.names:
            default_storage.delete(name)
        self.names.clear()


def document_for_bytes(data: bytes, *, name: str, written: StoredFiles) -> tuple[Document, bool]:
    """The Document holding `data` (created if new); raises EvidenceError for unusable files."""
    info = inspect_evidence(data, name=name)
    existing = Document.objects.filter(sha256=info.sha256).first()
    if existing is not None:
        return existing, False
    storage_name = f"documents/{info.sha256[:2]}/{info.sha256}{info.extension}"
    if not default_storage.exists(storage_name):
        storage_name = default_storage.save(storage_name, ContentFile(data))
        written.names.append(storage_name)
    document = Document.objects.create(
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
    return document, True


__all__ = ["EvidenceError", "StoredFiles", "document_for_bytes"]
