"""Django's database sessions, read by a hand-written statement, with the user's row beside.

Every signed-in request reads its session first; through the ORM that look-up cost more CPU
than PostgreSQL's own work on it (evalsite/raw_rows.py says why and how). Same table, same rows,
same expiry rule as `django.contrib.sessions.backends.db`, which does everything else: the
setting `SESSION_ENGINE = "evalsite.sessions"` changes nothing for sessions already open.

Then the request reads its user, named by the session's data: a second statement and round
trip. So this process remembers which user each session key's data named when it was last
read here, and the next read of that session takes that user's row in the same statement
(`SessionStore.user_read`). It is only a guess of which row to read: the user comes from the
session's own data, decoded and verified, and the row is used only when that names the same
user (evalsite/auth.py); otherwise the user is read as before.
"""

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.backends import db
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from evalsite import raw_rows

# session key -> the user pk its data named when this process last read it. Bounded: emptied
# when full, which costs each session one read without the guess.
_USER_OF: dict[str, object] = {}
_REMEMBERED_AT_MOST = 20_000


class SessionStore(db.SessionStore):
    # (pk, user or None) read with the session by the last load: the user's row for that pk.
    user_read: tuple | None = None

    def load(self):
        data = super().load()
        pk = _user_pk(data.get(SESSION_KEY))
        if self.session_key and pk is not None and _USER_OF.get(self.session_key) != pk:
            if len(_USER_OF) >= _REMEMBERED_AT_MOST:
                _USER_OF.clear()
            _USER_OF[self.session_key] = pk
        return data

    def _get_session_from_db(self):
        self.user_read = None
        user_pk = _USER_OF.get(self.session_key)
        session, user = self.model, get_user_model()
        quote = connection.ops.quote_name
        sql = f"SELECT {raw_rows.columns(session, 's')}"  # noqa: S608 (names from the models)
        params = [self.session_key, connection.ops.adapt_datetimefield_value(timezone.now())]
        if user_pk is not None:
            sql += (
                f", {raw_rows.columns(user, 'u')} FROM {quote(session._meta.db_table)} s"
                f" LEFT JOIN {quote(user._meta.db_table)} u"
                f" ON u.{quote(user._meta.pk.column)} = %s"
            )
            params.insert(0, user_pk)
        else:
            sql += f" FROM {quote(session._meta.db_table)} s"
        sql += " WHERE s.session_key = %s AND s.expire_date > %s"
        extra = len(user._meta.concrete_fields) if user_pk is not None else 0
        found = raw_rows.fetch(sql, params, session, extra=extra)
        if not found:
            self._session_key = None
            return None
        row, *user_values = found[0]
        if user_pk is not None:
            pk_at = user._meta.concrete_fields.index(user._meta.pk)
            there = user_values[pk_at] is not None  # the LEFT JOIN found the row
            self.user_read = (user_pk, raw_rows.from_row(user, user_values) if there else None)
        return row


def _user_pk(value):
    """The user pk a session's data holds, as the user table's key (None if it holds none)."""
    if value is None:
        return None
    try:
        return get_user_model()._meta.pk.to_python(value)
    except ValidationError:
        return None
