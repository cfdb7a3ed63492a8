"""FORMATS §3: the approved reference (ground truth) as JSON and as CSV.

CSV columns: ``case_id,path,expected_value`` (import also accepts ``field_path`` and
``expected``/``value``; see COLUMN_ALIASES).

CSV value rule (round-trips every JSON value):
  * write: a string is written as-is unless the text would itself parse as strict JSON (``12``,
    ``true``, ``null``, ``"x"``, ``[1]``, `` 7``); then, and for every non-string value, the cell
    holds the canonical JSON of the value (so the string ``"12"`` is written ``"12"`` with quotes
    inside the cell, the number 12 as ``12``);
  * read: a cell that parses as strict JSON (no NaN/Infinity) is that JSON value; any other cell
    is the literal string. An empty cell is the empty string.
Hand-written tables therefore read ``1,200.00`` as the string "1,200.00" and ``11`` as the
number 11.

Spreadsheets run a cell starting with ``= + - @``, tab or carriage return as a formula (CSV
injection: model output such as ``=HYPERLINK(...)`` would run on the reader's machine). Such a
string, in a value or a case id, is written as its JSON string (``"=1+1"`` with the quotes),
which a spreadsheet shows as text and this reader turns back into the same string.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .canonical import JsonPath, UtcTime, canonical_json, check_json_path, rows_sha256
from .errors import FormatError, PathValueError, error_from_validation, iter_csv_rows, loads_json
from .review_file import Approval, ReviewFile

CSV_COLUMNS = ("case_id", "path", "expected_value")
# Accepted header spellings on import (FORMATS §3), lower-cased.
COLUMN_ALIASES = {
    "case_id": ("case_id",),
    "path": ("path", "field_path"),
    "expected_value": ("expected_value", "expected", "value"),
}


class ReferenceRow(BaseModel):
    # Rows are what the approval signs: an extra key would ride along unsigned, so refuse it.
    model_config = ConfigDict(extra="forbid")
    path: JsonPath
    expected_value: Any


class ApprovedReference(BaseModel):
    model_config = ConfigDict(extra="allow")
    project: str | None = None  # the project slug the signature binds (format 2)
    case_id: str = Field(min_length=1)
    authority: Literal["ground_truth"] = "ground_truth"
    version: int = Field(ge=1)
    supersedes: Any = None  # previous reference (version number or id), or null
    parent_generated_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    rows: list[ReferenceRow]
    approved_by: str = Field(min_length=1)
    approved_at: UtcTime
    approval: Approval | None = None

    @field_validator("supersedes")
    @classmethod
    def _scalar_or_null(cls, value: Any) -> Any:
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | str)):
            raise ValueError("supersedes must be a version number, an id string or null")
        return value

    @model_validator(mode="after")
    def _rows_consistent(self) -> ApprovedReference:
        seen: set[str] = set()
        for i, row in enumerate(self.rows):
            if row.path in seen:
                raise PathValueError(("rows", i, "path"), f"duplicate path {row.path!r}")
            seen.add(row.path)
        if self.approval and self.approval.sha256 != self.rows_sha256():
            raise PathValueError(("approval", "sha256"), "does not match the sha256 of the rows")
        return self

    def rows_sha256(self) -> str:
        return rows_sha256(self.rows)


def build_reference(
    review: ReviewFile,
    *,
    version: int,
    supersedes: Any = None,
    parent_generated_sha256: str | None = None,
) -> ApprovedReference:
    """The §3 reference of an approved §2 review file (same rows, signer and approval)."""
    if review.status != "approved" or review.approved_at is None:
        raise ValueError(f"case {review.case_id!r} is not approved (status and approved_at)")
    return ApprovedReference(
        case_id=review.case_id,
        version=version,
        supersedes=supersedes,
        parent_generated_sha256=parent_generated_sha256,
        rows=[ReferenceRow(**r) for r in review.reference_rows()],
        approved_by=review.approved_by,
        approved_at=review.approved_at,
        approval=review.approval,
    )


def parse_reference_json(data: bytes, *, file: str) -> ApprovedReference:
    obj = loads_json(data, file=file)
    if not isinstance(obj, dict):
        raise FormatError("expected a JSON object", file=file, path="$")
    try:
        return ApprovedReference.model_validate(obj)
    except ValidationError as exc:
        case = obj.get("case_id")
        record = f'case "{case}"' if isinstance(case, str) and case else None
        raise error_from_validation(exc, file=file, record=record) from None


def dump_reference_json(ref: ApprovedReference) -> bytes:
    """Deterministic: rows sorted by path, 2-space indent, UTF-8, trailing newline."""
    data = ref.model_dump(mode="json")
    data["rows"] = sorted(data["rows"], key=lambda r: r["path"])
    if data.get("approval") is None:
        data.pop("approval", None)
    if data.get("project") is None:  # a format-1 reference names no project
        data.pop("project", None)
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _strict_json(text: str) -> tuple[bool, Any]:
    try:
        return True, loads_json(text)
    except FormatError:
        return False, None


FORMULA_START = frozenset("=+-@\t\r")


def formula_like(text: str) -> bool:
    """Would a spreadsheet run this cell as a formula (see the module docstring)?"""
    return text.lstrip(" ")[:1] in FORMULA_START


def encode_csv_value(value: Any) -> str:
    """See the module docstring: strings as-is unless they would read back as JSON or run as a
    spreadsheet formula."""
    if isinstance(value, str) and not formula_like(value) and not _strict_json(value)[0]:
        return value
    return canonical_json(value).decode("utf-8")


def _encode_case_id(case_id: str) -> str:
    return canonical_json(case_id).decode("utf-8") if formula_like(case_id) else case_id


def _decode_case_id(cell: str) -> str:
    """Only the quoting `_encode_case_id` adds is taken off: other ids are read as written."""
    ok, value = _strict_json(cell)
    return value if ok and isinstance(value, str) and formula_like(value) else cell


def decode_csv_value(cell: str) -> Any:
    ok, value = _strict_json(cell)
    return value if ok else cell


@dataclass(frozen=True)
class ReferenceCsvRow:
    case_id: str
    path: str
    expected_value: Any
    line: int = 0  # where the row started in the file (0 when built in code)


def reference_csv_rows(refs: Iterable[ApprovedReference]) -> Iterator[ReferenceCsvRow]:
    for ref in refs:
        for row in sorted(ref.rows, key=lambda r: r.path):
            yield ReferenceCsvRow(ref.case_id, row.path, row.expected_value)


def write_reference_csv(stream: IO[str], rows: Iterable[ReferenceCsvRow]) -> None:
    """Header ``case_id,path,expected_value``; ``\\n`` line ends; values per the module rule."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        writer.writerow(
            [_encode_case_id(row.case_id), row.path, encode_csv_value(row.expected_value)]
        )


def dump_reference_csv(refs: Iterable[ApprovedReference]) -> bytes:
    buf = io.StringIO()
    write_reference_csv(buf, reference_csv_rows(refs))
    return buf.getvalue().encode("utf-8")


def _header_map(header: list[str], *, file: str, case_id: str | None) -> dict[str, int]:
    names = [h.strip().lower() for h in header]
    found: dict[str, int] = {}
    for column, aliases in COLUMN_ALIASES.items():
        hits = [i for i, n in enumerate(names) if n in aliases]
        if len(hits) > 1:
            raise FormatError(
                f"columns {[header[i] for i in hits]} all mean {column!r}",
                file=file,
                record="line 1",
            )
        if hits:
            found[column] = hits[0]
        elif not (column == "case_id" and case_id):
            also = [a for a in aliases if a != column]
            hint = f" (also accepted: {', '.join(also)})" if also else ""
            raise FormatError(
                f"missing column {column!r}{hint}; header is {header}", file=file, record="line 1"
            )
    return found


def iter_reference_csv(
    stream: IO[bytes] | IO[str], *, file: str, case_id: str | None = None
) -> Iterator[ReferenceCsvRow]:
    """Read ``case_id,path,expected_value`` rows (aliases accepted; see COLUMN_ALIASES).

    Without a ``case_id`` column, pass ``case_id`` (a single-case ``path,expected`` table).
    Errors name the file, ``line N`` and the column as written in the header.
    """
    rows = iter_csv_rows(stream, file=file)
    try:
        _, header = next(rows)
    except StopIteration:
        raise FormatError("empty CSV file (no header)", file=file) from None
    cols = _header_map(header, file=file, case_id=case_id)
    seen: dict[tuple[str, str], int] = {}
    for line, cells in rows:
        record = f"line {line}"
        if len(cells) != len(header):
            raise FormatError(
                f"{len(cells)} cells but the header has {len(header)}", file=file, record=record
            )
        case = _decode_case_id(cells[cols["case_id"]].strip()) if "case_id" in cols else case_id
        path = cells[cols["path"]].strip()
        if not case:
            raise FormatError(
                "empty case_id", file=file, record=record, path=header[cols["case_id"]]
            )
        try:
            check_json_path(path)
        except ValueError as exc:
            raise FormatError(
                str(exc), file=file, record=record, path=header[cols["path"]]
            ) from None
        if (case, path) in seen:
            raise FormatError(
                f"duplicate row for case {case!r} path {path!r} (first on line {seen[case, path]})",
                file=file,
                record=record,
                path=header[cols["path"]],
            )
        seen[case, path] = line
        yield ReferenceCsvRow(case, path, decode_csv_value(cells[cols["expected_value"]]), line)
