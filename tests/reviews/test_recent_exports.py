"""The project page's *Recent exports* (reviews/selectors_admin.py: recent_exports): someone who
left an export's job page finds it again there, with its file while it is kept. It lists the
project's export jobs of the last KEPT_FOR that this user may open by the job page's own rule
(the kind's roles: admins see both kinds, approvers the ground-truth export, raters none),
newest first, RECENT_EXPORTS at most, in one query."""

from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.urls import reverse
from django.utils import timezone

from reviews.models import Job, Role
from reviews.selectors_admin import RECENT_EXPORTS, recent_exports
from reviews.services.jobs import exports
from reviews.views import exports as export_views
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

GROUND_TRUTH = exports.GROUND_TRUTH_KIND


def _job(project, by, kind=GROUND_TRUTH, *, data=None, file="", **fields) -> Job:
    data = data or (
        {"format": ["csv"]} if kind == GROUND_TRUTH else {"kind": ["answers"], "format": ["csv"]}
    )
    return Job.objects.create(
        project=project, created_by=by, kind=kind, params={"data": data, "extra": {"file": file}},
        **fields,
    )  # fmt: skip


def _page(client, project) -> str:
    return client.get(reverse("project_home", args=[project.slug])).content.decode()


def test_each_role_sees_the_exports_its_job_page_would_open(client, project):
    admin = member(project, Role.ADMIN, username="boss")
    approver = member(project, Role.APPROVER, username="appy")
    rows = _job(project, admin, exports.KIND)
    truth = _job(project, approver, data={"format": ["review"]})
    _job(ProjectFactory(), admin)  # another project's

    def listed(roles):
        return [(e.job, e.label, e.what) for e in recent_exports(project, roles)]

    assert listed([Role.ADMIN]) == [
        (truth, "Ground-truth export", "review files, .zip"),
        (rows, "Row export", "answers, csv"),
    ]
    assert listed([Role.APPROVER]) == [(truth, "Ground-truth export", "review files, .zip")]
    assert listed([Role.RATER, Role.ADJUDICATOR]) == []

    client.force_login(member(project, Role.RATER, username="rita"))
    assert "Recent exports" not in _page(client, project)
    assert client.get(reverse("job", args=[project.slug, truth.pk])).status_code == 403
    client.force_login(approver)
    page = _page(client, project)
    assert "Recent exports" in page
    assert reverse("job", args=[project.slug, truth.pk]) in page
    assert reverse("job", args=[project.slug, rows.pk]) not in page  # admins' only


def test_newest_first_at_most_five_of_the_kept_days_in_one_query(
    project, django_assert_num_queries
):
    admin = member(project, Role.ADMIN, username="boss")
    old = _job(project, admin)
    Job.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - exports.KEPT_FOR - timedelta(minutes=1)
    )
    jobs = [_job(project, member(project, Role.ADMIN)) for _ in range(RECENT_EXPORTS + 2)]
    with django_assert_num_queries(1):  # the jobs with who started each
        listed = recent_exports(project, [Role.ADMIN])
        names = [e.job.created_by.get_username() for e in listed]
    assert [e.job for e in listed] == jobs[::-1][:RECENT_EXPORTS]
    assert names == [j.created_by.get_username() for j in jobs[::-1][:RECENT_EXPORTS]]
    with django_assert_num_queries(0):
        assert recent_exports(project, [Role.RATER]) == []


def test_the_list_links_a_finished_exports_file_while_it_is_stored(client, project):
    admin = member(project, Role.ADMIN, username="boss")
    name = f"exports/{project.pk}/recent.zip"
    stored = _job(project, admin, file=name, status=Job.Status.SUCCEEDED)
    running = _job(
        project, admin, file=f"exports/{project.pk}/later.zip", status=Job.Status.RUNNING
    )
    default_storage.save(name, ContentFile(b"PK"))
    client.force_login(admin)
    page = _page(client, project)
    assert reverse("job_download", args=[project.slug, stored.pk]) in page
    assert reverse("job", args=[project.slug, running.pk]) in page
    assert reverse("job_download", args=[project.slug, running.pk]) not in page
    assert "Running" in page and "boss" in page
    default_storage.delete(name)  # removed after KEPT_FOR: the job is listed, with no file
    page = _page(client, project)
    assert reverse("job", args=[project.slug, stored.pk]) in page
    assert reverse("job_download", args=[project.slug, stored.pk]) not in page


def test_an_approver_who_left_the_job_page_finds_the_export_again(
    client, approved_item, monkeypatch, django_capture_on_commit_callbacks
):
    project = approved_item.project
    monkeypatch.setattr(export_views, "GROUND_TRUTH_INLINE_MAX", 0)  # one item is a job
    client.force_login(member(project, Role.APPROVER, username="appy"))
    with django_capture_on_commit_callbacks(execute=True):  # the worker runs it (immediate)
        response = client.post(reverse("project_export", args=[project.slug]), {"format": "csv"})
    job = Job.objects.get(kind=GROUND_TRUTH)
    page = _page(client, project)
    assert f'<a href="{response.url}">Ground-truth export: CSV, .zip</a>' in page
    download = reverse("job_download", args=[project.slug, job.pk])
    assert download in page and client.get(download).status_code == 200
