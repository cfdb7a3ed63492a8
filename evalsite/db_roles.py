"""PostgreSQL: the site connects as a role that owns nothing, so the database's guards hold
against the application itself.

A table's owner (or a superuser) can `ALTER TABLE ... DISABLE TRIGGER`, drop or replace the
history triggers' function, and `TRUNCATE`: one SQL injection or careless raw statement on the
owner's connection would switch off append-only history (evalsite/history_triggers.py). So
migrations run as the owner (`MIGRATE_DATABASE_URL`; `grant_app_role` reaches it as the `owner`
database alias) and the site
as `DATABASE_URL`'s role, granted by `app_role_grant` only what it uses: SELECT, INSERT, UPDATE
and DELETE on tables (the triggers refuse UPDATE and DELETE of history), USAGE and SELECT on
sequences (ids drawn ahead by bulk inserts), and the same on every table the owner creates
later (default privileges). `app_role_problems` is the check `make serve` runs as the site.
"""

from __future__ import annotations

from django.db.backends.base.base import BaseDatabaseWrapper

_TABLE_PRIVILEGES = "SELECT, INSERT, UPDATE, DELETE"
_SEQUENCE_PRIVILEGES = "USAGE, SELECT"


def app_role_grant(owner: BaseDatabaseWrapper, role: str) -> list[str]:
    """Grant `role` the site's privileges on `owner`'s schema, now and for tables made later;
    returns the statements run. Refuses a role that is the owner, a member of it, or a
    superuser: it could undo every guard."""
    with owner.cursor() as cursor:
        cursor.execute(
            "SELECT r.rolsuper, pg_has_role(r.oid, o.oid, 'USAGE'), current_schema() "
            "FROM pg_roles r, pg_roles o WHERE r.rolname = %s AND o.rolname = current_user",
            [role],
        )
        found = cursor.fetchone()
        if found is None:
            raise ValueError(f"no PostgreSQL role {role!r} (CREATE ROLE {role} LOGIN PASSWORD ...)")
        superuser, acts_as_owner, schema = found
        if superuser or acts_as_owner:
            raise ValueError(
                f"role {role!r} is {'a superuser' if superuser else 'the owner (or one of it)'}: "
                "the site must connect as a role that owns nothing (DATABASE_URL) and migrate "
                "as the owner (MIGRATE_DATABASE_URL)"
            )
        quote = owner.ops.quote_name
        who, where = quote(role), f"IN SCHEMA {quote(schema)}"
        statements = [
            f"GRANT USAGE ON SCHEMA {quote(schema)} TO {who}",
            f"GRANT {_TABLE_PRIVILEGES} ON ALL TABLES {where} TO {who}",
            f"REVOKE TRUNCATE, REFERENCES, TRIGGER ON ALL TABLES {where} FROM {who}",
            f"GRANT {_SEQUENCE_PRIVILEGES} ON ALL SEQUENCES {where} TO {who}",
            f"ALTER DEFAULT PRIVILEGES {where} GRANT {_TABLE_PRIVILEGES} ON TABLES TO {who}",
            f"ALTER DEFAULT PRIVILEGES {where} GRANT {_SEQUENCE_PRIVILEGES} ON SEQUENCES TO {who}",
        ]
        for sql in statements:
            cursor.execute(sql)
    return statements


def app_role_problems(connection: BaseDatabaseWrapper) -> list[str]:
    """What the role `connection` signs in as could do to switch the guards off (PostgreSQL)."""
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = current_user")
        superuser, _ = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FILTER (WHERE pg_has_role(c.relowner, 'USAGE')), "
            "count(*) FILTER (WHERE has_table_privilege(c.oid, 'TRUNCATE')) "
            "FROM pg_class c WHERE c.relnamespace = current_schema()::regnamespace "
            "AND c.relkind IN ('r', 'p')"
        )
        owned, truncatable = cursor.fetchone()
    problems = []
    if superuser:
        problems.append("connects as a superuser")
    if owned:
        problems.append(f"owns {owned} tables (or is a member of their owner)")
    if truncatable:
        problems.append(f"may TRUNCATE {truncatable} tables")
    return problems
