"""Step 1 of an import: which registered format reads a file (or several images and PDFs, or
a folder of them), and the error that says what a format reads when it cannot."""

from __future__ import annotations

import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path

from reviews.evidence import sniff
from reviews.formats import limits
from reviews.formats.bundle import holds_review_files
from reviews.formats.detect import EVIDENCE_HINT, HEAD_BYTES, detect_format
from reviews.formats.errors import FormatError
from reviews.services.imports.registry import ImportKind, registered


def importers() -> dict:  # name -> Importer class, by rank
    return registered(ImportKind.FORMAT)


def import_formats() -> tuple[str, ...]:
    """The registered format names (what `--format` and the upload form offer), by rank."""
    return tuple(importers())


def detect(name: str, head: bytes) -> str:
    """Step 1: the format of a file from its name and first bytes."""
    return detect_format(name, head, [i.sniffer for i in importers().values()])


FILES = "files"  # the format of images and PDFs (import_files.py)


def choose_format(path: Path | Sequence[Path], *, name: str, requested: str | None) -> str:
    """The format that reads `path` (several paths, or a folder: images and PDFs); a format
    asked for that cannot read it is refused with what it reads and where such files go."""
    if requested and requested not in importers():
        raise FormatError(
            f"unknown format {requested!r} (choose one of: {', '.join(importers())})", file=name
        )
    if not isinstance(path, Path) or path.is_dir():
        return _files_only(path, name=name, requested=requested)
    size = path.stat().st_size
    if size > limits.current().file_bytes:
        raise FormatError(limits.message("file_bytes", "this file's size", size), file=name)
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
    kind = sniff(head)
    if requested and requested != FILES and kind is not None:
        raise FormatError(
            f"{_a(kind)}, not {requested} ({_READS.get(requested, requested + ' files')}); "
            f"{EVIDENCE_HINT}: leave the format to be detected, or choose {FILES}",
            file=name,
        )
    if requested == FILES and kind is None and not _zip_of_files(path, head):
        raise FormatError(
            f"not an image or PDF: the {FILES} format reads images (PNG, JPEG, WebP, TIFF) and "
            "PDFs, one item each, or a folder or .zip of them; records, review files and "
            "TextFlow results are detected when no format is chosen",
            file=name,
        )
    if requested:
        return requested
    chosen = detect(name, head)
    if chosen != FILES and _zip_of_files(path, head):
        return FILES
    if head.startswith(b"PK\x03\x04"):
        return _zipped_array(path) or chosen
    return chosen


# What each text format reads, for the error that names a file it cannot read.
_READS = {
    "review": "it reads review files: .json, .jsonl or a .zip bundle of them",
    "jsonl": "it reads typed JSONL records",
    "csv": "it reads CSV records or a path,expected table",
    "textflow": "it reads TextFlow evaluated results (.json)",
    "label-studio": "it reads Label Studio's JSON export, or a .zip of it with its media",
}


def _a(kind: str) -> str:
    return "a PDF" if kind == "PDF" else f"a {kind} image"


def _zip_of_files(path: Path, head: bytes) -> bool:
    """A .zip holding no review file: images and PDFs to import one item each."""
    return head.startswith(b"PK\x03\x04") and not holds_review_files(path)


def _zipped_array(path: Path) -> str | None:
    """The format of a .zip whose one .json is a top-level array (a format whose files are
    arrays, shipped with its media: Label Studio's export), judged by that file's head; else
    None (a review bundle's .json files are objects)."""
    try:
        with zipfile.ZipFile(path) as zf:
            jsons = [i for i in zf.infolist() if i.filename.lower().endswith(".json")]
            if len(jsons) != 1:
                return None
            with zf.open(jsons[0]) as stream:
                head = stream.read(HEAD_BYTES)
    except (zipfile.BadZipFile, OSError, EOFError, zlib.error, NotImplementedError):
        return None  # the bundle reader names what is wrong with it
    if not head.lstrip().startswith(b"["):
        return None
    try:
        return detect(jsons[0].filename, head)
    except FormatError:
        return None


def _files_only(paths, *, name: str, requested: str | None) -> str:
    """Several files at once, or a folder: only images and PDFs (and folders and .zips of
    them) come that way; any other file is named."""
    if requested and requested != FILES:
        raise FormatError(
            f"several files or a folder import only as {FILES} (images and PDFs); import "
            f"{requested} files one at a time",
            file=name,
        )
    for path in [paths] if isinstance(paths, Path) else paths:
        if path.is_dir():
            continue
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
        if sniff(head) is None and not _zip_of_files(path, head):
            raise FormatError(
                "not an image or PDF: several files at once (or a folder) are images "
                "(PNG, JPEG, WebP, TIFF) and PDFs, one item each; import records, review "
                "files and TextFlow results one file at a time",
                file=path.name,
            )
    return FILES
