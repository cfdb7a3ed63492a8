"""Foreign keys checked by PostgreSQL triggers once a statement instead of once a row.

A foreign key checks each row of a COPY in its own query (an SPI look-up and a row lock): at
100k imported items, the item -> project, question -> item, event -> item and event -> actor
keys cost ~1.3 s of the server's CPU (bench/README.md). The triggers built here refuse what
such a key refused, whoever writes (ORM, raw SQL, COPY), each with an `IntegrityError`
(SQLSTATE 23503, foreign_key_violation):

* a child row naming a missing parent: after each INSERT statement, one query over its new
  rows, which locks the parents it names FOR KEY SHARE as a foreign key does (a concurrent
  delete of one waits for this transaction, then fails); an UPDATE that changes the column,
  a row trigger (rare: the ORM never moves a row to another parent);
* deleting a parent still named (after the statement; the ORM's `on_delete` runs first, in
  Python, and deletes or protects as before), changing a named parent's id;
* a TRUNCATE of a parent that leaves children naming it (CASCADE follows foreign keys only);
  truncating the children in the same statement, as the test suite's wipe does, passes.

SQLite keeps its own foreign keys (checked at the COMMIT, as before): the models say
`db_constraint=False` and the migration drops the constraints on PostgreSQL only
(`OnPostgresql`). A later migration that rebuilds one of those tables on SQLite would make it
from the models and lose them: tests/test_reference_triggers.py checks SQLite still has them.

Only constant table and column names from migrations are interpolated into the SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from django.db.migrations.operations.base import Operation

# The transition tables have no statistics: without these settings the planner hashed the
# whole parent table for a COPY's rows. An index look-up per distinct id is the right plan.
PLAN = "SET enable_hashjoin = off SET enable_mergejoin = off SET enable_seqscan = off"


class Reference(NamedTuple):
    child: str
    column: str
    parent: str


def missing_parent_check(rows: str, child: str, column: str, parent: str) -> str:
    """plpgsql raising foreign_key_violation if a value of `column` in the transition table
    `rows` names no row of `parent`, the rows it names locked FOR KEY SHARE. NULLs name none."""
    return f"""
  IF (SELECT count(DISTINCT {column}) FROM {rows})
     <> (SELECT count(*) FROM (SELECT t.id FROM {parent} AS t
         WHERE t.id IN (SELECT {column} FROM {rows}) FOR KEY SHARE OF t) AS locked) THEN
    RAISE foreign_key_violation USING MESSAGE =
      'insert or update on table "{child}" names a missing row of "{parent}"';
  END IF;"""  # noqa: S608


def _function(name: str, body: str, plan: str = PLAN) -> str:
    return f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql {plan} AS $$
BEGIN{body}
  RETURN NULL;
END $$"""


def _by(refs: Sequence[Reference], key: str) -> dict[str, list[Reference]]:
    grouped: dict[str, list[Reference]] = {}
    for ref in refs:
        grouped.setdefault(getattr(ref, key), []).append(ref)
    return grouped


def _child_statements(child: str, refs: list[Reference]) -> list[str]:
    checks = "".join(missing_parent_check("new_rows", child, r.column, r.parent) for r in refs)
    statements = [
        _function(f"{child}_parents_exist", checks),
        f"CREATE TRIGGER {child}_parents_insert AFTER INSERT ON {child} "
        "REFERENCING NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {child}_parents_exist()",
    ]
    for ref in refs:
        # A row trigger: a transition table cannot go with `UPDATE OF`, and a statement check
        # of every updated row would lock the parent for each status change.
        name = f"{child}_{ref.column}_exists"
        statements += [
            f"""CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM FROM {ref.parent} WHERE id = NEW.{ref.column} FOR KEY SHARE;
  IF NOT FOUND THEN
    RAISE foreign_key_violation USING MESSAGE =
      'update on table "{child}" names a missing row of "{ref.parent}"';
  END IF;
  RETURN NULL;
END $$""",
            f"CREATE TRIGGER {name} AFTER UPDATE OF {ref.column} ON {child} FOR EACH ROW "
            f"WHEN (NEW.{ref.column} IS NOT NULL AND NEW.{ref.column} IS DISTINCT FROM "
            f"OLD.{ref.column}) EXECUTE FUNCTION {name}()",
        ]
    return statements


def _named(parent: str, refs: list[Reference], ids: str) -> str:
    """plpgsql raising if a child row names one of `ids` (a query of one `id` column)."""
    return "".join(
        f"""
  IF EXISTS (SELECT FROM {r.child} AS c WHERE c.{r.column} IN ({ids})) THEN
    RAISE foreign_key_violation USING MESSAGE =
      format('%s on table "{parent}" leaves rows of "{r.child}" naming it', TG_OP);
  END IF;"""  # noqa: S608
        for r in refs
    )


def _parent_statements(parent: str, refs: list[Reference]) -> list[str]:
    kept = f"{parent}_id_kept"
    left = "".join(
        f"""
  IF EXISTS (SELECT FROM {r.child} WHERE {r.column} IS NOT NULL) THEN
    RAISE foreign_key_violation USING MESSAGE =
      'truncate of "{parent}" leaves rows of "{r.child}" naming it';
  END IF;"""  # noqa: S608
        for r in refs
    )
    return [
        _function(f"{parent}_unreferenced", _named(parent, refs, "SELECT id FROM gone")),
        f"CREATE TRIGGER {parent}_referenced_delete AFTER DELETE ON {parent} "
        "REFERENCING OLD TABLE AS gone "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {parent}_unreferenced()",
        # OLD in a row trigger: only when the id changes, which nothing but raw SQL does.
        _function(kept, _named(parent, refs, "OLD.id"), plan=""),
        f"CREATE TRIGGER {kept} AFTER UPDATE OF id ON {parent} FOR EACH ROW "
        f"WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION {kept}()",
        # AFTER TRUNCATE runs once every table of the statement is empty.
        _function(f"{parent}_truncated", left, plan=""),
        f"CREATE TRIGGER {parent}_referenced_truncate AFTER TRUNCATE ON {parent} "
        f"FOR EACH STATEMENT EXECUTE FUNCTION {parent}_truncated()",
    ]


def create_statements(refs: Sequence[Reference]) -> list[str]:
    statements = []
    for child, of_child in _by(refs, "child").items():
        statements += _child_statements(child, of_child)
    for parent, of_parent in _by(refs, "parent").items():
        statements += _parent_statements(parent, of_parent)
    return statements


def drop_statements(refs: Sequence[Reference]) -> list[str]:
    triggers, functions = [], []
    for child, of_child in _by(refs, "child").items():
        triggers.append((child, f"{child}_parents_insert"))
        functions.append(f"{child}_parents_exist")
        for ref in of_child:
            triggers.append((child, f"{child}_{ref.column}_exists"))
            functions.append(f"{child}_{ref.column}_exists")
    for parent in _by(refs, "parent"):
        for kind in ("referenced_delete", "id_kept", "referenced_truncate"):
            triggers.append((parent, f"{parent}_{kind}"))
        functions += [f"{parent}_{kind}" for kind in ("unreferenced", "id_kept", "truncated")]
    return [f"DROP TRIGGER IF EXISTS {name} ON {table}" for table, name in triggers] + [
        f"DROP FUNCTION IF EXISTS {name}()" for name in functions
    ]


def migration_operation(refs: Sequence[Reference]):
    """A RunPython creating the triggers of `refs` on PostgreSQL (nothing on SQLite)."""
    from django.db import migrations

    refs = tuple(refs)

    def run(statements):
        def step(apps, schema_editor):
            if schema_editor.connection.vendor != "postgresql":
                return
            for sql in statements(refs):
                schema_editor.execute(sql, params=None)  # the bodies hold a literal %

        return step

    return migrations.RunPython(run(create_statements), run(drop_statements))


class OnPostgresql(Operation):
    """`operation` (an AlterField making `db_constraint=False`) in the migration state on every
    database, but run on PostgreSQL only: SQLite keeps its own foreign key."""

    reversible = True

    def __init__(self, operation: Operation) -> None:
        self.operation = operation

    def state_forwards(self, app_label, state):
        self.operation.state_forwards(app_label, state)

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            self.operation.database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == "postgresql":
            self.operation.database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self):
        return f"{self.operation.describe()} (on PostgreSQL)"
