"""Django's PostgreSQL backend, with a health check that costs no round trip when the
connection is sound.

The site keeps its connections between requests (CONN_MAX_AGE) and checks one before a request
uses it (CONN_HEALTH_CHECKS), so a connection the server dropped (a restart, an idle timeout)
is replaced instead of failing the request. Django checks with a `SELECT 1`: a round trip to
the server and its CPU on every request (three per rater answer). Between requests the
connection is idle and the server sends nothing unless it is closing it (a termination
notice, then end of file) or, rarely, reporting something; so if its socket has nothing to
read, it is sound and nothing is sent. If it has, or libpq no longer calls it sound, Django's
own `SELECT 1` decides, as before.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import OperationalError
from psycopg.pq import ConnStatus


class DatabaseWrapper(base.DatabaseWrapper):
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
