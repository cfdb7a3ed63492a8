"""An import job's progress and heartbeat, kept in the shared cache.

The import runs in one transaction, so neither can be written to the database where the web
server would see them; the worker writes them here and the progress page reads them.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.core.cache import cache

from reviews.models import ImportJob

DAY = 24 * 3600
STALLED = (
    "The task worker stopped while importing (no heartbeat for {seconds} s); nothing was "
    "written. Retry to import the same file again."
)


def progress_key(job_pk: int) -> str:
    return f"import-progress:{job_pk}"


def heartbeat_key(job_pk: int) -> str:
    return f"import-heartbeat:{job_pk}"


class Heartbeat(threading.Thread):
    """Says "this worker is alive" several times per IMPORT_STALE_SECONDS while a job runs."""

    def __init__(self, job_pk: int):
        super().__init__(daemon=True, name=f"import-heartbeat-{job_pk}")
        self.key, self.stopped = heartbeat_key(job_pk), threading.Event()
        self.every = min(5.0, settings.IMPORT_STALE_SECONDS / 4)

    def run(self) -> None:
        while True:
            cache.set(self.key, time.time(), timeout=DAY)
            if self.stopped.wait(self.every):
                return

    def stop(self) -> None:
        self.stopped.set()
        self.join()
        cache.delete(self.key)


def job_stalled(job: ImportJob) -> str:
    """Why a running job is dead (its worker stopped beating for IMPORT_STALE_SECONDS), or "".
    Its transaction died with the worker, so nothing it read was written."""
    if job.status != ImportJob.Status.RUNNING:
        return ""
    last = cache.get(heartbeat_key(job.pk))
    since = time.time() - (last if last is not None else job.created_at.timestamp())
    if since <= settings.IMPORT_STALE_SECONDS:
        return ""
    return STALLED.format(seconds=settings.IMPORT_STALE_SECONDS)


def progress_set(job_pk: int, count: int) -> None:
    cache.set(progress_key(job_pk), count, timeout=DAY)


def progress_clear(job_pk: int) -> None:
    cache.delete(progress_key(job_pk))


def records_done(job: ImportJob) -> int:
    if job.status == ImportJob.Status.RUNNING:
        return cache.get(progress_key(job.pk), 0)
    return job.records_done
