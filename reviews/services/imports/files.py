"""Images and PDFs straight in (format `files`): each file becomes an item with that file as its
evidence, asked the questions the import asks for (`--questions criterion:NAME`, the project's
own), ready to rate.

It reads one image or PDF, several at once, a folder of them (subfolders too, in name order) or
a .zip of them (read, never extracted, with a review bundle's limits). An item's id is the
file's name (its path inside the folder or zip): importing the same file again changes
nothing, and another file under the same name is refused, never swapped in. Every file is read
and checked like any evidence (size, pages, pixels, a real open: `reviews/evidence`) before
anything is written; a file that is not an image or PDF is refused by name.

Each file goes in as a review case with one source and no rows (`import_reviews.import_review`),
so the item, its evidence, its timeline and its export are those of any review file.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from reviews.evidence import EvidenceError, inspect_evidence, sniff
from reviews.formats import limits
from reviews.formats.bundle import zip_members
from reviews.formats.detect import Sniffer
from reviews.formats.errors import FormatError
from reviews.formats.review_file import ReviewFile
from reviews.services.files.documents import read_evidence
from reviews.services.imports.pipeline import ImportContext
from reviews.services.imports.registry import ImportKind, register_import
from reviews.services.imports.review_files import import_review

FORMAT = "files"
ACCEPTED = "an image (PNG, JPEG, WebP, TIFF) or a PDF"
ARTIFACT = "file"  # each item's one source
_JUNK = (".DS_Store", "Thumbs.db", "desktop.ini")


@dataclass(frozen=True)
class _File:
    name: str  # the item's id and its source's path: relative to the folder or zip
    size: int
    open: Callable[[], bytes]  # the bytes, refused by size before they are read


def _never(obj: dict) -> bool:
    return False  # never a JSON document: detected by its magic bytes (container "evidence")


class FilesImporter:
    """One image or PDF, several, a folder or a .zip of them: an item each."""

    sniffer = Sniffer(FORMAT, _never, container="evidence")
    rank = 3

    def __init__(self, context: ImportContext):
        self.context = context

    def validate(self, path: Path | Sequence[Path]) -> None:
        with self._files(path) as files:
            for file in files:
                self._checked(file)

    def write(self, path: Path | Sequence[Path]) -> None:
        context = self.context
        with self._files(path) as files:
            for file in files:
                data = file.open()  # checked again as it is stored (document_for_bytes)
                review = ReviewFile(
                    case_id=file.name, sources=[{"artifact_id": ARTIFACT, "path": file.name}]
                )
                import_review(
                    review,
                    context,
                    opener=lambda _relative, data=data: data,
                    record=f'file "{file.name}"',
                )

    def _checked(self, file: _File) -> bytes:
        where = {"file": self.context.file, "record": f'file "{file.name}"'}
        try:
            data = file.open()
            if sniff(data[:1024]) is None:
                raise FormatError(
                    f"not {ACCEPTED}; a folder or .zip of files holds only those (import "
                    "records and review files on their own)",
                    **where,
                )
            inspect_evidence(data, name=file.name)
        except EvidenceError as error:
            raise FormatError(str(error), **where) from None
        except (zipfile.BadZipFile, OSError, EOFError) as error:
            raise FormatError(f"cannot read this file ({error})", **where) from None
        return data

    @contextmanager
    def _files(self, path: Path | Sequence[Path]) -> Iterator[list[_File]]:
        paths = [path] if isinstance(path, Path) else list(path)
        with ExitStack() as stack:
            files: list[_File] = []
            for one in paths:
                if one.is_dir():
                    files += _folder(one, self.context.file)
                elif zipfile.is_zipfile(one):
                    files += _zipped(stack, one, self.context.file if len(paths) == 1 else one.name)
                else:
                    files.append(_File(one.name, one.stat().st_size, _reader(one)))
            _check_names(files, self.context.file)
            yield files


def _reader(path: Path) -> Callable[[], bytes]:
    return lambda: read_evidence(path, name=path.name)


def _folder(folder: Path, file: str) -> list[_File]:
    """Every file under `folder`, in name order (links are not followed: a folder of files is
    the user's own, but a link could reach anywhere)."""
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(root) / name
            if name.startswith(".") or name in _JUNK or path.is_symlink():
                continue
            relative = path.relative_to(folder).as_posix()
            found.append(_File(relative, path.stat().st_size, _reader(path)))
    if not found:
        raise FormatError(f"the folder holds no file; it should hold {ACCEPTED}s", file=file)
    return found


def _zipped(stack: ExitStack, path: Path, file: str) -> list[_File]:
    zf = stack.enter_context(zipfile.ZipFile(path))
    members = zip_members(zf, file=file)

    def reader(name: str, info: zipfile.ZipInfo) -> Callable[[], bytes]:
        def read() -> bytes:
            with zf.open(info) as stream:
                return read_evidence(stream, name=name, size=info.file_size)

        return read

    files = [
        _File(name, info.file_size, reader(name, info))
        for name, info in sorted(members.items())
        if name.rsplit("/", 1)[-1] not in _JUNK
    ]
    if not files:
        raise FormatError(f"the .zip holds no file; it should hold {ACCEPTED}s", file=file)
    return files


def _check_names(files: list[_File], file: str) -> None:
    if len(files) > limits.current().records:
        raise FormatError(limits.message("records", "the number of files", len(files)), file=file)
    seen: set[str] = set()
    for one in files:
        if one.name in seen:
            raise FormatError(
                "two files with this name: an item's id is its file's name, so rename one "
                "or import them in folders",
                file=file,
                record=f'file "{one.name}"',
            )
        seen.add(one.name)


register_import(ImportKind.FORMAT, FilesImporter.sniffer.format, FilesImporter)
