from django.apps import AppConfig
from django.db.backends.signals import connection_created


class EvalsiteConfig(AppConfig):
    name = "evalsite"
    verbose_name = "Evalsite"

    def ready(self):
        from evalsite import checks  # noqa: F401  (registers the database role and proxy checks)
        from evalsite.sqlite_wal import sqlite_wal_checked

        connection_created.connect(sqlite_wal_checked, dispatch_uid="evalsite-sqlite-wal")
