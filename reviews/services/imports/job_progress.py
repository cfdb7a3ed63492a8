"""An import job's progress and heartbeat, kept in the shared cache.

The import runs in one transaction, so neither can be written to the database where the web
server would see them; the worker writes them here and the progress page reads them.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache

from reviews.models import ImportJob
from reviews.services.files.gc import remove_unreferenced
from reviews.services.jobs.progress import DAY, Heartbeat

STALLED = (
    "The task worker stopped while importing (no heartbeat for {seconds} s); nothing was "
    "written. Retry to import the same file again."
)


def progress_key(job_pk: int) -> str:
    return f"import-progress:{job_pk}"


def heartbeat_key(job_pk: int) -> str:
    return f"import-heartbeat:{job_pk}"


def heartbeat(job_pk: int) -> Heartbeat:
    """Says "this worker is alive" several times per IMPORT_STALE_SECONDS while a job runs."""
    return Heartbeat(heartbeat_key(job_pk))


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


def _stored_key(job_pk: int, chunk: int) -> str:
    return f"import-stored:{job_pk}:{chunk}"


class StoredJournal:
    """The evidence files a job's attempts stored, written to the shared cache as each is
    stored: a worker killed mid-import leaves files no committed row references, and whoever
    ends the job (the attempt that resumes it, or the sweep that gives up) removes them."""

    CHUNK = 100  # names per cache entry: each store rewrites one short entry

    def __init__(self, job_pk: int):
        self.job_pk, self.chunk, self.names = job_pk, len(_stored_chunks(job_pk)), []

    def add(self, name: str) -> None:
        self.names.append(name)
        cache.set(_stored_key(self.job_pk, self.chunk), self.names, timeout=DAY)
        if len(self.names) >= self.CHUNK:
            self.chunk, self.names = self.chunk + 1, []


def _stored_chunks(job_pk: int) -> list[list[str]]:
    chunks = []
    while (names := cache.get(_stored_key(job_pk, len(chunks)))) is not None:
        chunks.append(names)
    return chunks


def stored_orphans_remove(job_pk: int) -> list[str]:
    """At a job's end: remove the files its attempts stored that no committed Document
    references (under the evidence lock, so never one another import is committing)."""
    chunks = _stored_chunks(job_pk)
    removed = remove_unreferenced(name for names in chunks for name in names)
    cache.delete_many([_stored_key(job_pk, n) for n in range(len(chunks))])
    return removed


def progress_set(job_pk: int, count: int) -> None:
    cache.set(progress_key(job_pk), count, timeout=DAY)


def progress_clear(job_pk: int) -> None:
    cache.delete(progress_key(job_pk))


def records_done(job: ImportJob) -> int:
    if job.status == ImportJob.Status.RUNNING:
        return cache.get(progress_key(job.pk), 0)
    return job.records_done
