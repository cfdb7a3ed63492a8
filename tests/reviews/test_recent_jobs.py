"""`recent_jobs` reads by hand (reviews/selectors.py): the project's five newest jobs as the
ORM's `.only("kind", "status", "created_at")` gives them, each with its kind's label, on both
databases."""

from datetime import timedelta

import pytest
from django.utils import timezone

from reviews.models import Job
from reviews.selectors import RECENT_JOBS, recent_jobs
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def test_the_jobs_are_the_orms():
    project, other = ProjectFactory(), ProjectFactory()
    start = timezone.now()
    for n, (kind, status) in enumerate(
        [
            ("dashboard_recompute", "succeeded"),
            ("items.reopen", "failed"),
            ("unknown.kind", "queued"),
        ]
        * 3
    ):
        for owner in (project, other):
            job = Job.objects.create(project=owner, kind=kind, status=status, params={"n": n})
            # pairs made at the same moment: the newest id first
            Job.objects.filter(pk=job.pk).update(created_at=start - timedelta(minutes=n // 2))
    ours = recent_jobs(project)
    orm = Job.objects.filter(project=project).order_by("-created_at", "-id")
    orm = orm.only("kind", "status", "created_at")[:RECENT_JOBS]
    fields = ("pk", "kind", "status", "created_at", "get_status_display")

    def seen(job):
        return [getattr(job, f)() if f.startswith("get_") else getattr(job, f) for f in fields]

    assert [seen(job) for job, _label in ours] == [seen(job) for job in orm]
    assert [job.get_deferred_fields() for job, _ in ours] == [j.get_deferred_fields() for j in orm]
    labels = [label for _job, label in ours]
    assert "unknown.kind" in labels and len(labels) == RECENT_JOBS
    assert "Recompute the dashboard" in labels
    assert recent_jobs(ProjectFactory()) == []
