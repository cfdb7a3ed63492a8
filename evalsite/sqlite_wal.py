"""SQLite must run in WAL mode: readers then never wait for the writer, and a writer waits
for another (IMMEDIATE transactions, a busy timeout: evalsite/env.py) instead of failing.

`PRAGMA journal_mode=WAL` in the connection's init_command can fail quietly (a file system
without shared memory, a read-only folder, a database opened elsewhere in another mode): the
site would then lock readers out during every write. Each new connection checks the mode
and refuses to start otherwise.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

IN_MEMORY = "memory"  # a private in-memory database: one connection, nothing to share


def sqlite_wal_checked(sender, connection, **kwargs) -> None:
    """`connection_created` receiver: raise ImproperlyConfigured unless SQLite is in WAL."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        mode = cursor.execute("PRAGMA journal_mode").fetchone()[0].lower()
    if mode not in {"wal", IN_MEMORY}:
        raise ImproperlyConfigured(
            f"SQLite database {connection.settings_dict['NAME']} is in journal mode {mode!r}, "
            "not 'wal': writes would lock out every reader. Put the file on a local disk in a "
            "folder the site can write (WAL keeps -wal and -shm files beside it), or use "
            "PostgreSQL."
        )
