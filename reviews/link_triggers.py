"""`Item.slices`' links (`ItemSlice`) checked by triggers once a statement, not by foreign keys
once a row.

A 100k-item import writes ~230k links; PostgreSQL checked each foreign key of each in its own
query at the COMMIT: 40% of the import's server time (bench/README.md). These triggers refuse
what the foreign keys refused, whoever writes (ORM, raw SQL, the import's COPY):

* a link naming an item or slice that does not exist (PostgreSQL: one query a statement over
  its new rows, which locks the rows it names FOR KEY SHARE as a foreign key does, so a
  concurrent delete waits for this transaction, then fails);
* deleting an item or slice that links still name (the ORM deletes the links first, as
  `on_delete=CASCADE` says), and changing an item's or slice's id.

All raise an `IntegrityError`. SQLite has no statement triggers: row triggers, which cost
little there, and which the test suite's wipe passes (`history_triggers.history_unlocked`, as
for history). A rebuild of a table by a SQLite migration drops its triggers: `ensure_triggers`
puts them back after every `migrate`, as for history. On PostgreSQL a TRUNCATE of the item or
slice table that leaves links (the table alone, or with CASCADE, which follows foreign keys
only) is refused after it (migration 0019); truncating the links too, as the test suite's wipe
truncates every table at once, passes. SQLite has no TRUNCATE.
"""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

from evalsite.history_triggers import SQLITE_FUNCTION
from evalsite.reference_triggers import PLAN, missing_parent_check


def _pg_refs_exist() -> str:
    # Only this module's constant table and column names are interpolated, here and below.
    checks = "".join(
        missing_parent_check("new_links", "reviews_item_slices", column, table)
        for column, table in (("item_id", "reviews_item"), ("slice_id", "reviews_slice"))
    )
    return f"""CREATE OR REPLACE FUNCTION reviews_item_slices_refs_exist() RETURNS trigger
LANGUAGE plpgsql {PLAN} AS $$
BEGIN{checks}
  RETURN NULL;
END $$"""


def _pg_unlinked(table: str, column: str) -> str:
    return f"""CREATE OR REPLACE FUNCTION {table}_unlinked() RETURNS trigger
LANGUAGE plpgsql {PLAN} AS $$
BEGIN
  IF EXISTS (SELECT FROM gone JOIN reviews_item_slices AS l ON l.{column} = gone.id) THEN
    RAISE foreign_key_violation USING MESSAGE =
      'delete on table "{table}" leaves links in "reviews_item_slices"';
  END IF;
  RETURN NULL;
END $$"""


_PG_ID_UNCHANGED = """CREATE OR REPLACE FUNCTION reviews_id_unchanged() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE foreign_key_violation USING MESSAGE =
    format('the id of a row of "%s" does not change (item slice links name it)', TG_TABLE_NAME);
END $$"""

_REFERENCED = (("reviews_item", "item_id"), ("reviews_slice", "slice_id"))

# AFTER TRUNCATE runs once every table of the statement is truncated: a link left then names a
# row that is gone.
_PG_TRUNCATED = """CREATE OR REPLACE FUNCTION reviews_item_slices_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT FROM reviews_item_slices) THEN
    RAISE foreign_key_violation USING MESSAGE =
      format('truncate of "%s" leaves links in "reviews_item_slices"', TG_TABLE_NAME);
  END IF;
  RETURN NULL;
END $$"""


def _postgresql() -> list[str]:
    statements = [_pg_refs_exist(), _PG_ID_UNCHANGED]
    for op in ("insert", "update"):
        statements.append(
            f"CREATE TRIGGER reviews_item_slices_{op} AFTER {op.upper()} ON reviews_item_slices "
            "REFERENCING NEW TABLE AS new_links "
            "FOR EACH STATEMENT EXECUTE FUNCTION reviews_item_slices_refs_exist()"
        )
    for table, column in _REFERENCED:
        statements += [
            _pg_unlinked(table, column),
            f"CREATE TRIGGER {table}_links_delete AFTER DELETE ON {table} "
            f"REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION {table}_unlinked()",
            f"CREATE TRIGGER {table}_id_unchanged BEFORE UPDATE OF id ON {table} FOR EACH ROW "
            "WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION reviews_id_unchanged()",
        ]
    return statements


def _sqlite() -> list[str]:
    missing = (
        "NOT EXISTS (SELECT 1 FROM reviews_item WHERE id = NEW.item_id) "
        "OR NOT EXISTS (SELECT 1 FROM reviews_slice WHERE id = NEW.slice_id)"
    )
    statements = [
        f"CREATE TRIGGER IF NOT EXISTS reviews_item_slices_{op.lower()} BEFORE {op} "
        f"ON reviews_item_slices WHEN {missing} BEGIN SELECT RAISE(ABORT, "
        "'FOREIGN KEY constraint failed: reviews_item_slices names a missing row'); END"
        for op in ("INSERT", "UPDATE")
    ]
    for table, column in _REFERENCED:
        statements += [
            f"CREATE TRIGGER IF NOT EXISTS {table}_links_delete BEFORE DELETE ON {table} "  # noqa: S608
            f"WHEN NOT {SQLITE_FUNCTION}() "
            f"AND EXISTS (SELECT 1 FROM reviews_item_slices WHERE {column} = OLD.id) "
            f"BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: "
            f"reviews_item_slices links name this row of {table}'); END",
            f"CREATE TRIGGER IF NOT EXISTS {table}_id_unchanged BEFORE UPDATE OF id ON {table} "
            f"WHEN OLD.id IS NOT NEW.id BEGIN SELECT RAISE(ABORT, "
            f"'FOREIGN KEY constraint failed: the id of a row of {table} changed'); END",
        ]
    return statements


def _drop(vendor: str) -> list[str]:
    triggers = [
        ("reviews_item_slices", "reviews_item_slices_insert"),
        ("reviews_item_slices", "reviews_item_slices_update"),
        *((t, f"{t}_{kind}") for t, _ in _REFERENCED for kind in ("links_delete", "id_unchanged")),
    ]
    if vendor == "sqlite":
        return [f"DROP TRIGGER IF EXISTS {name}" for _, name in triggers]
    functions = ["reviews_item_slices_refs_exist", "reviews_id_unchanged"]
    functions += [f"{table}_unlinked" for table, _ in _REFERENCED]
    return [f"DROP TRIGGER IF EXISTS {name} ON {table}" for table, name in triggers] + [
        f"DROP FUNCTION IF EXISTS {name}()" for name in functions
    ]


def _truncate(vendor: str) -> list[str]:
    if vendor != "postgresql":
        return []
    return [_PG_TRUNCATED] + [
        f"CREATE TRIGGER {table}_links_truncate AFTER TRUNCATE ON {table} "
        "FOR EACH STATEMENT EXECUTE FUNCTION reviews_item_slices_truncated()"
        for table, _ in _REFERENCED
    ]


def _truncate_drop(vendor: str) -> list[str]:
    if vendor != "postgresql":
        return []
    return [f"DROP TRIGGER IF EXISTS {t}_links_truncate ON {t}" for t, _ in _REFERENCED] + [
        "DROP FUNCTION IF EXISTS reviews_item_slices_truncated()"
    ]


def _create(vendor: str) -> list[str]:
    build = {"postgresql": _postgresql, "sqlite": _sqlite}.get(vendor)
    return build() if build else []


def _run_python(create, drop):
    """A RunPython executing `create(vendor)`'s statements (and `drop(vendor)`'s going back)."""
    from django.db import migrations

    def run(statements):
        def step(apps, schema_editor):
            for sql in statements(schema_editor.connection.vendor):
                schema_editor.execute(sql, params=None)  # the bodies hold a literal %

        return step

    return migrations.RunPython(run(create), run(drop))


def migration_operation():
    """Migration 0018's: the link triggers."""
    return _run_python(_create, _drop)


def truncate_operation():
    """Migration 0019's: a TRUNCATE that leaves links refused (PostgreSQL)."""
    return _run_python(_truncate, _truncate_drop)


def around_sqlite_rebuild():
    """(before, after) operations for a migration that rebuilds the item or slice table on
    SQLite (an ALTER by copy): SQLite refuses to rename the copy while a trigger names the
    table, so the link triggers go first and come back after. Nothing on PostgreSQL."""

    def on_sqlite(statements):
        return lambda vendor: statements(vendor) if vendor == "sqlite" else []

    return (
        _run_python(on_sqlite(_drop), on_sqlite(_create)),
        _run_python(on_sqlite(_create), on_sqlite(_drop)),
    )


def ensure_triggers(connection: BaseDatabaseWrapper) -> None:
    """Re-create missing SQLite triggers (a table rebuild drops them); no-op elsewhere."""
    if connection.vendor != "sqlite":
        return
    if "reviews_item_slices" not in connection.introspection.table_names():
        return  # migrated to before 0018
    with connection.cursor() as cursor:
        for sql in _sqlite():
            cursor.execute(sql)
