"""Django's ModelBackend, with the signed-in user of every request read by a hand-written
statement (evalsite/raw_rows.py says why: through the ORM that look-up cost more CPU than the
database's work on it). Same table, same checks (`user_can_authenticate`: inactive users are
nobody), same passwords and permissions: everything else is ModelBackend's own.

While a request's user is worked out (`AuthenticationMiddleware`), the backend takes the user's
row that the session store read in the session's own statement, when that row is the user the
session names (evalsite/sessions.py): one round trip for both instead of two."""

from contextvars import ContextVar

from django.contrib import auth
from django.contrib.auth import get_user_model
from django.contrib.auth import middleware as auth_middleware
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils.functional import SimpleLazyObject

from evalsite import raw_rows

# The session of the request whose user is being worked out, only while it is.
_request_session: ContextVar = ContextVar("evalsite_request_session", default=None)


class UserBackend(ModelBackend):
    def get_user(self, user_id):
        model = get_user_model()
        try:
            pk = model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        read = getattr(_request_session.get(), "user_read", None)
        if read is not None and read[0] == pk:
            user = read[1]
        else:
            found = raw_rows.fetch(
                f"SELECT {raw_rows.columns(model, 'u')}"  # noqa: S608 (names from the model)
                f" FROM {connection.ops.quote_name(model._meta.db_table)} u"
                f" WHERE u.{connection.ops.quote_name(model._meta.pk.column)} = %s",
                [pk],
                model,
            )
            user = found[0][0] if found else None
        return user if user is not None and self.user_can_authenticate(user) else None


class AuthenticationMiddleware(auth_middleware.AuthenticationMiddleware):
    """Django's, with the request's session in view of `UserBackend` while the user is read."""

    def process_request(self, request):
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: _request_user(request))


def _request_user(request):
    if not hasattr(request, "_cached_user"):  # where Django's own middleware keeps it
        token = _request_session.set(request.session)
        try:
            request._cached_user = auth.get_user(request)
        finally:
            _request_session.reset(token)
    return request._cached_user
