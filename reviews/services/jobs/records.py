"""Starting, claiming, running and resuming background jobs (reviews.models.Job).

The caller starts a job with a bound, valid form; the job is queued once committed (the
`job_queued` signal: services never import tasks, reviews.tasks listens). A worker claims it
with one conditional UPDATE, so two workers never run the same job, and runs it in one
transaction that also records the outcome: a worker killed mid-job leaves nothing of it, and
the job is queued again (at most MAX_RESUMES times), then failed, saying why. A kind that runs
`in_steps` (registry.py) commits its own steps instead; its resumed job finishes the rest.
"""

from __future__ import annotations

import logging
from contextlib import nullcontext

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.datastructures import MultiValueDict

from evalsite.planner_statistics import planner_statistics_refresh
from evalsite.posting import errors_text
from reviews.access import roles_of
from reviews.models import Job, Role
from reviews.services.jobs.progress import job_stalled, progress_clear, progress_set
from reviews.services.jobs.registry import KINDS
from reviews.signals import job_queued

logger = logging.getLogger(__name__)

MAX_RESUMES = 3  # a job that kills its worker every time is failed, not retried forever
GAVE_UP = "The task worker stopped {times} times while running this job; nothing was changed."


class JobRefused(Exception):
    """The job's input is no longer valid (the reason names the field)."""


def form_data(form) -> dict[str, list[str]]:
    """A bound form's submitted values of its own fields, as lists (JSON for the job's params;
    the worker binds the same form to them again)."""
    data = form.data
    return {
        name: data.getlist(name) if hasattr(data, "getlist") else [data[name]]
        for name in form.fields
        if name in data
    }


def job_start(*, kind: str, actor, project, form, extra=None, back: str = "") -> Job:
    """Queue a job of `kind` for the valid `form` (`extra`: JSON arguments of `run` beside the
    form's, `back`: the page it was started from)."""
    assert kind in KINDS, kind
    job = Job.objects.create(
        project=project,
        created_by=actor if getattr(actor, "pk", None) else None,
        kind=kind,
        params={
            "data": form_data(form),
            "extra": extra or {},
            "back": back,
            "by": getattr(actor, "pk", None),
        },  # fmt: skip
    )
    transaction.on_commit(lambda: job_queued.send(Job, job=job))
    return job


def job_claim(job_pk: int) -> Job | None:
    """The job, now running in this worker; None if another worker has it or it is done."""
    claimed = Job.objects.filter(pk=job_pk, status=Job.Status.QUEUED).update(
        status=Job.Status.RUNNING, attempts=F("attempts") + 1, started_at=timezone.now()
    )
    if not claimed:
        return None
    return Job.objects.select_related("project", "created_by").get(pk=job_pk)


def _finish(job: Job, status: str, *, result: str = "", error: str = "") -> None:
    job.status, job.result, job.error, job.finished_at = status, result, error, timezone.now()
    job.save(update_fields=["status", "result", "error", "done", "total", "finished_at"])


def job_execute(job: Job) -> None:
    """Run a claimed job: its work and its outcome commit together, or neither does; a kind
    `in_steps` commits its own steps, and a crash keeps the steps done (said on the job)."""
    kind = KINDS.get(job.kind)
    refusals = (JobRefused, ValidationError, *(kind.refusals if kind else ()))
    in_steps = kind is not None and kind.in_steps

    def progress(done: int, total: int | None) -> None:
        job.done, job.total = done, total
        progress_set(job.pk, done, total)

    try:
        with nullcontext() if in_steps else transaction.atomic():
            if kind is None:
                raise JobRefused(f"this site has no job of kind {job.kind!r}")
            _starter_check(job, kind)
            form = kind.form(MultiValueDict(job.params.get("data", {})), project=job.project)
            if not form.is_valid():
                raise JobRefused(errors_text(form))
            kwargs = {**form.cleaned_data, **job.params.get("extra", {})}
            if kind.progress:
                kwargs["progress"] = progress
            said = kind.run(actor=job.created_by, project=job.project, **kwargs)
            _finish(job, Job.Status.SUCCEEDED, result=said)
    except refusals as refused:
        reason = " ".join(refused.messages) if isinstance(refused, ValidationError) else refused
        _finish(job, Job.Status.FAILED, error=f"Nothing was changed: {reason}")
    except Exception as error:  # a bug, not bad input: say so instead of hanging "running"
        logger.exception("job %s (%s) crashed", job.pk, job.kind)
        kept = (
            "the steps it finished are kept, and starting it again finishes the rest"
            if in_steps
            else "nothing was changed"
        )
        message = f"The job stopped on an internal error ({type(error).__name__}); {kept}."
        _finish(job, Job.Status.FAILED, error=message)
    finally:
        progress_clear(job.pk)
    # A job is a bulk write (a split of every item, questions for 50k items, a bulk action):
    # what an import does when it ends, whatever its outcome (in_steps kinds keep their steps).
    planner_statistics_refresh(after=f"job {job.pk} ({job.kind})")


def _starter_check(job: Job, kind) -> None:
    """The person who started the job may still do it now: the worker acts in their name, and
    a role taken away (or an account closed) while the job waited must stop it. A job started
    by the operator's console (no person) runs as such."""
    starter = job.created_by
    if starter is None and job.params.get("by") is None:
        return
    if starter is None or not starter.is_active:
        raise JobRefused("the account that started this job is closed")
    if not roles_of(starter, job.project) & set(kind.roles):
        names = " or ".join(Role(role).label.lower() for role in kind.roles)
        raise JobRefused(f"{starter.get_username()} is no longer {names} of {job.project.name}")


def jobs_resume_stalled() -> list[int]:
    """Every running job whose worker died is queued again (MAX_RESUMES times at most), then
    failed. Returns the pks queued, for the caller to enqueue."""
    queued = []
    with transaction.atomic():
        for job in Job.objects.select_for_update().filter(status=Job.Status.RUNNING):
            if not job_stalled(job):
                continue
            if job.attempts > MAX_RESUMES:
                _finish(job, Job.Status.FAILED, error=GAVE_UP.format(times=job.attempts))
                continue
            job.status = Job.Status.QUEUED
            job.save(update_fields=["status"])
            queued.append(job.pk)
    return queued
