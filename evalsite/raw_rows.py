"""Model instances from hand-written SQL, for the few statements every rater request runs.

Building a statement through the ORM (query, joins, compiler) cost about 0.5 ms of CPU each
on the bench machine, two to four times the database's own work on an indexed look-up, and a
save runs eight of them (bench/README.md, "Hot paths"). The statements on that path are
written by hand; their rows become instances through the same converters and `from_db` the
ORM uses, so a caller gets exactly what the ORM would give it. Everything else stays ORM.

Only names from the models are interpolated into SQL (`columns`); values are parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from typing import NamedTuple

from django.db import DEFAULT_DB_ALIAS, DatabaseError, connection, connections, transaction

_KEPT = "_rows_read_ahead"  # where `read_ahead` keeps rows, on the object the caller gives


def columns(model, alias: str) -> str:
    """`alias."col", …` for every concrete field of `model`, in `from_row`'s order."""
    quote = connection.ops.quote_name
    return ", ".join(f"{alias}.{quote(f.column)}" for f in model._meta.concrete_fields)


class Read(NamedTuple):
    """One statement for `fetch_together`, read as `fetch` reads it."""

    sql: str
    params: list
    models: tuple = ()
    extra: int = 0


def fetch(sql: str, params, *models, extra: int = 0, first: Sequence[str] = ()) -> list[tuple]:
    """Run `sql`; each row becomes one instance per model (its `columns` in turn), then the
    `extra` trailing values as they came. `first`: statements without parameters to run just
    before it (a `SET LOCAL`); on PostgreSQL they go in one pipeline with it, and with the
    transaction's BEGIN when `sql` is its first statement: one round trip, not three."""
    (rows,) = fetch_together(Read(sql, params, models, extra), first=first)
    return rows


def fetch_together(*reads: Read, first: Sequence[str] = ()) -> list[list[tuple]]:
    """`fetch` of each of `reads`, which need nothing from each other, sent together (one
    round trip on PostgreSQL, as `read_ahead`): a page's access check and the row it shows.
    They run in order, each with its own snapshot, as one after another would. `first` as
    `fetch`'s."""
    rows = _run_together([(read.sql, read.params) for read in reads], first)
    return [
        _instances(found, read.models, read.extra) for found, read in zip(rows, reads, strict=True)
    ]


def _instances(rows: list[tuple], models: Sequence, extra: int) -> list[tuple]:
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


def read_ahead(holder, statements: list[tuple[str, list]]) -> None:
    """Run independent `statements` now, together, and keep their rows on `holder` (an object
    that lives as long as the request, such as its project) for `fetch_kept`.

    On PostgreSQL they go in one pipeline: one round trip to the server for all of them, not
    one each. Where the database is on another machine each round trip costs the network's
    latency, often more than the statement itself; on the bench machine's loopback (about
    0.1 ms) the item list's time did not change measurably (bench/README.md, issue #33).
    Elsewhere (SQLite, in this process) they simply run one after another."""
    kept = holder.__dict__.setdefault(_KEPT, {})
    for (sql, params), rows in zip(statements, _run_together(statements), strict=True):
        kept[_key(sql, params)] = rows


def _run_together(
    statements: Sequence[tuple[str, list]], first: Sequence[str] = ()
) -> list[list[tuple]]:
    """Each statement's rows, the statements (after `first`) sent together (`_together`)."""
    cursors = [connection.prepared_cursor() for _ in statements]
    alone = len(statements) == 1 and not first  # no pipeline to sync for one statement
    try:
        with (
            connection.cursor() if first else nullcontext() as plain,
            nullcontext() if alone else _together(),
        ):
            for statement in first:
                plain.execute(statement)
            for cursor, (sql, params) in zip(cursors, statements, strict=True):
                cursor.execute(sql, params)
        return [cursor.fetchall() for cursor in cursors]
    finally:
        for cursor in cursors:
            cursor.close()


def fetch_kept(holder, sql: str, params: list) -> list[tuple]:
    """The rows of `sql` with `params`: those `read_ahead` kept on `holder` for exactly this
    statement (once: a second call reads again), else read now."""
    rows = holder.__dict__.get(_KEPT, {}).pop(_key(sql, params), None)
    return _rows(sql, params) if rows is None else rows


def _key(sql: str, params: list) -> tuple[str, str]:
    return sql, repr(params)


def _rows(sql: str, params: list) -> list[tuple]:
    with connection.prepared_cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _together():
    """On PostgreSQL, a pipeline: the statements run inside it reach the server in one round
    trip, their results read afterwards. Elsewhere nothing: they run one after another."""
    if connection.vendor != "postgresql":
        return nullcontext()
    return _pipeline()


@contextmanager
def _pipeline():
    with connection.wrap_database_errors, connection.connection.pipeline():
        yield


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
    return insert_all([instance])[0]


def insert_all(instances: Sequence) -> list:
    """`insert` each of `instances`, in order, together (one round trip on PostgreSQL, as
    `read_ahead`): for rows that do not need each other's keys, such as an answer and its
    timeline line. A refused row raises as `insert` does; those after it are not written."""
    return _insert_all(instances)


def _insert_all(instances: Sequence, *, commit: bool = False) -> list:
    """`insert_all`; `commit`: the transaction's COMMIT follows them in the same pipeline."""
    statements = [_insert_statement(instance) for instance in instances]
    cursors = [connection.prepared_cursor() for _ in statements]
    alone = len(statements) == 1 and not commit  # nothing to sync
    try:
        with nullcontext() if alone else _together():
            for cursor, (sql, values) in zip(cursors, statements, strict=True):
                cursor.execute(sql, values)
            if commit:  # queued after the rows: the pipeline's one sync sends all of them
                connection.connection.execute("COMMIT")
        returning = connection.features.can_return_columns_from_insert
        for cursor, instance in zip(cursors, instances, strict=True):
            instance.pk = cursor.fetchone()[0] if returning else cursor.lastrowid
            instance._state.adding, instance._state.db = False, connection.alias
    finally:
        for cursor in cursors:
            cursor.close()
    return list(instances)


@contextmanager
def atomic_with_last_writes():
    """`transaction.atomic()` whose last writes are the rows given to the callable it yields:
    they are inserted as `insert_all` inserts them, as the block's last statements. When the
    block is the outermost (it commits on exit) on PostgreSQL, its COMMIT goes with them: one
    round trip for the rows and the commit, not two. Django's exit then finds the transaction
    committed and runs the on-commit callbacks. If the rows or the commit fail (a unique or a
    deferred reference check), the error is raised inside the block, which rolls back as any
    failed atomic block does. Nothing of the block's own runs after the rows: they are written
    once its body has finished."""
    rows: list = []
    with transaction.atomic():
        yield rows.extend
        if rows:
            _insert_all(rows, commit=_commits_on_exit())


def _commits_on_exit() -> bool:
    # The outermost atomic block (no savepoint below it) that will commit when it exits.
    return (
        connection.vendor == "postgresql"
        and connection.in_atomic_block
        and connection.commit_on_exit
        and not connection.savepoint_ids
        and not connection.needs_rollback
    )


def _insert_statement(instance) -> tuple[str, list]:
    meta = instance._meta
    quote = connection.ops.quote_name
    fields = [f for f in meta.concrete_fields if not f.primary_key]
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    sql = "INSERT INTO {} ({}) VALUES ({})".format(  # noqa: S608 (names from the model)
        quote(meta.db_table),
        ", ".join(quote(f.column) for f in fields),
        ", ".join(["%s"] * len(fields)),
    )
    if connection.features.can_return_columns_from_insert:
        sql = f"{sql} RETURNING {quote(meta.pk.column)}"
    return sql, values


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
