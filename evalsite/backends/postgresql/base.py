"""Django's PostgreSQL backend, with a health check that costs no round trip when the
connection is sound, and prepared statements for the hand-written hot path.

The site keeps its connections between requests (CONN_MAX_AGE) and checks one before a request
uses it (CONN_HEALTH_CHECKS), so a connection the server dropped (a restart, an idle timeout)
is replaced instead of failing the request. Django checks with a `SELECT 1`: a round trip to
the server and its CPU on every request (three per rater answer). Between requests the
connection is idle and the server sends nothing unless it is closing it (a termination
notice, then end of file) or, rarely, reporting something; so if its socket has nothing to
read, it is sound and nothing is sent. If it has, or libpq no longer calls it sound, Django's
own `SELECT 1` decides, as before.

Prepared statements: PostgreSQL plans every statement it is sent as text, and on a rater's
request planning was most of the server's work (a look-up by key plans in longer than it runs).
`prepared_cursor()` gives a cursor whose statements are bound on the server and prepared on
first use, once per connection, so each later run skips parsing and, once PostgreSQL finds
the generic plan no worse than its custom ones, planning too. evalsite/raw_rows.py uses it for
the few statements every rater request runs, all look-ups by key whose plan does not depend
on the values. Everything else (the ORM) keeps Django's default, client-side binding and no
preparation, where a plan made for one project's values could be wrong for another's.
`DATABASE_PREPARED_STATEMENTS=false` turns it off, for a pooler in transaction mode that
does not track prepared statements (PgBouncer before 1.21).
"""

from __future__ import annotations

import select

from django.conf import settings
from django.db.backends.postgresql import base, operations
from psycopg import OperationalError, errors
from psycopg.pq import ConnStatus

# psycopg prepares a statement after this many runs; so high that only the statements that
# ask to be prepared (PreparedCursor) ever are. None, Django's default, would forbid even those.
_ONLY_WHEN_ASKED = 2**62


class PreparedCursor(base.ServerBindingCursor):
    """Parameters bound on the server; every statement prepared (once per connection)."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True, binary=binary)


class DatabaseOperations(operations.DatabaseOperations):
    def last_executed_query(self, cursor, sql, params):
        """A prepared statement's text with its values in (the query log, assertNumQueries):
        the cursor itself keeps only the `$1` form."""
        if isinstance(cursor, PreparedCursor):
            try:
                return self.compose_sql(sql, params)
            except errors.DataError:
                return None
        return super().last_executed_query(cursor, sql, params)


class DatabaseWrapper(base.DatabaseWrapper):
    ops_class = DatabaseOperations

    def get_connection_params(self):
        params = super().get_connection_params()
        if params["prepare_threshold"] is None and settings.DATABASE_PREPARED_STATEMENTS:
            params["prepare_threshold"] = _ONLY_WHEN_ASKED
        return params

    def prepared_cursor(self):
        """`cursor()`, whose statements are prepared (Django's cursor when turned off)."""
        if not settings.DATABASE_PREPARED_STATEMENTS:
            return self.cursor()
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            return self._prepare_cursor(PreparedCursor(self.connection))

    def close_if_health_check_failed(self):
        if (
            self.connection is None
            or self.pool
            or not self.health_check_enabled
            or self.health_check_done
        ):
            return super().close_if_health_check_failed()
        if not self._quiet_and_sound() and not self.is_usable():
            self.close()
        self.health_check_done = True

    def _quiet_and_sound(self) -> bool:
        pgconn = self.connection.pgconn
        try:
            if pgconn.status != ConnStatus.OK:
                return False
            readable, _, _ = select.select([pgconn.socket], [], [], 0)
        except (OperationalError, OSError, ValueError):  # closed: no socket any more
            return False
        return not readable
