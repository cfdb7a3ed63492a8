"""Long operations are background jobs (reviews.models.Job): the post answers with the job's
page at once, a task worker runs the job (here django-tasks-db's own worker running the queued
task rows, in this process and the test's transaction, on the suite's database: SQLite or
PostgreSQL), and the page shows what it did. A job whose
input no longer holds, or whose worker died, fails or resumes saying why; two workers never
run one job twice."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from judging.models import Criterion, LabelRequest
from reviews.models import (
    Job,
    Membership,
    Question,
    QuestionKind,
    QuestionReason,
    QuestionStatus,
    Role,
)
from reviews.services import item_bulk
from reviews.services.jobs import records
from reviews.services.jobs.records import job_claim, job_execute, jobs_resume_stalled
from reviews.services.jobs.registry import KINDS
from reviews.views import item_list
from tests.factories import ItemFactory, member
from tests.judging.helpers import small_project

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin(client, project):
    client.force_login(member(project, Role.ADMIN, username="boss"))
    return client


def _send_faithful(admin, project, tmp_path, capture):
    """The dashboard's *Send to humans* of `faithful`'s held-out items, as the admin posts it."""
    small_project(project, tmp_path)
    with capture(execute=True):
        return admin.post(
            reverse("dashboard_send", args=[project.slug]),
            {"criterion": "faithful", "selection": "held_out"},
        )


def test_send_to_humans_answers_with_a_job_page_and_the_worker_sends(
    admin, project, tmp_path, database_tasks, django_capture_on_commit_callbacks
):
    response = _send_faithful(admin, project, tmp_path, django_capture_on_commit_callbacks)
    job = Job.objects.get()
    assert response.url == reverse("job", args=[project.slug, job.pk])
    assert job.status == Job.Status.QUEUED and not Question.objects.filter(key="faithful")
    assert "Waiting for the task worker" in admin.get(response.url).content.decode()
    database_tasks()
    job.refresh_from_db()
    asked = Question.objects.filter(key="faithful").count()
    assert job.status == Job.Status.SUCCEEDED and asked > 0
    assert (job.done, job.total) == (asked, asked)
    page = admin.get(response.url).content.decode()
    assert f"{asked} new faithful questions in the review queue" in page
    assert reverse("project_dashboard", args=[project.slug]) in page  # back where it started
    dashboard = admin.get(reverse("project_dashboard", args=[project.slug])).content.decode()
    assert f'<a href="{response.url}">Send to humans</a>' in dashboard  # found again there


def test_a_bulk_action_over_many_items_is_a_job(
    admin, project, database_tasks, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(item_list, "INLINE_MAX", 2)  # 1000 on the site: 3 items are "many"
    items = [ItemFactory(project=project) for _ in range(3)]
    for item in items:
        Question.objects.create(
            item=item, key="tone", kind=QuestionKind.CRITERION, status=QuestionStatus.RESOLVED
        )
    bulk = reverse("item_bulk", args=[project.slug]) + "?status=open"
    with django_capture_on_commit_callbacks(execute=True):
        response = admin.post(bulk, {"action": "reopen", "all": "on"})
    job = Job.objects.get(kind="items.reopen")
    assert response.url == reverse("job", args=[project.slug, job.pk])
    assert job.params["extra"] == {"items": "status=open"}  # the worker finds them again
    assert not Question.objects.filter(status=QuestionStatus.OPEN).exists()
    database_tasks()
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert job.result.startswith("Re-opened 3 items (3 questions asked again)")
    assert set(Question.objects.values_list("status", "reason")) == {
        (QuestionStatus.OPEN, QuestionReason.REOPENED)
    }
    back = admin.get(response.url).content.decode()
    assert "Re-opened 3 items" in back and f"{bulk.split('bulk/')[0]}?status=open" in back


def test_a_job_whose_input_no_longer_holds_fails_saying_why(admin, project, tmp_path):
    small_project(project, tmp_path)
    job = Job.objects.create(
        project=project, kind="send_to_humans",
        params={"data": {"criterion": ["faithful"], "selection": ["held_out"]}},
    )  # fmt: skip
    Criterion.objects.filter(project=project).update(name="renamed")
    job_execute(job_claim(job.pk))
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == "Nothing was changed: criterion: this project has no criterion 'faithful'."
    page = admin.get(reverse("job", args=[project.slug, job.pk])).content.decode()
    assert "Send to humans failed." in page and "no criterion" in page


def test_a_refusal_of_the_service_fails_the_job_and_changes_nothing(project, tmp_path):
    small_project(project, tmp_path)
    job = Job.objects.create(
        project=project, kind="send_to_humans",
        params={"data": {"criterion": ["faithful"], "selection": ["calibration_sample"]}},
    )  # fmt: skip
    job_execute(job_claim(job.pk))
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == "Nothing was changed: a calibration sample needs a size n >= 1 and a seed"
    assert not Question.objects.filter(key="faithful").exists()


def test_two_workers_never_claim_one_job(project):
    job = Job.objects.create(project=project, kind="split_draw")
    assert job_claim(job.pk) is not None
    assert job_claim(job.pk) is None
    assert Job.objects.get().attempts == 1


def test_a_job_whose_worker_died_is_queued_again_then_failed(project, settings):
    settings.IMPORT_STALE_SECONDS = 1
    job = Job.objects.create(project=project, kind="split_draw")
    job_claim(job.pk)
    Job.objects.filter(pk=job.pk).update(started_at=timezone.now() - timedelta(seconds=5))
    cache.clear()  # no heartbeat: its worker is gone
    assert jobs_resume_stalled() == [job.pk]
    assert Job.objects.get().status == Job.Status.QUEUED
    for _ in range(records.MAX_RESUMES):
        job_claim(job.pk)
        Job.objects.filter(pk=job.pk).update(started_at=timezone.now() - timedelta(seconds=5))
        jobs_resume_stalled()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == records.GAVE_UP.format(times=records.MAX_RESUMES + 1)


def test_only_the_projects_admins_see_a_job(client, project):
    job = Job.objects.create(project=project, kind="split_draw")
    client.force_login(member(project, Role.RATER, username="rita"))
    assert client.get(reverse("job", args=[project.slug, job.pk])).status_code == 403


def test_a_job_runs_only_if_its_starter_still_holds_the_role(
    admin, project, tmp_path, database_tasks, django_capture_on_commit_callbacks
):
    response = _send_faithful(admin, project, tmp_path, django_capture_on_commit_callbacks)
    Membership.objects.filter(project=project, user__username="boss").delete()  # while queued
    database_tasks()
    job = Job.objects.get()
    assert response.url == reverse("job", args=[project.slug, job.pk])
    assert job.status == Job.Status.FAILED
    assert job.error == f"Nothing was changed: boss is no longer project admin of {project.name}"
    assert not Question.objects.filter(key="faithful").exists()


def test_a_job_of_a_closed_account_does_not_run(project, tmp_path):
    small_project(project, tmp_path)
    boss = member(project, Role.ADMIN, username="boss")
    job = Job.objects.create(
        project=project, kind="send_to_humans", created_by=boss,
        params={"data": {"criterion": ["faithful"], "selection": ["held_out"]}, "by": boss.pk},
    )  # fmt: skip
    boss.is_active = False
    boss.save()
    job_execute(job_claim(job.pk))
    job.refresh_from_db()
    assert job.error == "Nothing was changed: the account that started this job is closed"
    boss.delete()  # created_by is set to null: still not run as the operator's console
    Job.objects.filter(pk=job.pk).update(status=Job.Status.QUEUED)
    job_execute(job_claim(job.pk))
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "closed" in job.error
    assert not Question.objects.filter(key="faithful").exists()


def test_a_queued_job_shows_an_empty_progress_bar_not_a_full_one(admin, project):
    job = Job.objects.create(project=project, kind="split_draw")
    page = admin.get(reverse("job", args=[project.slug, job.pk])).content.decode()
    assert "Waiting for the task worker" in page
    assert 'style="width: 0%"' in page and 'style="width: 100%"' not in page


def test_send_to_humans_commits_chunk_by_chunk_and_a_second_run_finishes_it(
    project, tmp_path, monkeypatch
):
    """The job runs in steps (one transaction a chunk: on SQLite the raters' saves get the
    write lock between them): a crash keeps the chunks done, the job says so, and the job
    started again asks only the rest, each item once."""
    from judging.services.calibration import send_to_humans
    from reviews.services.imports import staging

    small_project(project, tmp_path)
    monkeypatch.setattr(send_to_humans, "CHUNK", 2)
    monkeypatch.setattr(staging, "SLICE_SECONDS", 0)  # on SQLite, a transaction a chunk
    real_add, calls = send_to_humans.questions_add, []

    def crash_on_the_second_chunk(**kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the worker's disk failed")
        return real_add(**kwargs)

    monkeypatch.setattr(send_to_humans, "questions_add", crash_on_the_second_chunk)
    params = {"data": {"criterion": ["faithful"], "selection": ["held_out"]}}
    first = Job.objects.create(project=project, kind="send_to_humans", params=params)
    job_execute(job_claim(first.pk))
    first.refresh_from_db()
    assert first.status == Job.Status.FAILED
    assert "the steps it finished are kept, and starting it again finishes the rest" in first.error
    assert Question.objects.filter(key="faithful").count() == 2  # the first chunk, committed

    monkeypatch.setattr(send_to_humans, "questions_add", real_add)
    again = Job.objects.create(project=project, kind="send_to_humans", params=params)
    job_execute(job_claim(again.pk))
    again.refresh_from_db()
    held_out = LabelRequest.objects.filter(selection="held_out").count()
    assert again.status == Job.Status.SUCCEEDED and held_out > 2
    assert Question.objects.filter(key="faithful").count() == held_out  # each item once
    assert again.result.startswith(f"{held_out - 2} new faithful questions")


def test_a_reopen_job_commits_step_by_step_and_a_second_run_finishes_it(project, monkeypatch):
    """The item list's *Re-open* as a job runs in steps (on SQLite short transactions, raters'
    saves between): a crash keeps the steps done, and a second run skips them."""
    from reviews.services.imports import staging

    monkeypatch.setattr(item_bulk, "STEP", 1)
    monkeypatch.setattr(staging, "SLICE_SECONDS", 0)  # on SQLite, a transaction a step
    boss = member(project, Role.ADMIN, username="boss")
    for _ in range(3):
        Question.objects.create(item=ItemFactory(project=project), key="tone",
                                kind=QuestionKind.CRITERION, status=QuestionStatus.RESOLVED)  # fmt: skip
    real_reopen, calls = item_bulk.items_reopen, []

    def crash_on_the_second_step(item_ids):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("the worker's disk failed")
        return real_reopen(item_ids)

    monkeypatch.setattr(item_bulk, "items_reopen", crash_on_the_second_step)
    params = {"data": {}, "extra": {"items": "status=open"}, "by": boss.pk}
    first = Job.objects.create(project=project, kind="items.reopen", created_by=boss, params=params)
    job_execute(job_claim(first.pk))
    first.refresh_from_db()
    assert first.status == Job.Status.FAILED
    assert "the steps it finished are kept" in first.error
    assert Question.objects.filter(status=QuestionStatus.OPEN).count() == 1  # step one, kept

    monkeypatch.setattr(item_bulk, "items_reopen", real_reopen)
    again = Job.objects.create(project=project, kind="items.reopen", created_by=boss, params=params)
    job_execute(job_claim(again.pk))
    again.refresh_from_db()
    assert again.status == Job.Status.SUCCEEDED and (again.done, again.total) == (3, 3)
    assert again.result == (
        "Re-opened 2 items (2 questions asked again); 1 item had nothing settled to ask again."
    )
    assert not Question.objects.exclude(status=QuestionStatus.OPEN).exists()
    # The list's *Send to humans* steps as the dashboard's does; a batch is made all at once.
    assert KINDS["items.send_to_humans"].in_steps and KINDS["items.send_to_humans"].progress
    assert not KINDS["items.assign"].in_steps and not KINDS["items.add_to_batch"].in_steps
