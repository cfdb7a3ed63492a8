"""Model instances from hand-written SQL, for the few statements every rater request runs.

Building a statement through the ORM (query, joins, compiler) cost about 0.5 ms of CPU each
on the bench machine, two to four times the database's own work on an indexed look-up, and a
save runs eight of them (bench/README.md, "Hot paths"). The statements on that path are
written by hand; their rows become instances through the same converters and `from_db` the
ORM uses, so a caller gets exactly what the ORM would give it. Everything else stays ORM.

Only names from the models are interpolated into SQL (`columns`); values are parameters.
"""

from __future__ import annotations

from functools import lru_cache

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections


def columns(model, alias: str) -> str:
    """`alias."col", …` for every concrete field of `model`, in `from_row`'s order."""
    quote = connection.ops.quote_name
    return ", ".join(f"{alias}.{quote(f.column)}" for f in model._meta.concrete_fields)


def fetch(sql: str, params, *models, extra: int = 0) -> list[tuple]:
    """Run `sql`; each row becomes one instance per model (its `columns` in turn), then the
    `extra` trailing values as they came."""
    with connection.prepared_cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    result = []
    for row in rows:
        start, out = 0, []
        for model in models:
            width = len(model._meta.concrete_fields)
            out.append(from_row(model, row[start : start + width]))
            start += width
        out.extend(row[start : start + extra])
        result.append(tuple(out))
    return result


def from_row(model, values):
    """An instance of `model` from its concrete fields' raw values, converted as the ORM does."""
    # The thread's own connection, not the proxy: converters are bound to its operations.
    conn = connections[DEFAULT_DB_ALIAS]
    names, converters = _conversions(model, conn)
    values = list(values)
    for index, column, steps in converters:
        value = values[index]
        for step in steps:
            value = step(value, column, conn)
        values[index] = value
    return model.from_db(conn.alias, names, values)


def converter(model, name: str):
    """`value -> value` as the ORM converts `model`'s field `name` when it reads it (a
    datetime from SQLite's text, JSON from its dump…), for a column selected on its own."""
    conn = connections[DEFAULT_DB_ALIAS]
    column, steps = _column_steps(model, model._meta.get_field(name), conn)

    def convert(value):
        for step in steps:
            value = step(value, column, conn)
        return value

    return convert


@lru_cache(maxsize=32)
def _conversions(model, conn):
    """Per model and connection: field names, and the converters of the columns that have any."""
    fields = model._meta.concrete_fields
    converters = []
    for index, field in enumerate(fields):
        column, steps = _column_steps(model, field, conn)
        if steps:
            converters.append((index, column, steps))
    return [f.attname for f in fields], tuple(converters)


def _column_steps(model, field, conn) -> tuple:
    """`field`'s column and its converters: the backend's, then the field's (the order of
    `SQLCompiler.get_converters`)."""
    column = field.get_col(model._meta.db_table)
    return column, tuple(conn.ops.get_db_converters(column) + field.get_db_converters(conn))


def insert(instance):
    """INSERT the unsaved `instance` as `save()` does (each field's `pre_save` for an add, then
    `get_db_prep_save`) without building the query through the ORM; returns it saved, with its
    pk. Only for models whose `save()` adds nothing to Django's own."""
    meta = instance._meta
    quote = connection.ops.quote_name
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    sql = "INSERT INTO {} ({}) VALUES ({})".format(  # noqa: S608 (names from the model)
        quote(meta.db_table),
        ", ".join(quote(f.column) for f in fields),
        ", ".join(["%s"] * len(fields)),
    )
    returning = connection.features.can_return_columns_from_insert
    with connection.prepared_cursor() as cursor:
        cursor.execute(f"{sql} RETURNING {quote(meta.pk.column)}" if returning else sql, values)
        instance.pk = cursor.fetchone()[0] if returning else cursor.lastrowid
    instance._state.adding, instance._state.db = False, connection.alias
    return instance


def update(instance, fields: list[str]) -> None:
    """UPDATE the saved `instance`'s `fields` as `save(update_fields=fields)` does (each field's
    `pre_save`, so an `auto_now` field in `fields` takes the time, then `get_db_prep_save`)
    without building the query through the ORM. No signals are sent: only for models with no
    save signal receivers and a `save()` that adds nothing to Django's own. Like `save`, an
    UPDATE that matches no row raises."""
    meta = instance._meta
    quote = connection.ops.quote_name
    changed = [meta.get_field(name) for name in fields]
    values = [f.get_db_prep_save(f.pre_save(instance, False), connection) for f in changed]
    sql = "UPDATE {} SET {} WHERE {} = %s".format(  # noqa: S608 (names from the model)
        quote(meta.db_table),
        ", ".join(f"{quote(f.column)} = %s" for f in changed),
        quote(meta.pk.column),
    )
    with connection.prepared_cursor() as cursor:
        cursor.execute(sql, [*values, instance.pk])
        if cursor.rowcount == 0:
            raise DatabaseError("Save with update_fields did not affect any rows.")
