from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


def _ensure_triggers(sender, using, **kwargs):
    """SQLite drops a table's triggers when a migration rebuilds it: put them back."""
    from django.db import connections

    from reviews import history_triggers, link_triggers

    history_triggers.ensure_triggers(connections[using])
    link_triggers.ensure_triggers(connections[using])


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Reviews"

    def ready(self):
        from django.conf import settings

        from reviews.formats import limits
        from reviews.history_triggers import register_sqlite_function

        connection_created.connect(register_sqlite_function, dispatch_uid="evalsite-history")
        post_migrate.connect(_ensure_triggers, sender=self, dispatch_uid="evalsite-triggers")
        # The readers in reviews.formats know no Django: hand them the configured limits.
        limits.configure(
            limits.Limits(**{f: getattr(settings, name) for f, name in limits.SETTINGS.items()})
        )
        # Importers register themselves with the import pipeline, in the order the format
        # choices are listed: review files first.
        from reviews.services.imports import review_files  # noqa: F401, I001
        from reviews.services.imports import records  # noqa: F401
        from reviews.services.imports import files  # noqa: F401
