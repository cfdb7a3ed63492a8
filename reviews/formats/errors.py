"""Errors raised by the file-format layer, and the low-level strict readers that raise them.

Every error names the file, the record (``line 12``, ``key "3"``, ``case "statement-001"``) and
the JSON path inside that record (``$.review_items[0].candidates[1].confidence``), so the importer,
the CLI and the API can show one message that points at the exact spot.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import ValidationError

from . import limits

__all__ = [
    "FormatError",
    "FormatErrors",
    "PathValueError",
    "errors_from_validation",
    "error_from_validation",
    "join_path",
    "iter_csv_rows",
    "iter_json_lines",
    "loads_json",
    "check_json_size",
]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class FormatError(Exception):
    """One problem in one input file."""

    def __init__(
        self,
        reason: str,
        *,
        file: str | None = None,
        record: str | None = None,
        path: str | None = None,
    ) -> None:
        self.file = file
        self.record = record
        self.path = path
        self.reason = reason
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ", ".join(p for p in (self.file, self.record, self.path) if p)
        return f"{where}: {self.reason}" if where else self.reason

    def __repr__(self) -> str:
        return (
            f"FormatError(file={self.file!r}, record={self.record!r}, "
            f"path={self.path!r}, reason={self.reason!r})"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only fields: pickle (task queues, multiprocessing) must rebuild all four.
        return (_rebuild_error, (self.reason, self.file, self.record, self.path))

    def as_dict(self) -> dict[str, str | None]:
        """JSON-friendly form for API responses."""
        return {"file": self.file, "record": self.record, "path": self.path, "reason": self.reason}

    def with_context(self, *, file: str | None = None, record: str | None = None) -> FormatError:
        """Fill in file/record when a lower layer did not know them."""
        return FormatError(
            self.reason,
            file=self.file or file,
            record=self.record or record,
            path=self.path,
        )


class FormatErrors(Exception):
    """Several FormatErrors at once (e.g. every row error of a CSV, for one report)."""

    def __init__(self, errors: Sequence[FormatError]) -> None:
        self.errors = list(errors)
        super().__init__(str(self))

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)

    def __iter__(self):
        return iter(self.errors)

    def __len__(self) -> int:
        return len(self.errors)

    def __reduce__(self) -> tuple[Any, ...]:
        return (FormatErrors, (self.errors,))


def _rebuild_error(reason: str, file: str | None, record: str | None, path: str | None):
    return FormatError(reason, file=file, record=record, path=path)


class PathValueError(ValueError):
    """Raised inside a pydantic validator to point at a path below the validated model.

    pydantic keeps the exception object in ``ctx["error"]``, so the converter can append
    ``loc`` to the model's own location instead of blaming the whole object.
    """

    def __init__(self, loc: Iterable[str | int], message: str) -> None:
        super().__init__(message)
        self.loc = tuple(loc)
        self.message = message


def join_path(loc: Iterable[str | int], root: str = "$") -> str:
    """``("claims", 0, "confidence")`` -> ``$.claims[0].confidence``."""
    out = root
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _IDENT.match(part):
            out += f".{part}"
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def errors_from_validation(
    exc: ValidationError,
    *,
    file: str | None = None,
    record: str | None = None,
    loc_prefix: Sequence[str | int] = (),
    drop_loc: int = 0,
) -> list[FormatError]:
    """Convert every pydantic error into a FormatError with a JSON path.

    ``drop_loc`` removes leading loc parts (e.g. a discriminated union's tag);
    ``loc_prefix`` prepends the location of the validated object inside a larger document.
    """
    out = []
    for err in exc.errors():
        loc = tuple(loc_prefix) + tuple(err["loc"][drop_loc:])
        ctx = err.get("ctx") or {}
        inner = ctx.get("error")
        if isinstance(inner, PathValueError):
            loc += inner.loc
            reason = inner.message
        else:
            reason = err["msg"]
            if reason.startswith("Value error, "):
                reason = reason[len("Value error, ") :]
            value = err.get("input")
            if err["type"] != "missing" and isinstance(value, str | int | float | bool):
                reason += f" (got {_short(value)})"
        out.append(FormatError(reason, file=file, record=record, path=join_path(loc)))
    return out


def error_from_validation(exc: ValidationError, **kwargs: Any) -> FormatError:
    """The first error only (what a parser raises)."""
    return errors_from_validation(exc, **kwargs)[0]


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A silently-dropped duplicate key would hide data; refuse it instead.
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dupe = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"duplicate key {dupe!r}")
    return obj


def _bad_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    # json reads 1e999 as infinity, which no JSON column can store back: refuse it by name.
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of range for a number")
    return value


# Built once: json.loads(..., hooks) would build a decoder per call (slow on big JSONL).
_DECODER = json.JSONDecoder(
    object_pairs_hook=_no_duplicate_keys, parse_constant=_bad_constant, parse_float=_finite_float
)
_NUL = "a NUL character (\\u0000): no database text or JSON column stores it"


def _check_shape(obj: Any, raw_size: int, *, file: str | None, record: str | None) -> None:
    """Nesting depth and string length within the limits and no NUL character in a string,
    else FormatError naming the path.

    Walked only when the raw text could break a limit (more brackets than the depth allows,
    more characters than one string may hold, or an escaped NUL), so ordinary records cost
    nothing extra.
    """
    bound = limits.current()
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(obj, ())]
    while stack:
        value, path = stack.pop()
        if len(path) >= bound.depth and isinstance(value, dict | list) and value:
            reason = limits.message("depth", "JSON nesting")
            raise FormatError(reason, file=file, record=record, path=join_path(path))
        if isinstance(value, str) and len(value) > bound.string_chars:
            reason = limits.message("string_chars", "a string's length", len(value))
            raise FormatError(reason, file=file, record=record, path=join_path(path))
        if isinstance(value, str) and "\x00" in value:
            raise FormatError(_NUL, file=file, record=record, path=join_path(path))
        if isinstance(value, dict):
            for key, child in value.items():
                if len(key) > bound.string_chars:
                    reason = limits.message("string_chars", "a key's length", len(key))
                    raise FormatError(reason, file=file, record=record, path=join_path(path))
                if "\x00" in key:
                    raise FormatError(_NUL, file=file, record=record, path=join_path(path))
                stack.append((child, (*path, key)))
        elif isinstance(value, list):
            stack.extend((child, (*path, i)) for i, child in enumerate(value))


def _may_break_limits(text: str | bytes) -> bool:
    bound = limits.current()
    if len(text) > bound.string_chars:
        return True
    if (b"\\u0000" if isinstance(text, bytes) else "\\u0000") in text:  # a NUL, escaped
        return True
    square, curly = (b"[", b"{") if isinstance(text, bytes) else ("[", "{")
    return text.count(square) + text.count(curly) > bound.depth


def _decode(text: str, *, file: str | None, record: str | None) -> Any:
    try:
        obj = _DECODER.decode(text)
    except RecursionError:  # nested past what the parser can hold: the limit is far below
        reason = limits.message("depth", "JSON nesting")
        raise FormatError(reason, file=file, record=record, path="$") from None
    if _may_break_limits(text):
        _check_shape(obj, len(text), file=file, record=record)
    return obj


def loads_json(
    data: bytes | str, *, file: str | None = None, record: str | None = None, line: bool = False
) -> Any:
    """Strict JSON: UTF-8, no duplicate keys, no NaN/Infinity, within the nesting depth and
    string length limits; errors become FormatError.

    With ``line=True`` (JSONL) the record is already the line, so only the column is reported.
    """
    try:
        if isinstance(data, bytes):
            if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
                raise FormatError(_UTF16, file=file, record=record)
            data = data.decode("utf-8-sig")
        return _decode(data, file=file, record=record)
    except UnicodeDecodeError as exc:
        raise FormatError(
            f"not UTF-8 text ({exc.reason} at byte {exc.start})", file=file, record=record, path="$"
        ) from None
    except json.JSONDecodeError as exc:
        where = f"column {exc.colno}" if line else f"line {exc.lineno} column {exc.colno}"
        # Some of json's messages already end in "at" ("Unterminated string starting at").
        reason = exc.msg.removesuffix(" at")
        raise FormatError(
            f"invalid JSON: {reason} at {where}", file=file, record=record, path="$"
        ) from None
    except ValueError as exc:
        raise FormatError(f"invalid JSON: {exc}", file=file, record=record, path="$") from None


_UTF16 = "UTF-16 text: save the file as UTF-8"


def check_json_size(size: int, *, file: str | None, record: str | None = None) -> None:
    """Refuse a JSON document by its size before it is read."""
    if size > limits.current().json_bytes:
        reason = limits.message("json_bytes", "this JSON document's size", size)
        raise FormatError(reason, file=file, record=record)


def _records_counted(lineno: int, *, file: str | None) -> None:
    if lineno > limits.current().records:
        raise FormatError(
            limits.message("records", "the number of records"), file=file, record=f"line {lineno}"
        )


def iter_json_lines(stream: Any, *, file: str | None = None) -> Any:
    """Yield ``(line_number, parsed_object)`` from a binary JSONL stream, one line at a time.

    Blank lines are skipped; a line longer than the line limit is refused rather than read
    into memory; every line must hold a JSON object; at most the record limit of lines.
    """
    max_line_bytes = limits.current().line_bytes
    lineno = 0
    while True:
        raw = stream.readline(max_line_bytes + 1)
        if not raw:
            return
        lineno += 1
        if isinstance(raw, str):  # tolerate text streams
            raw = raw.encode("utf-8")
        where = f"line {lineno}"
        if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
            raise FormatError(
                limits.message("line_bytes", "a line's length"), file=file, record=where
            )
        if raw.isspace():
            continue
        _records_counted(lineno, file=file)
        try:
            obj = _decode(
                raw.decode("utf-8-sig" if lineno == 1 else "utf-8"), file=file, record=where
            )
        except ValueError:  # includes UnicodeDecodeError; redo slowly for the message
            loads_json(raw, file=file, record=where, line=True)
            raise
        if not isinstance(obj, dict):
            raise FormatError(
                f"expected a JSON object, got {type(obj).__name__}",
                file=file,
                record=where,
                path="$",
            )
        yield lineno, obj


def _bounded_lines(stream: Any, *, file: str | None) -> Iterable[str]:
    """A binary stream's lines as text, each within the line limit (never read whole)."""
    max_line_bytes = limits.current().line_bytes
    lineno = 0
    while raw := stream.readline(max_line_bytes + 1):
        lineno += 1
        if lineno == 1 and raw[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise FormatError(_UTF16, file=file, record="line 1")
        if len(raw) > max_line_bytes and not raw.endswith(b"\n"):
            reason = limits.message("line_bytes", "a line's length")
            raise FormatError(reason, file=file, record=f"line {lineno}")
        yield raw.decode("utf-8")


def iter_csv_rows(stream: Any, *, file: str | None = None) -> Any:
    """Yield ``(line_number, cells)`` from a CSV stream (binary or text), header included.

    The line number is where the record starts (quoted cells may span lines); blank lines are
    skipped; a UTF-8 BOM is dropped. Reads one record at a time.
    """
    if not isinstance(stream, io.TextIOBase):
        # Binary upload: split on b"\n" (never inside a UTF-8 sequence) and decode per line,
        # without a TextIOWrapper that would close the caller's stream when collected.
        stream = _bounded_lines(stream, file=file)
    bound = limits.current()
    # A cell may be as long as a string may; the csv module's own guard is 128 KiB.
    csv.field_size_limit(max(bound.string_chars, csv.field_size_limit()))
    reader = csv.reader(stream, strict=True)
    first = True
    rows = 0
    while True:
        start = reader.line_num + 1
        try:
            cells = next(reader)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            raise FormatError(
                f"not UTF-8 text ({exc.reason})", file=file, record=f"line {start}"
            ) from None
        except csv.Error as exc:
            raise FormatError(f"invalid CSV: {exc}", file=file, record=f"line {start}") from None
        if first and cells and cells[0].startswith("\ufeff"):  # UTF-8 BOM
            cells[0] = cells[0][1:]
        first = False
        if not any(c.strip() for c in cells):
            continue
        rows += 1
        for column, cell in enumerate(cells):
            if len(cell) > bound.string_chars:
                reason = limits.message("string_chars", f"cell {column + 1}'s length", len(cell))
                raise FormatError(reason, file=file, record=f"line {start}")
        if rows > bound.records + 1:  # the header is not a record
            reason = limits.message("records", "the number of rows")
            raise FormatError(reason, file=file, record=f"line {start}")
        yield start, cells
