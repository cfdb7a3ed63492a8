"""An item's `exported` event says its file is in the export: a review-file export leaves out
the approved items that came without a review file, so they get no event from it, while a
reference (or CSV) export, which holds every approved item, gives each one. The same for the
page's direct .zip, the background job's .zip and `manage.py export_ground_truth`."""

import io
import zipfile

import pytest
from django.core.management import call_command
from django.urls import reverse

from reviews.models import Event, EventKind, Job, Role
from reviews.services.approval.approve import approval_record
from reviews.views import exports as export_views
from tests.builders import review_file_of
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def approved_pair(project, review_item, rate):
    """(with, without): two approved items of `project`, the first with the review file its
    import left, the second with none (imported as records, say)."""
    with_file = review_item(project, external_id="with-file")
    with_file.metadata = {"review_file": review_file_of(with_file)}
    with_file.save(update_fields=["metadata"])
    without = review_item(project, external_id="without-file")
    raters = [member(project, Role.RATER, username=f"r{n}") for n in (1, 2)]
    approver = member(project, Role.APPROVER, username="appy")
    for item in (with_file, without):
        for rater in raters:
            rate(rater, item, {"$.total": "1,200.00"})
        approval_record(actor=approver, item=item, password=PASSWORD, confirmed=True)
    return with_file, without


def _direct(client, project, format, tmp_path, on_commit) -> list[str]:
    response = client.post(reverse("project_export", args=[project.slug]), {"format": format})
    assert response["Content-Type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(response.content)).namelist()


def _job(client, project, format, tmp_path, on_commit) -> list[str]:
    with on_commit(execute=True):  # the job runs as it is queued (TASKS_BACKEND immediate)
        response = client.post(reverse("project_export", args=[project.slug]), {"format": format})
    job = Job.objects.get()
    assert response.url == reverse("job", args=[project.slug, job.pk])
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    got = client.get(reverse("job_download", args=[project.slug, job.pk]))
    return zipfile.ZipFile(io.BytesIO(b"".join(got.streaming_content))).namelist()


def _command(client, project, format, tmp_path, on_commit) -> list[str]:
    out = io.StringIO()
    call_command(
        "export_ground_truth", "--project", project.slug, "--format", format,
        "--out", str(tmp_path), stdout=out,
    )  # fmt: skip
    return sorted(path.name for path in tmp_path.iterdir())


@pytest.mark.parametrize("route", [_direct, _job, _command], ids=["direct", "job", "command"])
@pytest.mark.parametrize(
    ("format", "files_of"),
    [("review", ["with-file"]), ("reference", ["with-file", "without-file"])],
)
def test_only_the_items_in_the_export_get_an_exported_event(
    client, approved_pair, monkeypatch, tmp_path, django_capture_on_commit_callbacks,
    route, format, files_of,
):  # fmt: skip
    with_file, without = approved_pair
    project = with_file.project
    if route is _job:
        monkeypatch.setattr(export_views, "GROUND_TRUTH_INLINE_MAX", 0)
    client.force_login(member(project, Role.ADMIN, username="boss"))
    names = route(client, project, format, tmp_path, django_capture_on_commit_callbacks)
    assert sorted(names) == [f"{case}.{format}.json" for case in files_of]
    events = Event.objects.filter(item__project=project, kind=EventKind.EXPORTED)
    assert sorted(events.values_list("item__external_id", "data__version")) == [
        (item.external_id, item.approvals.get().reference.version)
        for item in (with_file, without)
        if item.external_id in files_of
    ]
