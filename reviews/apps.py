from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


def _ensure_history_triggers(sender, using, **kwargs):
    from django.db import connections

    from reviews.history_triggers import ensure_triggers

    ensure_triggers(connections[using])


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Reviews"

    def ready(self):
        # Importers register themselves with the import dispatcher.
        from reviews.history_triggers import register_sqlite_function
        from reviews.services import import_records, import_reviews  # noqa: F401

        connection_created.connect(register_sqlite_function, dispatch_uid="evalsite-history")
        post_migrate.connect(
            _ensure_history_triggers, sender=self, dispatch_uid="evalsite-history-triggers"
        )
