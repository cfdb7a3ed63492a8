"""FORMATS §4: typed records read from JSONL and CSV, and reviews' own kind, ``item``.

The reader knows no kinds but the schemas it is handed (``schemas``: record type -> pydantic
model); ``item`` is defined here, and other apps bring their own (judging's criteria, verdicts
and labels live in ``judging/formats/records.py``) through the import pipeline's registry.

JSONL: one object per line, kind in ``"type"``; one file may mix kinds.
CSV: one kind per file, from a ``type`` column or the ``kind`` argument. Cell rules, read from
the kind's schema:
  * an empty cell is "not given" (the field's default, usually None; required fields then fail);
  * ``<field>_<key>`` columns build a nested object field (``judge_provider``, ``judge_model``);
  * list fields (``slices``, ``evidence``, ``labels``...): a cell starting with ``[`` is a JSON
    array, anything else is split on ``|`` (items stripped, empties dropped);
  * object-or-string fields (``input``, ``output``, ``reference``, ``metadata``): a cell
    starting with ``{`` is parsed as a JSON object, anything else is the literal string;
  * numbers and booleans use pydantic's lax parsing (``0.8``, ``true``/``false``, ``1``/``0``);
  * other columns are kept as extra string fields.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator, Mapping
from typing import IO, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from .canonical import RelativePath
from .errors import FormatError, error_from_validation, iter_csv_rows, iter_json_lines, loads_json

__all__ = [
    "ITEM_SCHEMAS",
    "Item",
    "Record",
    "Schemas",
    "iter_records_csv",
    "iter_records_jsonl",
    "parse_record",
    "record_adapter",
]


class Record(BaseModel):
    """Base of every typed record."""

    # Numbers in text fields become strings: ordinal labels ("1".."5"), versions, numeric ids.
    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)


class Item(Record):
    type: Literal["item"] = "item"
    item_id: str = Field(min_length=1)
    input: Any = None  # string or object
    output: Any = None
    reference: Any = None
    slices: list[str] = Field(default_factory=list)
    evidence: list[RelativePath] = Field(default_factory=list)  # bundle-relative paths
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("input", "output", "reference")
    @classmethod
    def _string_or_object(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, str | dict):
            raise ValueError("must be a string or an object")
        return value


Schemas = Mapping[str, type[Record]]
ITEM_SCHEMAS: Schemas = {"item": Item}


def record_adapter(schemas: Schemas) -> TypeAdapter:
    """One discriminated union of ``schemas`` (for documentation: the API's OpenAPI schema)."""
    union = typing.Union[tuple(schemas.values())]  # noqa: UP007 (built at run time)
    return TypeAdapter(Annotated[union, Field(discriminator="type")])


def parse_record(
    obj: dict[str, Any],
    *,
    schemas: Schemas,
    file: str | None,
    record: str | None,
    kind: str | None = None,
) -> Record:
    """Validate one record; the kind comes from ``obj["type"]`` or ``kind``."""
    given = obj.get("type", kind)
    model = schemas.get(given) if isinstance(given, str) else None
    if model is not None and (kind is None or given == kind):  # the usual case, first
        try:
            return model.model_validate(obj)
        except ValidationError as exc:
            raise error_from_validation(exc, file=file, record=record) from None
    kinds = ", ".join(schemas)
    if kind is not None and given != kind:
        raise FormatError(
            f"type {given!r} in a file of {kind!r} records", file=file, record=record, path="$.type"
        )
    if given is None:
        raise FormatError(
            f"missing type (one of: {kinds})", file=file, record=record, path="$.type"
        )
    raise FormatError(
        f"unknown type {given!r} (valid: {kinds})", file=file, record=record, path="$.type"
    )


def iter_records_jsonl(stream: IO[bytes], *, file: str, schemas: Schemas) -> Iterator[Record]:
    """Typed records, one line at a time (memory flat); errors name ``line N``."""
    for lineno, obj in iter_json_lines(stream, file=file):
        yield parse_record(obj, schemas=schemas, file=file, record=f"line {lineno}")


class _CellRules:
    """How one kind's CSV cells become values, read from its schema's field types."""

    def __init__(self, model: type[Record] | None):
        fields = model.model_fields if model else {}
        self.lists = {n for n, f in fields.items() if typing.get_origin(f.annotation) is list}
        self.objects = {
            n
            for n, f in fields.items()
            if f.annotation is Any or typing.get_origin(f.annotation) is dict
        }
        self.nested = {
            n
            for n, f in fields.items()
            if isinstance(f.annotation, type) and issubclass(f.annotation, BaseModel)
        }

    def row(self, cells: dict[str, str], *, file: str, record: str) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for column, text in cells.items():
            prefix, _, key = column.partition("_")
            if prefix in self.nested and key:
                obj.setdefault(prefix, {})[key] = text
            else:
                obj[column] = self._cell(column, text, file=file, record=record)
        return obj

    def _cell(self, column: str, text: str, *, file: str, record: str) -> Any:
        want_list = column in self.lists and text.lstrip().startswith("[")
        if want_list or (column in self.objects and text.lstrip().startswith("{")):
            try:
                value = loads_json(text, file=file, record=record)
            except FormatError as exc:
                raise FormatError(exc.reason, file=file, record=record, path=column) from None
            if want_list and not isinstance(value, list):
                raise FormatError("expected a JSON array", file=file, record=record, path=column)
            return value
        if column in self.lists:
            return [part.strip() for part in text.split("|") if part.strip()]
        return text


def iter_records_csv(
    stream: IO[bytes] | IO[str], *, file: str, schemas: Schemas, kind: str | None = None
) -> Iterator[Record]:
    """Records of one kind from CSV (see the module docstring for the cell rules)."""
    if kind is not None and kind not in schemas:
        raise FormatError(f"unknown kind {kind!r} (valid: {', '.join(schemas)})", file=file)
    rows = iter_csv_rows(stream, file=file)
    try:
        _, header = next(rows)
    except StopIteration:
        raise FormatError("empty CSV file (no header)", file=file) from None
    header = [h.strip() for h in header]
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes or "" in header:
        raise FormatError(
            f"header has duplicate or empty column names: {dupes or ['']}",
            file=file,
            record="line 1",
        )
    if kind is None and "type" not in header:
        raise FormatError(
            f"missing column 'type' (or pass the kind: one of {', '.join(schemas)})",
            file=file,
            record="line 1",
        )
    file_kind, rules = kind, None
    for line, cells in rows:
        record = f"line {line}"
        if len(cells) != len(header):
            raise FormatError(
                f"{len(cells)} cells but the header has {len(header)}", file=file, record=record
            )
        given = {c: t for c, t in zip(header, cells, strict=True) if t != ""}  # empty: default
        file_kind = file_kind or given.get("type")
        if rules is None:
            rules = _CellRules(schemas.get(file_kind) if isinstance(file_kind, str) else None)
        obj = rules.row(given, file=file, record=record)
        try:
            parsed = parse_record(obj, schemas=schemas, file=file, record=record, kind=file_kind)
        except FormatError as exc:
            raise FormatError(
                exc.reason, file=file, record=record, path=_column(exc.path, rules.nested)
            ) from None
        yield parsed


def _column(path: str | None, nested: set[str]) -> str | None:
    """Report CSV errors by column: ``$.judge.model`` -> ``judge_model``, ``$.slices[1]`` ->
    ``slices[1]``."""
    if not path or not path.startswith("$."):
        return path
    name = path[2:]
    head, dot, rest = name.partition(".")
    return f"{head}_{rest}" if dot and head in nested else name
