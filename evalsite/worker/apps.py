from django.apps import AppConfig


class WorkerConfig(AppConfig):
    """Only `manage.py db_worker` (django-tasks-db's worker, resuming interrupted work first):
    an app of its own, listed before django_tasks_db so that its command is the one found."""

    name = "evalsite.worker"
    label = "evalsite_worker"
    verbose_name = "Task worker"
