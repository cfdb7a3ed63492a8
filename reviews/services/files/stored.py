"""Reading stored files where a library needs a local path, whatever the storage."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db.models.fields.files import FieldFile


@contextmanager
def local_path(field_file: FieldFile) -> Iterator[Path]:
    """The file's path on this machine: the stored file itself on a local disk, else a
    temporary copy (object storage), removed on exit. The copy keeps the file's name, since
    formats are detected by name as well as content."""
    try:
        path = Path(field_file.path)
    except NotImplementedError:  # S3 and other remote storages have no local path
        path = None
    if path is not None:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="evalsite-stored-") as folder:
        copy = Path(folder) / Path(field_file.name).name
        with field_file.open("rb") as source, copy.open("wb") as target:
            shutil.copyfileobj(source, target, 1 << 20)
        yield copy


def path_or_bytes(field_file: FieldFile) -> Path | bytes:
    """What the evidence package reads: the local path, else the file's bytes (object storage;
    evidence files are at most EVIDENCE_MAX_BYTES)."""
    try:
        return Path(field_file.path)
    except NotImplementedError:
        with field_file.open("rb") as handle:
            return handle.read()
