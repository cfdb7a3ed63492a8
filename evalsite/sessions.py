"""Django's database sessions, read by a hand-written statement.

Every signed-in request reads its session first; through the ORM that look-up cost more CPU
than PostgreSQL's own work on it (evalsite/raw_rows.py says why and how). Same table, same rows,
same expiry rule as `django.contrib.sessions.backends.db`, which does everything else: the
setting `SESSION_ENGINE = "evalsite.sessions"` changes nothing for sessions already open.
"""

from django.contrib.sessions.backends import db
from django.db import connection
from django.utils import timezone

from evalsite import raw_rows


class SessionStore(db.SessionStore):
    def _get_session_from_db(self):
        model = self.model
        found = raw_rows.fetch(
            f"SELECT {raw_rows.columns(model, 's')} FROM {connection.ops.quote_name(model._meta.db_table)} s"  # noqa: S608
            " WHERE s.session_key = %s AND s.expire_date > %s",
            [self.session_key, connection.ops.adapt_datetimefield_value(timezone.now())],
            model,
        )
        if not found:
            self._session_key = None
            return None
        return found[0][0]
