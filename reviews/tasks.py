"""Background work (Django Tasks API): large imports run in `manage.py db_worker`.

The import runs in one transaction, so its progress and heartbeat go to the shared cache
(reviews.services.imports.job_progress), and the job row is updated once at the end.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

from django.core.files.storage import default_storage
from django.utils import timezone
from django_tasks import task

from reviews.models import ImportJob
from reviews.services.files.stored import local_path
from reviews.services.imports import job_progress
from reviews.services.imports.jobs import import_jobs_resume_stalled
from reviews.services.imports.pipeline import ImportFailed, file_import
from reviews.services.jobs.progress import job_heartbeat
from reviews.services.jobs.records import job_claim, job_execute, jobs_resume_stalled

logger = logging.getLogger(__name__)


def _upload_remove(job: ImportJob) -> None:
    """The upload and its folder (each upload has one, see `import_upload_path`)."""
    folder = Path(job.file.name).parent
    job.file.delete(save=False)
    with contextlib.suppress(NotImplementedError, OSError):  # not a local folder, or not empty
        os.rmdir(default_storage.path(str(folder)))


def import_jobs_resume() -> None:
    """Queue again the jobs whose worker died (they were left "running")."""
    for pk in import_jobs_resume_stalled():
        run_import_job.enqueue(pk)


@task()
def run_import_job(job_pk: int) -> str:
    import_jobs_resume()  # a worker that died before this one left its jobs "running"
    job = ImportJob.objects.select_related("project", "created_by").get(pk=job_pk)
    if job.status != ImportJob.Status.QUEUED:
        return job.status  # retried or finished meanwhile: never run a job twice
    job.status = ImportJob.Status.RUNNING
    job.save(update_fields=["status"])
    done = 0
    heartbeat = job_progress.heartbeat(job.pk)
    heartbeat.start()

    def progress(count: int) -> None:
        nonlocal done
        done = count
        job_progress.progress_set(job.pk, count)

    try:
        with local_path(job.file) as path:  # the upload may be in a bucket, not on this disk
            report = file_import(
                actor=job.created_by,
                project=job.project,
                path=path,
                name=job.original_name,
                format=job.format or None,
                options=job.report.get("options", {}),
                progress=progress,
                on_store=job_progress.StoredJournal(job.pk).add,
            )
    except ImportFailed as failure:
        job.status = ImportJob.Status.FAILED
        job.error = str(failure)
        job.report = {**job.report, "error": failure.error.as_dict()}
        _upload_remove(job)  # a refused file is not kept (a crash keeps it, to retry)
    except Exception as error:  # a bug, not bad input: say so instead of hanging "running"
        logger.exception("import job %s crashed", job.pk)
        job.status = ImportJob.Status.FAILED
        job.error = f"The import stopped on an internal error ({type(error).__name__}); nothing was written."
    else:
        job.status = ImportJob.Status.SUCCEEDED
        job.report = {**job.report, **report.as_dict()}
        done = job.records_total or done
    finally:
        heartbeat.stop()
    # Before the job reads as finished, so a finished job never has orphans: the files an
    # attempt killed before this one stored (a kill from here on resumes, and removes them then).
    job_progress.stored_orphans_remove(job.pk)
    job.records_done = done
    job.finished_at = timezone.now()
    job.save(update_fields=["status", "error", "report", "records_done", "finished_at", "file"])
    job_progress.progress_clear(job.pk)
    return job.status


def jobs_resume() -> None:
    """Queue again the background jobs whose worker died (they were left "running")."""
    for pk in jobs_resume_stalled():
        run_job.enqueue(pk)


def job_queued_enqueue(sender, *, job, **kwargs) -> None:
    """The `job_queued` signal's receiver (connected in reviews/apps.py)."""
    run_job.enqueue(job.pk)


@task()
def run_job(job_pk: int) -> str:
    """A background job (reviews/services/jobs): claimed by one worker only, run, recorded."""
    jobs_resume()
    job = job_claim(job_pk)
    if job is None:
        return "taken"  # another worker has it, or it finished meanwhile
    heartbeat = job_heartbeat(job.pk)
    heartbeat.start()
    try:
        job_execute(job)
    finally:
        heartbeat.stop()
    return job.status


@task()
def evidence_gc_periodic() -> int:
    """Remove unreferenced evidence files, then queue the next run (a periodic task without a
    scheduler: `manage.py evidence_gc --schedule` starts it)."""
    from datetime import timedelta

    from django.conf import settings

    from reviews.services.files.gc import evidence_gc

    removed = evidence_gc()
    every = timedelta(minutes=settings.EVIDENCE_GC_MINUTES)
    evidence_gc_periodic.using(run_after=timezone.now() + every).enqueue()
    return len(removed)


def webhook_deliveries_enqueue(sender, *, delivery_pks, **kwargs) -> None:
    """The `webhook_deliveries_queued` signal's receiver (connected in reviews/apps.py)."""
    for pk in delivery_pks:
        webhook_deliver.enqueue(pk)


@task()
def webhook_deliver(delivery_pk: int) -> str:
    """One attempt at a webhook delivery; a failed one is queued again after its backoff.

    Re-enqueued with `run_after` rather than retried in place (tenacity): a retry sleeping in the
    task would hold a worker for up to hours while imports and runs wait behind it, and would
    be lost when the worker restarts; a queued retry survives both. The immediate backend
    (tests, scripts) cannot defer, so there the retry follows at once.
    """
    from datetime import timedelta

    from reviews.services.webhooks.deliver import webhook_attempt

    outcome = webhook_attempt(delivery_pk)
    if outcome.retry_in is not None:
        again = webhook_deliver
        if webhook_deliver.get_backend().supports_defer:
            again = again.using(run_after=timezone.now() + timedelta(seconds=outcome.retry_in))
        again.enqueue(delivery_pk)
    return outcome.status
