"""Background work of the judging app: recomputing dashboard snapshots, judge runs."""

from django.core.cache import cache
from django_tasks import task

from reviews.models import Project

PENDING_SECONDS = 15 * 60


def pending_key(project_pk: int) -> str:
    return f"dashboard-pending:{project_pk}"


def request_recompute(project) -> bool:
    """Queue a recompute unless one is already queued; True if this call queued it."""
    if not cache.add(pending_key(project.pk), True, timeout=PENDING_SECONDS):
        return False
    recompute_dashboard.enqueue(project.pk)
    return True


def recompute_pending(project) -> bool:
    return bool(cache.get(pending_key(project.pk)))


@task()
def recompute_dashboard(project_pk: int) -> None:
    from judging.services.dashboard import dashboard_refresh

    try:
        dashboard_refresh(project=Project.objects.get(pk=project_pk))
    finally:
        cache.delete(pending_key(project_pk))


def run_enqueue(run) -> None:
    """Queue a run for the task workers: once per worker that shares it (`Run.workers`)."""
    for _ in range(run.workers):
        run_judge_task.enqueue(run.pk)


@task()
def run_judge_task(run_pk: int) -> None:
    """A queued run (the *Run* button, or *Resume*): makes the calls still missing."""
    from judging.models import Run
    from judging.services.runs.runner import run_execute

    run_execute(Run.objects.select_related("version__config", "version__criterion").get(pk=run_pk))


@task()
def generate_task(project_pk: int, paths: list[str], options: dict, actor_pk: int | None) -> None:
    """The upload page's generation: blind reads, reconciliation, import (see services)."""
    from pathlib import Path

    from django.contrib.auth import get_user_model

    from judging.services.generation.reconcile import ground_truth_generate

    actor = get_user_model().objects.filter(pk=actor_pk).first()
    ground_truth_generate(
        project=Project.objects.get(pk=project_pk),
        paths=[Path(p) for p in paths],
        actor=actor,
        **options,
    )
