"""The dashboard's recompute is a background job (judging/services/dashboard_recompute.py): the
admin's post answers with the job's page without computing, the dashboard links the job while
it waits or runs and keeps showing the last snapshot, and a task worker computes the new one
(django-tasks-db's worker on the suite's database, as tests/test_jobs.py does)."""

import pytest
from django.urls import reverse

from judging.models import DashboardSnapshot
from judging.services.dashboard_recompute import KIND
from reviews.models import Job, Role
from reviews.services.imports.pipeline import file_import
from tests.factories import member
from tests.judging.helpers import human_record, small_project, write_jsonl

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("_fresh_cache")]


def test_the_post_answers_with_the_job_and_the_worker_computes(
    client, project, tmp_path, database_tasks, django_capture_on_commit_callbacks
):
    small_project(project, tmp_path)
    client.force_login(member(project, Role.ADMIN, username="boss"))
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("dashboard_recompute", args=[project.slug]))
    job = Job.objects.get(kind=KIND)
    assert response.url == reverse("job", args=[project.slug, job.pk])
    assert job.status == Job.Status.QUEUED and DashboardSnapshot.objects.count() == 1
    dashboard = client.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    assert "A recompute is waiting for the task worker" in dashboard
    assert response.url in dashboard  # the freshness line links the job
    assert "Waiting for the task worker" in client.get(response.url).content.decode()
    database_tasks()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and DashboardSnapshot.objects.count() == 2
    assert job.done == job.total == 2  # one criterion version, then the snapshot's write
    assert "Figures recomputed: 1 criterion version" in client.get(response.url).content.decode()
    dashboard = client.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    assert "recompute-job" not in dashboard


def test_new_labels_queue_one_job_however_many_imports_come_before_a_worker(
    project, tmp_path, database_tasks, django_capture_on_commit_callbacks
):
    small_project(project, tmp_path)
    for n, rater in enumerate(["cy", "di"]):
        path = write_jsonl(tmp_path / f"more{n}.jsonl", [human_record("s01", rater, "fail")])
        with django_capture_on_commit_callbacks(execute=True):
            file_import(actor=None, project=project, path=path, format="jsonl")
    job = Job.objects.get(kind=KIND)  # the second import found the first's still waiting
    assert job.created_by is None and DashboardSnapshot.objects.count() == 1
    database_tasks()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and DashboardSnapshot.objects.count() == 2


def test_only_admins_recompute_and_see_the_job(client, project, tmp_path):
    small_project(project, tmp_path)
    client.force_login(member(project, Role.APPROVER, username="rev"))
    assert client.post(reverse("dashboard_recompute", args=[project.slug])).status_code == 403
    assert not Job.objects.exists()
