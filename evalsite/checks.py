"""Our own checks; `make serve` refuses to start on any.

`manage.py check --database default --tag database`: the site's PostgreSQL role must not be
able to switch the history guards off (evalsite/db_roles.py). `manage.py check --deploy`: the
client's address behind a proxy (evalsite/client_address.py)."""

from django.conf import settings
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


@checks.register(checks.Tags.security, deploy=True)
def proxies_for_the_client_address(app_configs, **kwargs):
    """Behind a TLS proxy with TRUSTED_PROXIES=0, every user has the proxy's address: one guesser
    locks the address, and with it everyone, out of signing in."""
    if settings.SECURE_PROXY_SSL_HEADER and not settings.TRUSTED_PROXIES:
        return [
            checks.Warning(
                "BEHIND_TLS_PROXY is true but TRUSTED_PROXIES is 0: every client would share "
                "the proxy's address, and a few wrong passwords from anyone would lock everyone "
                "out of signing in.",
                hint="Set TRUSTED_PROXIES to the number of reverse proxies in front of the site.",
                id="evalsite.W002",
            )
        ]
    return []
