"""`manage.py db_worker`: django-tasks-db's worker, resuming the work a dead worker left.

A worker killed mid-task leaves its import or judge run `running` for ever. As this worker
starts, and every few seconds while it lives (a worker that died just before it started is
seen once its heartbeat goes stale), it records such work as interrupted and queues again
the imports and background jobs (at most a few times each) and the judge runs started from the site (their
finished calls are reused, never paid twice); the files a killed import stored are removed
when its job ends.
"""

import logging
import threading

from django.conf import settings
from django.db import close_old_connections
from django_tasks_db.management.commands.db_worker import Command as DbWorkerCommand

logger = logging.getLogger(__name__)


def interrupted_work_resume() -> None:
    from judging.models import Run
    from judging.services.runs.control import runs_recover
    from judging.tasks import run_enqueue
    from reviews.tasks import import_jobs_resume, jobs_resume

    import_jobs_resume()
    jobs_resume()
    for pk in runs_recover():
        logger.warning("resuming run %s: its worker died", pk)
        run_enqueue(Run.objects.get(pk=pk))


class Recovery(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True, name="interrupted-work")
        self.every = max(1, min(settings.RUN_STALE_SECONDS, settings.IMPORT_STALE_SECONDS) / 2)

    def run(self) -> None:
        stop = threading.Event()
        while not stop.wait(self.every):
            try:
                interrupted_work_resume()
            except Exception:  # a locked database or a brief outage: try again next time
                logger.exception("could not resume interrupted work")
            finally:
                close_old_connections()


class Command(DbWorkerCommand):
    help = DbWorkerCommand.help + (
        " As it starts, and while it runs, it resumes the imports and site-started judge runs "
        "whose worker died."
    )

    def handle(self, *args, **options):
        interrupted_work_resume()
        Recovery().start()
        super().handle(*args, **options)
