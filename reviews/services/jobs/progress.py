"""A running job's progress and heartbeat, kept in the shared cache: its work is one
transaction, so nothing it writes to the database is seen before it ends."""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.core.cache import cache

from reviews.models import Job

DAY = 24 * 3600
STALLED = (
    "The task worker stopped while running this job (no heartbeat for {seconds} s); nothing "
    "was changed."
)


def _progress_key(job_pk: int) -> str:
    return f"job-progress:{job_pk}"


def _heartbeat_key(job_pk: int) -> str:
    return f"job-heartbeat:{job_pk}"


class Heartbeat(threading.Thread):
    """Writes "this worker is alive" under `key` several times per IMPORT_STALE_SECONDS (the
    one staleness rule of imports and jobs) until stopped."""

    def __init__(self, key: str):
        super().__init__(daemon=True, name=f"heartbeat-{key}")
        self.key, self.stopped = key, threading.Event()
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


def job_heartbeat(job_pk: int) -> Heartbeat:
    return Heartbeat(_heartbeat_key(job_pk))


def job_stalled(job: Job) -> str:
    """Why a running job is dead (no heartbeat for IMPORT_STALE_SECONDS), or ""."""
    if job.status != Job.Status.RUNNING:
        return ""
    last = cache.get(_heartbeat_key(job.pk))
    started = job.started_at or job.created_at
    since = time.time() - (last if last is not None else started.timestamp())
    if since <= settings.IMPORT_STALE_SECONDS:
        return ""
    return STALLED.format(seconds=settings.IMPORT_STALE_SECONDS)


def progress_set(job_pk: int, done: int, total: int | None) -> None:
    cache.set(_progress_key(job_pk), (done, total), timeout=DAY)


def progress_clear(job_pk: int) -> None:
    cache.delete(_progress_key(job_pk))


def job_progress(job: Job) -> tuple[int, int | None]:
    """(done, total) so far; total None while unknown."""
    if job.status == Job.Status.RUNNING:
        return cache.get(_progress_key(job.pk), (0, None))
    return job.done, job.total
