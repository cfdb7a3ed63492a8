"""A review bundle: a .zip of review files (.json, or one .jsonl) with the evidence they cite.

Evidence is read from the zip, never extracted; member names that escape the bundle, links,
encrypted members, zip bombs (declared sizes, member count) and missing evidence are refused
up front, each with an error naming the case and the path.
"""

from __future__ import annotations

import os
import stat
import zipfile
import zlib
from dataclasses import dataclass
from typing import IO

from . import limits
from .canonical import normalise_relative_path
from .errors import FormatError, check_json_size
from .review_file import ReviewFile, iter_numbered_reviews, parse_review_json

# What a damaged member raises while it is read: a wrong declared size or CRC, bad deflate data.
ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError)
_JUNK_NAMES = (".DS_Store",)  # plus __MACOSX/ and ._* : macOS metadata zipped along


@dataclass(frozen=True)
class BundleCase:
    review: ReviewFile
    member: str  # bundle-relative name of the .json/.jsonl holding it
    line: int | None = None  # for a .jsonl member

    @property
    def record(self) -> str:
        case = f'case "{self.review.case_id}"'
        return f"line {self.line}, {case}" if self.line else case


@dataclass
class ReviewBundle:
    """An opened .zip bundle. Use as a context manager; evidence is read, never extracted."""

    file: str
    cases: list[BundleCase]
    _zf: zipfile.ZipFile
    _members: dict[str, zipfile.ZipInfo]  # bundle-root relative name -> member
    _owns: bool  # opened from a path: ours to close

    def _info(self, path: str) -> zipfile.ZipInfo:
        try:
            name = normalise_relative_path(path)
        except ValueError as exc:
            raise FormatError(str(exc), file=self.file, path=path) from None
        if name not in self._members:
            raise FormatError(f"evidence file {path!r} is not in the bundle", file=self.file)
        return self._members[name]

    def open_evidence(self, path: str) -> IO[bytes]:
        """Open a ``sources[].path`` (bundle-root relative) as a binary stream."""
        return self._zf.open(self._info(path))

    def evidence_size(self, path: str) -> int:
        return self._info(path).file_size

    def close(self) -> None:
        if self._owns:
            self._zf.close()

    def __enter__(self) -> ReviewBundle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ratio_reason(info: zipfile.ZipInfo) -> str | None:
    """A member that inflates more than the zip ratio limit allows (a zip bomb)."""
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > 1024 * 1024 and ratio > limits.current().zip_ratio:
        return limits.message("zip_ratio", "this member's compression ratio", int(ratio))
    return None


def _bundle_members(zf: zipfile.ZipFile, file: str, max_members: int) -> dict:
    max_total = limits.current().zip_bytes
    infos = zf.infolist()
    if len(infos) > max_members:
        raise FormatError(f"bundle has {len(infos)} members (limit {max_members})", file=file)
    members: dict[str, zipfile.ZipInfo] = {}
    total = 0
    for info in infos:
        name = info.filename
        base = name.split("/")[-1]
        if info.is_dir() or name.startswith("__MACOSX/") or base in _JUNK_NAMES or base[:2] == "._":
            continue
        try:
            reason, logical = None, normalise_relative_path(name)
        except ValueError as exc:
            reason = f"unsafe member name: {exc}"
        total += info.file_size  # zipfile stops reading at the declared size: a real cap
        if not reason and stat.S_ISLNK(info.external_attr >> 16):
            reason = "symbolic links are not allowed"
        elif not reason and info.flag_bits & 0x1:
            reason = "encrypted members are not supported"
        elif not reason and logical in members:
            reason = "duplicate member name"
        elif not reason and total > max_total:
            reason = limits.message("zip_bytes", "the bundle's uncompressed size", total)
        elif not reason:
            reason = _ratio_reason(info)
        if reason:
            raise FormatError(reason, file=file, record=f'member "{name}"')
        members[logical] = info
    # A zipped folder puts everything under one directory: treat it as the root.
    tops = {n.split("/", 1)[0] for n in members}
    if len(tops) == 1 and all("/" in n for n in members):
        cut = len(tops.pop()) + 1
        members = {n[cut:]: i for n, i in members.items()}
    return members


def _bundle_cases(zf: zipfile.ZipFile, file: str, members: dict) -> list[BundleCase]:
    jsonl = [n for n in members if n.lower().endswith(".jsonl")]
    if len(jsonl) > 1:
        raise FormatError(f"a bundle holds at most one .jsonl, found {sorted(jsonl)}", file=file)
    cases: list[BundleCase] = []
    for name, info in members.items():
        if name.lower().endswith(".json"):
            check_json_size(info.file_size, file=f"{file}/{name}")
            cases.append(BundleCase(parse_review_json(zf.read(info), file=f"{file}/{name}"), name))
        elif name in jsonl:
            with zf.open(info) as stream:
                lines = iter_numbered_reviews(stream, file=f"{file}/{name}")
                cases += [BundleCase(review, name, n) for n, review in lines]
    if not cases:
        raise FormatError("bundle contains no review .json or .jsonl file", file=file)
    if len(cases) > limits.current().records:
        raise FormatError(limits.message("records", "the number of cases", len(cases)), file=file)
    owner: dict[str, str] = {}
    for case in cases:
        where = {"file": f"{file}/{case.member}", "record": case.record}
        if case.review.case_id in owner:
            also = owner[case.review.case_id]
            raise FormatError(f"duplicate case_id (also in {also})", path="$.case_id", **where)
        owner[case.review.case_id] = case.member
        for i, src in enumerate(case.review.sources):
            if src.normalised_path not in members:
                reason = f"evidence file {src.path!r} is not in the bundle"
                raise FormatError(reason, path=f"$.sources[{i}].path", **where)
    return cases


REVIEW_SUFFIXES = (".json", ".jsonl")


def zip_members(zf: zipfile.ZipFile, *, file: str, max_members: int = 10_000) -> dict:
    """A zip's members by bundle-root relative name, refused as a bundle's are (unsafe names,
    links, encryption, bombs); junk (macOS metadata) is left out. A damaged zip: FormatError."""
    try:
        return _bundle_members(zf, file, max_members)
    except ZIP_ERRORS as exc:
        raise FormatError(f"corrupt zip member ({exc})", file=file) from None


def holds_review_files(path: str | os.PathLike[str]) -> bool:
    """Whether a .zip holds review files (a review bundle), rather than only evidence files
    (images and PDFs to import one item each). An unreadable zip counts as a bundle: its
    importer says what is wrong with it."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [info.filename for info in zf.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, OSError):
        return True
    return any(name.lower().endswith(REVIEW_SUFFIXES) for name in names)


def read_review_bundle(
    src: str | os.PathLike[str] | IO[bytes],
    *,
    file: str | None = None,
    max_members: int = 10_000,
) -> ReviewBundle:
    """Open a .zip of review ``.json`` files and/or one ``.jsonl`` plus their evidence.

    Every ``sources[].path`` must name a member (relative to the bundle root, or to the single
    top-level folder of a zipped folder); the first missing one raises FormatError naming the
    case and the path. Use as a context manager (a path is closed; a file object is not).
    """
    owns = isinstance(src, str | os.PathLike)
    file = file or (os.fspath(src) if owns else "bundle.zip")
    try:
        zf = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, OSError) as exc:
        raise FormatError(f"not a readable zip file ({exc})", file=file) from None
    try:
        members = _bundle_members(zf, file, max_members)
        return ReviewBundle(file, _bundle_cases(zf, file, members), zf, members, owns)
    except BaseException as exc:
        if owns:
            zf.close()
        if isinstance(exc, ZIP_ERRORS):
            raise FormatError(f"corrupt zip member ({exc})", file=file) from None
        raise
