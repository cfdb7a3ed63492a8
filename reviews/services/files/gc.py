"""Evidence files no committed Document references are removed, and only those.

An import stores evidence files inside its write transaction and records them (`StoredFiles`);
a refused import removes them again. Two imports may store the same file (the name is its
SHA-256), so neither a failing import nor `manage.py evidence_gc` may delete a file just
because it wrote it or sees no row for it: the check and the delete happen under the evidence
lock, which every import's write transaction holds shared. While the exclusive holder looks,
no import is half-way, so "no committed Document row" really means nobody will reference it.

The lock is a PostgreSQL transaction-level advisory lock; on SQLite every write transaction is
IMMEDIATE (one writer at a time), which gives the same guarantee.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from datetime import timedelta

from django.core.files.storage import default_storage
from django.db import connection, transaction

from reviews.models import Document

LOCK_KEY = 0x45564944  # "EVID"
FOLDER = "documents"
CHUNK = 500


def evidence_lock(*, exclusive: bool) -> None:
    """Take the evidence lock for the current transaction (released when it ends)."""
    if connection.vendor == "postgresql":
        function = "pg_advisory_xact_lock" if exclusive else "pg_advisory_xact_lock_shared"
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {function}(%s)", [LOCK_KEY])


def remove_unreferenced(names: Iterable[str]) -> list[str]:
    """Delete those of `names` that no committed Document references; returns them."""
    removed: list[str] = []
    pending = list(dict.fromkeys(names))
    for start in range(0, len(pending), CHUNK):
        chunk = pending[start : start + CHUNK]
        with transaction.atomic():
            evidence_lock(exclusive=True)
            used = set(Document.objects.filter(file__in=chunk).values_list("file", flat=True))
            for name in chunk:
                if name not in used and default_storage.exists(name):
                    default_storage.delete(name)
                    removed.append(name)
    return removed


def _stored_files(folder: str) -> Iterator[str]:
    directories, files = default_storage.listdir(folder)
    for name in files:
        yield f"{folder}/{name}"
    for directory in directories:
        yield from _stored_files(f"{folder}/{directory}")


def evidence_gc(*, older_than: timedelta = timedelta(hours=1)) -> list[str]:
    """Remove evidence files no Document references, once they are `older_than` (a file that
    young may belong to an import still running); returns the names removed."""
    if not default_storage.exists(FOLDER):
        return []
    cutoff = time.time() - older_than.total_seconds()
    return remove_unreferenced(n for n in _stored_files(FOLDER) if _older(n, cutoff))


def _older(name: str, cutoff: float) -> bool:
    try:
        return os.path.getmtime(default_storage.path(name)) < cutoff
    except FileNotFoundError:  # removed since it was listed (a refused import's discard)
        return False
