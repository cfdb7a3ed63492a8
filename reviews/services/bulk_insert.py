"""Fast insert-only writes for large imports: plain INSERTs without a model object per row,
and a compact set of primary keys.

Only for append-style rows (no signals, no `save()`): imports of items, slice links and
timeline events, where `bulk_create`'s model instances were most of the cost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections, router


class PkSet:
    """A set of primary keys kept as a sparse bitmap (8 KB per 65,536 ids).

    Memory stays flat in the size of the file (one bit per id, not an object per id), so a
    100k-item import can tell a repeated item from a new one anywhere in the file.
    """

    def __init__(self) -> None:
        self.chunks: dict[int, bytearray] = {}

    def add(self, pk: int) -> bool:
        """Add `pk`; False if it was there already."""
        chunk = self.chunks.get(pk >> 16)
        if chunk is None:
            chunk = self.chunks[pk >> 16] = bytearray(8192)
        byte, mask = (pk & 0xFFFF) >> 3, 1 << (pk & 7)
        if chunk[byte] & mask:
            return False
        chunk[byte] |= mask
        return True


def insert_rows(model, columns, rows, **constants) -> None:
    """INSERT `rows` (tuples in `columns` order) plus `constants` into `model`'s table.

    One `executemany` of a plain INSERT: values are prepared by the model's own fields
    (`get_db_prep_save`: JSON, datetimes, foreign keys), so it stores what `bulk_create`
    stores, without a model instance per row. No signals, no `save()`: for insert-only rows.
    """
    meta = model._meta
    conn = connections[router.db_for_write(model)]  # the real one: the proxy costs per value
    fields = [meta.get_field(name) for name in columns]
    fixed = [meta.get_field(name) for name in constants]
    fixed_values = tuple(
        f.get_db_prep_save(value, conn) for f, value in zip(fixed, constants.values(), strict=True)
    )
    quote = conn.ops.quote_name
    names = ", ".join(quote(f.column) for f in (*fields, *fixed))
    marks = ", ".join(["%s"] * (len(fields) + len(fixed)))
    # Only quoted table/column names from the model are interpolated; values are parameters.
    sql = f"INSERT INTO {quote(meta.db_table)} ({names}) VALUES ({marks})"  # noqa: S608
    preps = [_preparer(f, conn) for f in fields]
    params = [
        (*(prep(value) for prep, value in zip(preps, row, strict=True)), *fixed_values)
        for row in rows
    ]
    if params:
        with conn.cursor() as cursor:
            cursor.executemany(sql, params)


def _preparer(field, conn) -> Callable[[Any], Any]:
    """What `field.get_db_prep_save(value, conn)` does, short-cut for the plain values an
    import holds: JSON straight to the backend's adapter (None is SQL NULL, as in the ORM),
    ids and text as given; anything else takes the field's own path."""
    prepare = field.get_db_prep_save
    if field.get_internal_type() == "JSONField":
        adapt, encoder = conn.ops.adapt_json_value, field.encoder
        return lambda value: None if value is None else adapt(value, encoder)
    return lambda value: (
        value if value is None or type(value) in (int, str) else prepare(value, conn)
    )
