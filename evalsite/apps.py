from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class EvalsiteConfig(AppConfig):
    name = "evalsite"
    verbose_name = "Evalsite"

    def ready(self):
        from evalsite import checks  # noqa: F401  (registers the database role and proxy checks)
        from evalsite.history_triggers import sqlite_flag_install, triggers_after_migrate
        from evalsite.sqlite_wal import sqlite_wal_checked

        connection_created.connect(sqlite_wal_checked, dispatch_uid="evalsite-sqlite-wal")
        # Every app's history tables (its AppConfig's `history_tables`), whichever app it is.
        connection_created.connect(sqlite_flag_install, dispatch_uid="evalsite-history")
        post_migrate.connect(triggers_after_migrate, dispatch_uid="evalsite-history-triggers")
