"""The ground-truth .zip of more than GROUND_TRUTH_INLINE_MAX approved items is a background job
(reviews/services/jobs/exports.py), as a large row export is: the POST answers with the job's
page without reading an approval, the task worker writes the .zip to storage, and the job's page
offers it to the export's own people (admins and approvers; a rater gets 403, an outsider 404).
The downloaded file verifies with `verify_approval` as the direct download does, and each item
gets its `exported` event once, also when a killed job runs again. Smaller exports still answer
with the .zip itself."""

import zipfile

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse

from reviews.models import Event, EventKind, Job, Role
from reviews.services.jobs import exports
from reviews.views import exports as export_views
from tests.builders import verify
from tests.factories import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def past_the_line(monkeypatch):
    """One approved item is past a line of none (100 on a site)."""
    monkeypatch.setattr(export_views, "GROUND_TRUTH_INLINE_MAX", 0)


def _export(client, project, format="reference"):
    return client.post(reverse("project_export", args=[project.slug]), {"format": format})


def _exported_events(item) -> list[dict]:
    return list(
        Event.objects.filter(item=item, kind=EventKind.EXPORTED).values_list("data", flat=True)
    )


def test_a_small_export_still_answers_with_the_zip(client, approved_item):
    project = approved_item.project
    client.force_login(member(project, Role.APPROVER))
    response = _export(client, project)
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert not Job.objects.exists()
    assert [e["format"] for e in _exported_events(approved_item)] == ["reference"]


def test_a_large_export_is_a_job_the_request_only_queues(
    client, approved_item, past_the_line, database_tasks, django_capture_on_commit_callbacks
):
    project = approved_item.project
    client.force_login(member(project, Role.APPROVER, username="approver"))
    with django_capture_on_commit_callbacks(execute=True):
        response = _export(client, project, format="csv")
    job = Job.objects.get(kind=exports.GROUND_TRUTH_KIND)
    assert response.status_code == 302
    assert response.url == reverse("job", args=[project.slug, job.pk])
    assert job.status == Job.Status.QUEUED  # the request read no approval and wrote no file
    assert not default_storage.exists(job.params["extra"]["file"])
    assert not _exported_events(approved_item)
    page = client.get(response.url).content.decode()  # an approver watches their own export
    assert "Ground-truth export" in page and "Waiting for the task worker" in page
    database_tasks()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert (job.done, job.total) == (1, 1)
    page = client.get(response.url).content.decode()
    assert "Exported the ground truth of 1 approved items as csv" in page
    assert reverse("job_download", args=[project.slug, job.pk]) in page


@pytest.mark.parametrize("format", ["reference", "csv"])
def test_the_jobs_zip_downloads_for_exporters_only_and_verifies(
    client, approved_item, past_the_line, tmp_path, outsider, django_capture_on_commit_callbacks,
    format,
):  # fmt: skip
    project = approved_item.project
    client.force_login(member(project, Role.APPROVER, username="approver"))
    with django_capture_on_commit_callbacks(execute=True):  # TASKS_BACKEND immediate: run now
        response = _export(client, project, format=format)
    job = Job.objects.get(kind=exports.GROUND_TRUTH_KIND)
    assert response.url == reverse("job", args=[project.slug, job.pk])
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    download = reverse("job_download", args=[project.slug, job.pk])
    got = client.get(download)
    assert got.status_code == 200
    name = f"{project.slug}-ground-truth-{format}.zip"
    assert f'filename="{name}"' in got["Content-Disposition"]
    path = tmp_path / name
    path.write_bytes(b"".join(got.streaming_content))
    assert zipfile.ZipFile(path).namelist()
    passed, output = verify(path)
    assert passed, output
    assert f"[{name}/" in output and "all 1 approval(s) verify" in output
    assert len(_exported_events(approved_item)) == 1

    client.force_login(member(project, Role.ADMIN, username="boss"))
    assert client.get(download).status_code == 200
    client.force_login(member(project, Role.RATER, username="rater"))
    assert client.get(download).status_code == 403
    assert client.get(reverse("job", args=[project.slug, job.pk])).status_code == 403
    client.force_login(outsider)
    assert client.get(download).status_code == 404
    client.logout()
    assert client.get(download).status_code == 302  # to the login page


def test_a_resumed_job_writes_each_items_event_once(client, approved_item, past_the_line):
    """A worker killed after the events' transaction (before the job's outcome) leaves the
    file and the lines; the job run again replaces the file and writes no second line."""
    project = approved_item.project
    client.force_login(member(project, Role.APPROVER, username="approver"))
    _export(client, project)  # not run: no on-commit callbacks in this test
    job = Job.objects.get(kind=exports.GROUND_TRUTH_KIND)
    extra = job.params["extra"]

    def attempt():
        return exports.ground_truth_export_write(
            actor=job.created_by, project=project, format="reference",
            progress=lambda done, total: None, **extra,
        )  # fmt: skip

    attempt()  # the killed attempt: everything but the job's outcome
    with default_storage.open(extra["file"], "rb") as stored:
        first = stored.read()
    assert "Exported the ground truth of 1 approved items" in attempt()
    with default_storage.open(extra["file"], "rb") as stored:
        assert stored.read() == first
    (line,) = _exported_events(approved_item)
    assert line == {
        "format": "reference",
        "version": approved_item.approvals.get().reference.version,
        "export": extra["export"],
    }


def test_review_files_of_items_without_one_fail_the_job_saying_why(
    client, approved_item, past_the_line, django_capture_on_commit_callbacks
):
    project = approved_item.project  # approved, but built without a review file
    client.force_login(member(project, Role.ADMIN, username="boss"))
    with django_capture_on_commit_callbacks(execute=True):
        response = _export(client, project, format="review")
    job = Job.objects.get(kind=exports.GROUND_TRUTH_KIND)
    assert job.status == Job.Status.FAILED
    assert "none of the 1 approved items came from a review file" in job.error
    assert not default_storage.exists(job.params["extra"]["file"])
    assert not _exported_events(approved_item)
    assert "Ground-truth export failed" in client.get(response.url).content.decode()
