"""Reading exported approvals for `verify_approval`: .json, .jsonl and .csv (+ its signature
file), in any letter case, in a file or a folder. Strict JSON: a duplicate key is an error
(the first value could be tampered while a reader takes the last).

Each approval becomes a `Signed` record: where it is, the case, the rows its content states,
its approval block and the file's own statements about it (which must equal the signed ones).
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reviews.formats.bundle import zip_members
from reviews.formats.errors import FormatError, iter_json_lines, loads_json
from reviews.formats.reference import ApprovedReference, iter_reference_csv
from reviews.formats.review_file import ReviewFile
from reviews.formats.signed import SIGNATURES_SUFFIX, citations_of

SUFFIXES = (".json", ".jsonl", ".csv")
# Outer statements a file makes, by kind: the file's key -> the signed field it must equal.
REVIEW_CLAIMS = {
    "project": "project",
    "case_id": "case_id",
    "ground_truth_version": "version",
    "approved_by": "approved_by",
    "approved_at": "approved_at",
}
REFERENCE_CLAIMS = {
    name: name
    for name in (
        "project",
        "case_id",
        "version",
        "supersedes",
        "parent_generated_sha256",
        "approved_by",
        "approved_at",
    )
}


@dataclass
class Signed:
    where: str  # file, and line for JSONL
    case_id: str
    rows: list[dict] | None = None
    block: dict | None = None
    claims: dict[str, Any] = field(default_factory=dict)  # signed field -> what the file says
    problem: str = ""  # unreadable: why
    citations: list[dict] | None = None  # the evidence a review file itself gives its rows


def is_signature_file(path: Path) -> bool:
    return path.name.lower().endswith(".csv" + SIGNATURES_SUFFIX)


def files_in(path: Path) -> list[Path]:
    if not path.is_dir():
        return [path]
    found = [p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES]
    return sorted(p for p in found if not is_signature_file(p))


def read(path: Path) -> Iterator[Signed]:
    """Every approval in `path` (a file, a folder, or a .zip as the browser's export gives)."""
    if path.is_file() and zipfile.is_zipfile(path):
        yield from _zipped(path)
        return
    for file in files_in(path):
        name = str(file.relative_to(path)) if path.is_dir() else file.name
        suffix = file.suffix.lower()
        try:
            if is_signature_file(file):
                yield from csv_approvals(_csv_beside(file), name)
            elif suffix == ".csv":
                yield from csv_approvals(file, name)
            elif suffix == ".jsonl":
                with file.open("rb") as stream:
                    for line, obj in iter_json_lines(stream, file=name):
                        yield _object(obj, f"{name}, line {line}")
            else:
                yield _object(loads_json(file.read_bytes(), file=name), name)
        except (FormatError, OSError) as error:
            yield Signed(name, "?", problem=str(error))


def _zipped(path: Path) -> Iterator[Signed]:
    """The exported files inside a .zip, read as the folder it holds (under a bundle's limits,
    unpacked into a temporary folder that is removed after), each named `export.zip/member`."""
    try:
        with zipfile.ZipFile(path) as archive, tempfile.TemporaryDirectory() as folder:
            members = zip_members(archive, file=path.name)
            wanted = {
                name: info
                for name, info in members.items()
                if name.lower().endswith(SUFFIXES) or is_signature_file(Path(name))
            }
            for name, info in wanted.items():
                target = Path(folder) / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
            for signed in read(Path(folder)):
                signed.where = f"{path.name}/{signed.where}"
                yield signed
    except (FormatError, zipfile.BadZipFile, OSError) as error:
        yield Signed(path.name, "?", problem=str(error))


def _object(obj: Any, where: str) -> Signed:
    if not isinstance(obj, dict):
        return Signed(where, "?", problem="not a JSON object")
    case = obj.get("case_id") if isinstance(obj.get("case_id"), str) else "?"
    block = obj.get("approval") if isinstance(obj.get("approval"), dict) else None
    content = {k: v for k, v in obj.items() if k != "approval"}
    citations = None
    try:
        if "review_items" in obj or "claims" in obj:
            review = ReviewFile.model_validate(content)
            rows = review.reference_rows()
            citations = citations_of(review, (row["path"] for row in rows))
            claims = REVIEW_CLAIMS
        else:
            reference = ApprovedReference.model_validate(content)
            rows = [row.model_dump(mode="json") for row in reference.rows]
            claims = REFERENCE_CLAIMS
    except ValueError as error:  # pydantic's ValidationError is a ValueError
        return Signed(where, case, problem=f"not a valid exported file: {error}".splitlines()[0])
    stated = {signed: obj[key] for key, signed in claims.items() if key in obj}
    return Signed(where, case, rows, block, stated, citations=citations)


def _csv_beside(signatures: Path) -> Path:
    return signatures.with_name(signatures.name[: -len(SIGNATURES_SUFFIX)])


def signatures_of(csv_file: Path) -> Path | None:
    wanted = (csv_file.name + SIGNATURES_SUFFIX).lower()
    return next((p for p in csv_file.parent.iterdir() if p.name.lower() == wanted), None)


def csv_approvals(csv_file: Path, name: str) -> Iterator[Signed]:
    """One Signed per case of the CSV, its rows from the CSV, its block from the signatures."""
    by_case: dict[str, list[dict]] = {}
    with csv_file.open("rb") as stream:
        for row in iter_reference_csv(stream, file=name):
            by_case.setdefault(row.case_id, []).append(
                {"path": row.path, "expected_value": row.expected_value}
            )
    signatures = signatures_of(csv_file)
    if signatures is None:
        missing = f"no signature file {csv_file.name}{SIGNATURES_SUFFIX} beside the CSV"
        for case in sorted(by_case) or ["?"]:
            yield Signed(name, case, problem=missing)
        return
    manifest = loads_json(signatures.read_bytes(), file=signatures.name)
    approvals = manifest.get("approvals") if isinstance(manifest, dict) else None
    if not isinstance(approvals, list):
        yield Signed(signatures.name, "?", problem="no 'approvals' list")
        return
    seen = set()
    for index, block in enumerate(approvals):
        case = block.get("case_id") if isinstance(block, dict) else None
        where = f"{name} + {signatures.name} $.approvals[{index}]"
        if not isinstance(case, str) or case in seen:
            yield Signed(where, str(case), problem="missing or repeated case_id")
            continue
        seen.add(case)
        yield Signed(where, case, by_case.get(case, []), block, {"case_id": case})
    for case in sorted(set(by_case) - seen):
        yield Signed(name, case, problem="its rows in the CSV carry no signature")
