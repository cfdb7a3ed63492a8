"""The dashboard's recompute is a background job (reviews' Job, kind `dashboard_recompute`,
registered in judging/apps.py): the admin's *Recompute* and the automatic one after new labels,
verdicts or a split (`project_data_changed`) both queue it, and the dashboard links to its job
page while it waits or runs. The pages keep reading the latest snapshot meanwhile.

It runs `in_steps`: `dashboard_refresh` draws late items into the split in short transactions
of its own (splits.py: `split_extend`) and writes the snapshot last, in one INSERT, so a worker
killed mid-way leaves the previous snapshot current and the resumed job computes it again.
"""

from __future__ import annotations

from collections.abc import Callable

from django import forms
from django.db import connection
from django.urls import reverse

from evalsite import raw_rows
from judging.models import Criterion
from judging.services.dashboard import dashboard_refresh
from reviews.models import Job
from reviews.services.jobs.progress import job_stalled
from reviews.services.jobs.records import job_start

KIND = "dashboard_recompute"
UNFINISHED = (Job.Status.QUEUED, Job.Status.RUNNING)


def recompute_job(project) -> Job | None:
    """The project's recompute that is waiting for a worker or running (a dead worker's is
    not: the next worker resumes it), or None."""
    job = (
        Job.objects.filter(project=project, kind=KIND, status__in=UNFINISHED)
        .only("status", "created_at", "started_at")
        .first()
    )
    return None if job is None or job_stalled(job) else job


def recompute_request(*, project, actor=None) -> tuple[Job, bool]:
    """Queue a recompute of the project's dashboard unless one is already waiting for a worker
    (it will read the inputs as they are when it starts); (the job, True if this call queued
    it). A running one does not count: it may have read the inputs before this change."""
    waiting = Job.objects.filter(project=project, kind=KIND, status=Job.Status.QUEUED).first()
    if waiting is not None:
        return waiting, False
    back = reverse("project_dashboard", args=[project.slug])
    return job_start(kind=KIND, actor=actor, project=project, form=forms.Form(), back=back), True


def recompute_after_change(project) -> None:
    """`project_data_changed`'s receiver (judging/apps.py): new labels or verdicts queue a
    recompute if the project has criteria and none is waiting already. Every submit that
    settles a question runs it, so both checks are one hand-written statement (evalsite/
    raw_rows.py says why): through the ORM they were a fifth of a submit & next's time."""
    quote = connection.ops.quote_name
    ((judged, waiting),) = raw_rows.fetch(
        f"SELECT EXISTS(SELECT 1 FROM {quote(Criterion._meta.db_table)} c"  # noqa: S608 (names from the models)
        " WHERE c.project_id = %s),"
        f" EXISTS(SELECT 1 FROM {quote(Job._meta.db_table)} j"
        " WHERE j.project_id = %s AND j.kind = %s AND j.status = %s)",
        [project.pk, project.pk, KIND, Job.Status.QUEUED],
        extra=2,
    )
    if judged and not waiting:
        recompute_request(project=project)


def dashboard_recompute_said(*, actor, project, progress: Callable[[int, int], None]) -> str:
    """The job's work: a new snapshot, then what it holds in a sentence."""
    snapshot = dashboard_refresh(project=project, progress=progress)
    criteria = len(snapshot.payload["criteria"])
    versions = f"{criteria} criterion version{'s' if criteria != 1 else ''}"
    return f"Figures recomputed: {versions}, computed at {snapshot.payload['computed_at']}."
