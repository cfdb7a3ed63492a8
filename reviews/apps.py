from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"
    verbose_name = "Reviews"

    def ready(self):
        # Importers register themselves with the import dispatcher.
        from reviews.services import import_records, import_reviews  # noqa: F401
