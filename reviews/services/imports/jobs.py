"""Starting an upload's import as a background job, and retrying one that failed.

The caller enqueues `reviews.tasks.run_import_job` once the returned job is committed (services
never import tasks).
"""

from __future__ import annotations

import tempfile
import zipfile

from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction
from django.utils import timezone

from reviews.models import ImportJob
from reviews.services.imports.job_progress import job_stalled, stored_orphans_remove
from reviews.services.imports.pipeline import import_formats


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


def uploads_zipped(uploads) -> File:
    """Several uploaded images and PDFs as one stored .zip (stored, not compressed: they are
    compressed already), which the `files` format reads an item per member. Two uploads of
    the same name are refused: an item's id is its file's name."""
    names = [upload.name for upload in uploads]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValidationError(
            {"file": f"Two files named {repeated[0]}: an item's id is its file's name; rename one."}
        )
    spool = tempfile.SpooledTemporaryFile(max_size=64 << 20)  # noqa: SIM115 (File closes it)
    with zipfile.ZipFile(spool, "w", zipfile.ZIP_STORED) as bundle:
        for upload in uploads:
            with bundle.open(upload.name, "w", force_zip64=True) as member:
                for chunk in upload.chunks():
                    member.write(chunk)
    spool.seek(0)
    return File(spool, name=f"{len(uploads)}-files.zip")


def _uploads_named(uploads) -> str:
    """What the job list calls several files: how many, and their names as far as they fit."""
    return f"{len(uploads)} files: {', '.join(u.name for u in uploads)}"[:255]


@transaction.atomic
def import_job_start(*, actor, project, upload, format: str = "", options=None) -> ImportJob:
    """`upload`: one uploaded file, or a list of them (several images and PDFs)."""
    if format and format not in import_formats():
        raise ValueError(f"Unknown format {format!r}.")
    uploads = upload if isinstance(upload, list) else [upload]
    name = uploads[0].name if len(uploads) == 1 else _uploads_named(uploads)
    upload = uploads[0] if len(uploads) == 1 else uploads_zipped(uploads)
    job = ImportJob.objects.create(
        project=project,
        created_by=actor,
        file=upload,
        original_name=name[:255],
        format=format,
        records_total=_count_lines(upload),
        report={"options": options or {}},
    )
    return job


class RetryRefused(Exception):
    """The job cannot be retried; the message says why."""


def _fail_if_stalled(job: ImportJob) -> None:
    """Record a dead worker's job as failed, with the reason (the caller holds its row lock)."""
    if reason := job_stalled(job):
        job.status = ImportJob.Status.FAILED
        job.error = reason
        job.finished_at = timezone.now()
        job.save(update_fields=["status", "error", "finished_at"])
        transaction.on_commit(lambda: stored_orphans_remove(job.pk))


MAX_RESUMES = 3  # a file that kills its worker every time is failed, not retried forever
GAVE_UP = (
    "The task worker stopped {times} times while importing this file; nothing was written. "
    "Retry to import it again."
)


def import_jobs_resume_stalled() -> list[int]:
    """Every running job whose worker died (its transaction died with it: nothing was written)
    is queued again, at most MAX_RESUMES times, then failed and its stored files removed.
    Returns the pks queued, for the caller to enqueue (a worker calls this as it starts, and
    before each job)."""
    queued, given_up = [], []
    with transaction.atomic():
        running = ImportJob.objects.select_for_update().filter(status=ImportJob.Status.RUNNING)
        for job in running:
            if not job_stalled(job):
                continue
            resumes = job.report.get("resumes", 0)
            if resumes >= MAX_RESUMES:
                job.status, job.finished_at = ImportJob.Status.FAILED, timezone.now()
                job.error = GAVE_UP.format(times=resumes + 1)
                job.save(update_fields=["status", "error", "finished_at"])
                given_up.append(job.pk)
                continue
            job.status = ImportJob.Status.QUEUED
            job.report = {**job.report, "resumes": resumes + 1}
            job.save(update_fields=["status", "report"])
            queued.append(job.pk)
    for pk in given_up:
        stored_orphans_remove(pk)
    return queued


@transaction.atomic
def import_job_retry(*, actor, job: ImportJob) -> ImportJob:
    """A new job for the same file, once the old one has failed or its worker has died."""
    job = ImportJob.objects.select_for_update().get(pk=job.pk)
    _fail_if_stalled(job)
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
    return retry
