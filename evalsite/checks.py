"""`manage.py check --database default --tag database` (make serve runs it): the site's
PostgreSQL role must not be able to switch the history guards off (evalsite/db_roles.py)."""

from django.core import checks
from django.db import connections

from evalsite.db_roles import app_role_problems


@checks.register(checks.Tags.database)
def app_role_owns_nothing(app_configs=None, databases=None, **kwargs):
    return [
        checks.Warning(
            f"database {alias!r}: the site's role {problem}, so it could disable the history "
            "triggers or empty history tables",
            hint="connect the site as a role that owns nothing (DATABASE_URL), migrate as the "
            "owner (MIGRATE_DATABASE_URL), then run manage.py grant_app_role",
            id="evalsite.W001",
        )
        for alias in databases or ()
        if alias != "owner"
        for problem in app_role_problems(connections[alias])
    ]
