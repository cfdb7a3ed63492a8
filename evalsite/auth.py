"""Django's ModelBackend, with the signed-in user of every request read by a hand-written
statement (evalsite/raw_rows.py says why: through the ORM that look-up cost more CPU than the
database's work on it). Same table, same checks (`user_can_authenticate`: inactive users are
nobody), same passwords and permissions: everything else is ModelBackend's own."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import ValidationError
from django.db import connection

from evalsite import raw_rows


class UserBackend(ModelBackend):
    def get_user(self, user_id):
        model = get_user_model()
        try:
            pk = model._meta.pk.to_python(user_id)
        except ValidationError:
            return None
        found = raw_rows.fetch(
            f"SELECT {raw_rows.columns(model, 'u')}"  # noqa: S608 (names from the model)
            f" FROM {connection.ops.quote_name(model._meta.db_table)} u"
            f" WHERE u.{connection.ops.quote_name(model._meta.pk.column)} = %s",
            [pk],
            model,
        )
        user = found[0][0] if found else None
        return user if user is not None and self.user_can_authenticate(user) else None
