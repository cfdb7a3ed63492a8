"""Starting an upload's import as a background job."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from reviews.models import ImportJob
from reviews.services.imports import import_formats
from reviews.tasks import job_stalled, run_import_job


def _count_lines(upload) -> int | None:
    """Records in a JSONL/CSV upload (CSV minus its header), for the progress bar."""
    name = upload.name.lower()
    if not name.endswith((".jsonl", ".ndjson", ".csv")):
        return None
    lines, last = 0, b"\n"
    for chunk in upload.chunks():
        lines += chunk.count(b"\n")
        last = chunk[-1:] or last
    lines += last != b"\n"  # a last line without its newline
    upload.seek(0)
    return max(0, lines - 1) if name.endswith(".csv") else lines


@transaction.atomic
def import_job_start(*, actor, project, upload, format: str = "", options=None) -> ImportJob:
    if format and format not in import_formats():
        raise ValueError(f"Unknown format {format!r}.")
    job = ImportJob.objects.create(
        project=project,
        created_by=actor,
        file=upload,
        original_name=upload.name[:255],
        format=format,
        records_total=_count_lines(upload),
        report={"options": options or {}},
    )
    transaction.on_commit(lambda: run_import_job.enqueue(job.pk))
    return job


class RetryRefused(Exception):
    """The job cannot be retried; the message says why."""


STALLED = (
    "The task worker stopped while importing (no heartbeat for {seconds} s); nothing was "
    "written. Retry to import the same file again."
)


@transaction.atomic
def import_job_retry(*, actor, job: ImportJob) -> ImportJob:
    """A new job for the same file, once the old one has failed or its worker has died."""
    job = ImportJob.objects.select_for_update().get(pk=job.pk)
    if job_stalled(job):
        job.status = ImportJob.Status.FAILED
        job.error = STALLED.format(seconds=settings.IMPORT_STALE_SECONDS)
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "error", "finished_at"])
    if job.status != ImportJob.Status.FAILED:
        raise RetryRefused(f"This import is {job.get_status_display().lower()}: nothing to retry.")
    if not job.file or not job.file.storage.exists(job.file.name):
        raise RetryRefused("The file was refused and not kept: fix it and upload it again.")
    retry = ImportJob.objects.create(
        project=job.project,
        created_by=actor,
        file=job.file.name,
        original_name=job.original_name,
        format=job.format,
        records_total=job.records_total,
        report={"options": job.report.get("options", {}), "retry_of": job.pk},
    )
    transaction.on_commit(lambda: run_import_job.enqueue(retry.pk))
    return retry
