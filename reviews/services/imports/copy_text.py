"""COPY's text format, written by hand (issue #17): `copy.write_row` adapts every value
through psycopg's Python dumpers, which was most of a PostgreSQL import's client time. Values
are those a field's `get_db_prep_save` gives; JSON is dumped as Django's JSONField has psycopg
dump it, so a row stored by COPY reads back as the ORM's would.
"""

from __future__ import annotations

import datetime
import decimal
import json
import uuid
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from json.encoder import c_make_encoder, encode_basestring_ascii
from typing import Any

from psycopg.types.json import Jsonb


class JsonText(str):
    """A JSON column's value already dumped (as `json.dumps` would): `insert_rows` writes the
    text as it is. For a value repeated on many rows, or built from a template, whose dump
    would otherwise be most of the cost of its row."""

    __slots__ = ()


_AS_STR = (int, float, decimal.Decimal, uuid.UUID)
_ISO = (datetime.datetime, datetime.date, datetime.time)


def copy_text(value: Any) -> str:
    """One prepared value (as `get_db_prep_save` gives it) as a field of COPY's text."""
    if value is None:
        return "\\N"
    kind = type(value)
    if isinstance(value, str):  # str subclasses too: a TextChoices member is its value
        return escape(value)
    if kind is bool:
        return "t" if value else "f"
    if isinstance(value, Jsonb):  # what Django's JSONField prepares: dumped as psycopg would
        return escape((value.dumps or json.dumps)(value.obj))
    if isinstance(value, _AS_STR):
        return str(value)
    if isinstance(value, _ISO):
        return value.isoformat()
    raise TypeError(f"no COPY text for a {kind.__name__} value")


def escape(text: str) -> str:
    """COPY's text format: backslash, tab, newline and carriage return inside a value escaped
    (four `replace`s run several times faster than one `translate` with a dict)."""
    return text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def copy_field(field, conn) -> Callable[[Sequence], list[str]]:
    """How one column's values become COPY text, chosen once per column: JSON dumped as
    Django's JSONField has psycopg dump it (`json.dumps`, the field's encoder), ids and text
    as given; anything else through the field's own preparation and `copy_text`."""
    if field.get_internal_type() == "JSONField":
        dumps = dumps_json if field.encoder is None else partial(json.dumps, cls=field.encoder)
        # JSON text escapes tab, newline and carriage return itself: only backslashes remain.
        return lambda values: [
            "\\N" if v is None else (v if type(v) is JsonText else dumps(v)).replace("\\", "\\\\")
            for v in values
        ]
    prepare = field.get_db_prep_save

    def text(value: Any) -> str:
        kind = type(value)
        if kind is str:
            return escape(value)
        if kind is int:
            return str(value)
        return copy_text(None if value is None else prepare(value, conn))

    def column(values: Sequence) -> list[str]:
        kinds = set(map(type, values))
        if kinds == {int}:
            return list(map(str, values))
        if kinds == {str}:
            return list(map(escape, values))
        return list(map(text, values))

    return column


def _json_dumps() -> Callable[[Any], str]:
    """`json.dumps` with its default arguments, the same text, with C's encoder built once:
    `json.dumps` builds one per call, a third of a 100k-item import's JSON time. It does not
    look for circular references (JSON read from a file holds none; a circular value raises
    RecursionError instead of ValueError)."""
    if c_make_encoder is None:  # no C accelerator: json.dumps as it is
        return json.dumps
    encode = c_make_encoder(
        None,
        json.JSONEncoder().default,
        encode_basestring_ascii,
        None,
        ": ",
        ", ",
        False,
        False,
        True,
    )

    def dumps(value: Any) -> str:
        if type(value) is str:
            return encode_basestring_ascii(value)
        return "".join(encode(value, 0))

    return dumps


dumps_json = _json_dumps()


def copy_pieces(texts: list, fixed_values: tuple, rows: list) -> Iterator[str]:
    """`rows` as COPY text, `PIECE` rows a piece. Each piece column by column (a column's type
    checked once, no call per value for ids and JSON), then each row's texts joined: a call
    per value was most of the client's time."""
    tail = _tail(fixed_values)
    for start in range(0, len(rows), PIECE):
        piece = zip(*rows[start : start + PIECE], strict=True)
        columns = [text(values) for text, values in zip(texts, piece, strict=True)]
        yield tail.join(map("\t".join, zip(*columns, strict=True))) + tail


def copy_lines(texts: list, fixed_values: tuple, rows: list) -> list[str]:
    """`rows` as COPY text, a line each (ending in a newline), made as `copy_pieces` makes
    them: for rows chosen, or given more columns in front, before they are sent."""
    if not rows:
        return []
    tail = _tail(fixed_values)
    columns = [text(values) for text, values in zip(texts, zip(*rows, strict=True), strict=True)]
    return [line + tail for line in map("\t".join, zip(*columns, strict=True))]


def _tail(fixed_values: tuple) -> str:
    """The constants' text, the same on every line, rendered once."""
    return "".join("\t" + copy_text(value) for value in fixed_values) + "\n"


PIECE = 100  # rows per piece of a COPY (about 30 KB of items)
