"""A row export past EXPORT_INLINE_MAX rows is a background job (reviews/services/jobs/exports.py):
the page's request answers with the job's page without reading the rows, a task worker writes
the file to storage (django-tasks-db's worker on the suite's database, as tests/test_jobs.py
does), and the job's page offers it through an access-checked view only: the project's admins
download it, nobody else does, and the file has no address of its own. Smaller exports and the
API still stream from the request."""

import json
from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone

from reviews.models import Job, Role
from reviews.services.jobs import exports
from reviews.views import exports as export_views
from tests.factories import ItemFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client, project):
    client.force_login(member(project, Role.ADMIN, username="boss"))
    return client


@pytest.fixture
def many_items(project, monkeypatch):
    """Six items, past a threshold of five for these tests (1,000 on a site)."""
    monkeypatch.setattr(export_views, "EXPORT_INLINE_MAX", 5)
    return [ItemFactory(project=project, external_id=f"i{n}") for n in range(6)]


def _export(client, project, **query):
    query = {"kind": "items", "format": "jsonl", **query}
    return client.get(reverse("row_export", args=[project.slug]), query)


def test_a_large_export_is_a_job_whose_page_offers_the_file(
    admin, project, many_items, database_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = _export(admin, project)
    job = Job.objects.get(kind=exports.KIND)
    assert response.status_code == 302
    assert response.url == reverse("job", args=[project.slug, job.pk])
    assert job.status == Job.Status.QUEUED  # the request read no row and wrote no file
    assert not default_storage.exists(job.params["extra"]["file"])
    page = admin.get(response.url).content.decode()
    assert "Row export" in page and "Waiting for the task worker" in page
    download = reverse("job_download", args=[project.slug, job.pk])
    assert download not in page and admin.get(download).status_code == 404  # not done yet
    database_tasks()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and (job.done, job.total) == (6, 6)
    page = admin.get(response.url).content.decode()
    assert "Exported 6 items rows as JSONL" in page and download in page
    got = admin.get(download)
    assert got.status_code == 200
    assert f'filename="{project.slug}-items.jsonl"' in got["Content-Disposition"]
    rows = [json.loads(line) for line in b"".join(got.streaming_content).splitlines()]
    assert [r["item_id"] for r in rows] == [f"i{n}" for n in range(6)]


def test_only_the_projects_admins_download_an_export(
    client, project, many_items, database_tasks, django_capture_on_commit_callbacks, outsider
):
    boss = member(project, Role.ADMIN, username="boss")
    client.force_login(boss)
    with django_capture_on_commit_callbacks(execute=True):
        _export(client, project, format="csv")
    database_tasks()
    job = Job.objects.get(kind=exports.KIND)
    download = reverse("job_download", args=[project.slug, job.pk])
    assert client.get(download).status_code == 200
    client.force_login(outsider)  # a member of another project: this one does not exist for them
    assert client.get(download).status_code == 404
    client.force_login(member(project, Role.APPROVER, username="approver"))
    assert client.get(download).status_code == 403
    client.logout()
    assert client.get(download).status_code == 302  # to the login page
    assert not default_storage.url(job.params["extra"]["file"]).endswith(download)


def test_a_small_export_still_streams_from_the_request(admin, project):
    ItemFactory(project=project, external_id="only")
    response = _export(admin, project)
    assert response.status_code == 200 and response.streaming
    assert b'"item_id":"only"' in b"".join(response.streaming_content)
    assert not Job.objects.exists()


def test_a_resumed_export_replaces_a_killed_attempts_partial_file(
    admin, project, many_items, database_tasks, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        _export(admin, project)
    job = Job.objects.get(kind=exports.KIND)
    name = job.params["extra"]["file"]
    default_storage.save(name, ContentFile(b"half a file"))
    database_tasks()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED
    with default_storage.open(name) as stored:
        assert stored.read().count(b"\n") == 6


def test_an_export_older_than_a_week_is_removed_by_the_next(
    admin, project, many_items, database_tasks, django_capture_on_commit_callbacks
):
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            _export(admin, project)
        database_tasks()
        Job.objects.filter(kind=exports.KIND).update(
            finished_at=timezone.now() - exports.KEPT_FOR - timedelta(hours=1)
        )  # both, after the first run: only the first had finished
    old, new = Job.objects.filter(kind=exports.KIND).order_by("pk")
    assert not default_storage.exists(old.params["extra"]["file"])
    assert default_storage.exists(new.params["extra"]["file"])
    page = admin.get(reverse("job", args=[project.slug, old.pk])).content.decode()
    assert "Exported 6 items rows" in page
    assert reverse("job_download", args=[project.slug, old.pk]) not in page
    assert admin.get(reverse("job_download", args=[project.slug, old.pk])).status_code == 404
