"""Background work of the judging app: judge runs and generation (a dashboard recompute is a
background job: judging/services/dashboard_recompute.py)."""

from django_tasks import task

from reviews.models import Project


@task()
def recompute_dashboard(project_pk: int) -> None:
    """Left for tasks queued before the recompute became a background job (reviews' Job,
    judging/services/dashboard_recompute.py): it queues that job."""
    from judging.services.dashboard_recompute import recompute_request

    recompute_request(project=Project.objects.get(pk=project_pk))


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
