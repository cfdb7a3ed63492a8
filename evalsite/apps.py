from django.apps import AppConfig


class EvalsiteConfig(AppConfig):
    name = "evalsite"
    verbose_name = "Evalsite"

    def ready(self):
        from evalsite import checks  # noqa: F401  (registers the database role and proxy checks)
