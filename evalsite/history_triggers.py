"""Append-only history enforced by the database itself, not only by the models.

The models and querysets already refuse to change history (reviews.models.append_only), but
`_base_manager.update()`, `bulk_create(update_conflicts=True)`, `Model.save(obj)` and raw SQL
go around them. These triggers (created by each app's migration) refuse every UPDATE and DELETE
on the history tables, whoever sends it:

* PostgreSQL: one plpgsql function raising SQLSTATE 23001 (restrict_violation, an
  `IntegrityError` in Django), called by a BEFORE UPDATE OR DELETE row trigger per table.
  `TRUNCATE` fires no row trigger: it empties whole tables (Django's `flush`, the test suite's
  reset between transactional tests) and is the only way to remove history.
* SQLite: a BEFORE UPDATE and a BEFORE DELETE trigger per table that `RAISE(ABORT)` (an
  `IntegrityError`) unless `evalsite_history_unlocked()` returns 1. That SQL function is
  registered on each of Django's connections and reads a flag only Python can set, through
  `history_unlocked(connection)`: SQLite has no TRUNCATE, so the test suite's flush (which is
  `DELETE FROM` every table) runs inside it (evalsite/pytest_plugin.py). Outside Django (the
  `sqlite3` shell) the function does not exist, so the change fails too.
  `INSERT OR REPLACE` / `REPLACE INTO` (and an `INSERT` inside `UPDATE OR REPLACE`'s kin) would
  go around both: SQLite's REPLACE deletes the row it collides with without firing delete
  triggers (unless `recursive_triggers` is on, which the `sqlite3` shell never sets). So each
  table also has a BEFORE INSERT trigger refusing a row that collides with an existing one on
  its primary key or any unique index, read from SQLite's own schema (`_sqlite_insert_guard`).
  It calls no Django function, so the shell can still append rows but never replace one. A
  plain INSERT that collides fails either way; the guard only names the reason. PostgreSQL has
  no REPLACE, and its UPSERT (`ON CONFLICT DO UPDATE`) fires the UPDATE trigger.

SQLite drops a table's triggers when a migration rebuilds the table (`ALTER` by copy), so
`ensure_triggers` also runs after every `migrate` (evalsite.apps: `triggers_after_migrate`, for
each app's own tables) and puts missing ones back; it rebuilds every insert guard, so a unique
index added later is guarded too, and any table added to an app's `history_tables` gets all its
triggers at the next `migrate`.
Deleting a project or item with history is refused as well: history outlives its project.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper


def history_tables() -> dict[str, tuple[str, ...]]:
    """app label -> its history tables. Each app names its own on its AppConfig
    (`history_tables`), so this module knows no app and no app names another's tables."""
    from django.apps import apps

    return {
        config.label: tuple(config.history_tables)
        for config in apps.get_app_configs()
        if getattr(config, "history_tables", ())
    }


PG_FUNCTION = "evalsite_refuse_history_change"
SQLITE_FUNCTION = "evalsite_history_unlocked"
_FLAG = "_evalsite_history_unlocked"


def _pg_create(table: str) -> list[str]:
    return [
        f"""CREATE OR REPLACE FUNCTION {PG_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% rows are append-only: % refused', TG_TABLE_NAME, TG_OP
    USING ERRCODE = '23001';
END $$""",
        f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}",
        f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
        f"FOR EACH ROW EXECUTE FUNCTION {PG_FUNCTION}()",
    ]


def _sqlite_create(table: str) -> list[str]:
    return [
        f"CREATE TRIGGER IF NOT EXISTS {table}_no_{op.lower()} BEFORE {op} ON {table} "
        f"WHEN NOT {SQLITE_FUNCTION}() "
        f"BEGIN SELECT RAISE(ABORT, '{table} rows are append-only: {op} refused'); END"
        for op in ("UPDATE", "DELETE")
    ]


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _unique_keys(cursor, table: str) -> list[tuple[list[str], str]]:
    """(columns, partial index condition or "") of the primary key and every unique index."""
    quoted = _quote(table)
    cursor.execute(f"PRAGMA table_info({quoted})")
    primary = [row[1] for row in sorted(cursor.fetchall(), key=lambda r: r[5]) if row[5]]
    keys = [(primary, "")] if primary else []
    cursor.execute(f"PRAGMA index_list({quoted})")
    for _seq, index, unique, origin, partial in cursor.fetchall():
        if not unique or origin == "pk":
            continue
        cursor.execute(f"PRAGMA index_info({_quote(index)})")
        columns = [row[2] for row in cursor.fetchall()]
        if None in columns:
            raise ValueError(f"{table}: unique index {index} on an expression is not guarded")
        condition = ""
        if partial:
            cursor.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = %s", [index]
            )
            condition = re.split(r"\bWHERE\b", cursor.fetchone()[0], maxsplit=1, flags=re.I)[1]
        keys.append((columns, condition))
    return keys


def _sqlite_insert_guard(cursor, table: str) -> list[str]:
    quoted = _quote(table)
    cursor.execute(f"PRAGMA table_info({quoted})")
    # NEW's values under the table's own column names, for a partial index's condition.
    new_row = ", ".join(f"NEW.{_quote(row[1])} AS {_quote(row[1])}" for row in cursor.fetchall())
    collisions = []
    for columns, condition in _unique_keys(cursor, table):
        same = " AND ".join(f"{_quote(c)} = NEW.{_quote(c)}" for c in columns)
        if condition:
            new_matches = f"EXISTS (SELECT 1 FROM (SELECT {new_row}) WHERE {condition})"  # noqa: S608
            same += f" AND ({condition}) AND {new_matches}"
        collisions.append(f"EXISTS (SELECT 1 FROM {quoted} WHERE {same})")  # noqa: S608
    trigger = _quote(f"{table}_no_replace")
    return [
        f"DROP TRIGGER IF EXISTS {trigger}",
        f"CREATE TRIGGER {trigger} BEFORE INSERT ON {quoted} WHEN {' OR '.join(collisions)} "
        f"BEGIN SELECT RAISE(ABORT, '{table} rows are append-only: "
        "an INSERT over an existing row refused'); END",
    ]


def create_statements(connection: BaseDatabaseWrapper, tables) -> list[str]:
    if connection.vendor == "postgresql":
        return [sql for table in tables for sql in _pg_create(table)]
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            return [
                sql
                for table in tables
                for sql in _sqlite_create(table) + _sqlite_insert_guard(cursor, table)
            ]
    return []  # another backend: the models' own guard still applies


def drop_statements(vendor: str, tables) -> list[str]:
    if vendor == "postgresql":
        return [f"DROP TRIGGER IF EXISTS {t}_append_only ON {t}" for t in tables]
    if vendor == "sqlite":
        return [
            f"DROP TRIGGER IF EXISTS {t}_no_{op}"
            for t in tables
            for op in ("update", "delete", "replace")
        ]
    return []


def migration_operations(app_label: str, tables):
    """RunPython create/drop for `tables` (named in the migration: history as of then)."""
    from django.db import migrations

    tables = tuple(tables)

    def forward(apps, schema_editor):
        # A table added to `history_tables` later gets its trigger from its own migration.
        existing = set(schema_editor.connection.introspection.table_names())
        present = [t for t in tables if t in existing]
        for sql in create_statements(schema_editor.connection, present):
            schema_editor.execute(sql, params=None)  # the function body holds a literal %

    def backward(apps, schema_editor):
        for sql in drop_statements(schema_editor.connection.vendor, tables):
            schema_editor.execute(sql, params=None)  # the function body holds a literal %

    return migrations.RunPython(forward, backward)


def ensure_triggers(connection: BaseDatabaseWrapper, tables) -> None:
    """Re-create missing SQLite triggers of `tables` (a table rebuild drops them) and every insert
    guard (a unique index may have been added since); no-op elsewhere."""
    if connection.vendor != "sqlite":
        return
    existing = set(connection.introspection.table_names())
    statements = create_statements(connection, [t for t in tables if t in existing])
    with connection.cursor() as cursor:
        for sql in statements:
            cursor.execute(sql)


def triggers_after_migrate(sender, using, **kwargs) -> None:
    """`post_migrate` receiver (sent once per app): that app's own history tables."""
    ensure_triggers(connections[using], getattr(sender, "history_tables", ()))


def sqlite_flag_install(sender, connection: BaseDatabaseWrapper, **kwargs) -> None:
    """`connection_created` receiver: give SQLite the flag the triggers read."""
    if connection.vendor == "sqlite":
        connection.connection.create_function(
            SQLITE_FUNCTION, 0, lambda: int(getattr(connection, _FLAG, False))
        )


@contextmanager
def history_unlocked(connection: BaseDatabaseWrapper):
    """Let this connection delete history rows while inside (SQLite only; see module doc).

    For wiping a whole test database and for discarding an import's rows that were never
    published (`import_staging.holding_discard`), never for editing: on PostgreSQL it changes
    nothing.
    """
    setattr(connection, _FLAG, True)
    try:
        yield
    finally:
        setattr(connection, _FLAG, False)
