"""Uploading a file: a background job (run inline in tests) with progress and a final report."""

import html
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reviews.models import ImportJob, Item, Role
from tests.factories import member

pytestmark = pytest.mark.django_db


def _jsonl(*records):
    return "\n".join(json.dumps(r) for r in records).encode()


def _upload(client, project, content, name="items.jsonl", **extra):
    return client.post(
        reverse("import_upload", args=[project.slug]),
        {"file": SimpleUploadedFile(name, content), **extra},
    )


def test_admin_upload_runs_the_import_and_reports(
    client, project, django_capture_on_commit_callbacks
):
    client.force_login(member(project, Role.ADMIN))
    content = _jsonl(*({"type": "item", "item_id": f"i{n}", "input": "q"} for n in range(3)))
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, project, content)
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response.url == reverse(
        "import_job", args=[project.slug, job.pk]
    )
    assert job.status == ImportJob.Status.SUCCEEDED and job.records_total == 3
    assert Item.objects.filter(project=project).count() == 3
    page = client.get(response.url).content.decode()
    assert "imported 3 items, 0 questions, 0 errors" in page
    assert "New items" in page and "items_created" not in page  # words, not keys
    first = Item.objects.get(project=project, external_id="i0")
    assert f'href="{reverse("item_detail", args=[project.slug, first.pk])}">i0</a>' in page


def test_one_item_reads_as_one_item(client, project, django_capture_on_commit_callbacks):
    client.force_login(member(project, Role.ADMIN))
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, project, _jsonl({"type": "item", "item_id": "only"}))
    assert "imported 1 item, 0 questions, 0 errors" in client.get(response.url).content.decode()


def test_failed_import_says_why_and_writes_nothing(
    client, project, django_capture_on_commit_callbacks
):
    client.force_login(member(project, Role.ADMIN))
    content = _jsonl(
        {"type": "item", "item_id": "ok"}, {"type": "item", "item_id": "bad", "slices": "x"}
    )
    with django_capture_on_commit_callbacks(execute=True):
        _upload(client, project, content)
    job = ImportJob.objects.get()
    assert job.status == ImportJob.Status.FAILED
    assert "items.jsonl, line 2, $.slices" in job.error
    assert not Item.objects.filter(project=project).exists()


def test_progress_partial_for_htmx_polling(client, project):
    client.force_login(member(project, Role.ADMIN))
    job = ImportJob.objects.create(
        project=project,
        original_name="big.jsonl",
        records_total=10,
        status=ImportJob.Status.RUNNING,
        file="imports/big.jsonl",
    )
    partial = client.get(reverse("import_job", args=[project.slug, job.pk]), HTTP_HX_REQUEST="true")
    body = partial.content.decode()
    assert 'id="import-progress"' in body and 'hx-trigger="every 1s"' in body
    assert "<html" not in body


def test_rater_gets_403_and_outsider_404(client, project, rater, outsider):
    url = reverse("import_upload", args=[project.slug])
    client.force_login(rater)
    assert client.get(url).status_code == 403
    client.force_login(outsider)
    assert client.get(url).status_code == 404


def test_an_upload_reaches_only_its_own_files(
    client, project, django_capture_on_commit_callbacks, settings
):
    """A file another upload (of another project) left on disk cannot be cited."""
    from pathlib import Path

    from reviews.models import Document

    stray = Path(settings.MEDIA_ROOT, "imports", "other-project", "abc", "statement-0912.pdf")
    stray.parent.mkdir(parents=True)
    stray.write_bytes(
        (Path(__file__).parent.parent / "data/examples/statement-0912.pdf").read_bytes()
    )
    review = (
        Path(__file__).parent.parent / "data/examples/statement-0912.review.json"
    ).read_bytes()
    client.force_login(member(project, Role.ADMIN))
    for cited in ("statement-0912.pdf", "../../other-project/abc/statement-0912.pdf"):
        body = review.replace(b'"statement-0912.pdf"', json.dumps(cited).encode())
        with django_capture_on_commit_callbacks(execute=True):
            _upload(client, project, body, name="case.review.json")
        job = ImportJob.objects.latest("pk")
        assert job.status == ImportJob.Status.FAILED, job.error
        assert "not found" in job.error or "escapes" in job.error, job.error
        assert not job.file  # removed, folder and all
    assert not Document.objects.exists()
    ours = Path(settings.MEDIA_ROOT, "imports", project.slug)
    assert list(ours.rglob("*")) == []  # neither the files nor their folders stay


def test_a_job_whose_worker_died_is_failed_and_retried(
    client, project, django_capture_on_commit_callbacks, settings
):
    """The worker was killed mid-import: no heartbeat, the job "running" forever. After
    IMPORT_STALE_SECONDS the page says so and offers Retry, which imports the same file."""
    import time

    from django.core.cache import cache
    from django.core.files.base import ContentFile

    from reviews.services.imports.job_progress import heartbeat_key

    client.force_login(member(project, Role.ADMIN))
    job = ImportJob(project=project, original_name="items.jsonl", status=ImportJob.Status.RUNNING)
    job.file.save("items.jsonl", ContentFile(_jsonl({"type": "item", "item_id": "a"})), save=True)
    url = reverse("import_job", args=[project.slug, job.pk])
    cache.set(heartbeat_key(job.pk), time.time())  # alive
    assert "Retry" not in client.get(url).content.decode()
    cache.set(heartbeat_key(job.pk), time.time() - settings.IMPORT_STALE_SECONDS - 1)  # dead
    page = client.get(url).content.decode()
    assert "The task worker stopped while importing" in page and "Retry" in page
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("import_job_retry", args=[project.slug, job.pk]))
    job.refresh_from_db()
    assert job.status == ImportJob.Status.FAILED and "no heartbeat" in job.error
    retry = ImportJob.objects.exclude(pk=job.pk).get()
    assert response.url == reverse("import_job", args=[project.slug, retry.pk])
    assert retry.status == ImportJob.Status.SUCCEEDED and retry.report["retry_of"] == job.pk
    assert Item.objects.filter(project=project, external_id="a").exists()
    # A job that is still running, or succeeded, is not retried.
    again = client.post(reverse("import_job_retry", args=[project.slug, retry.pk]))
    assert again.status_code == 302 and ImportJob.objects.count() == 2


@pytest.mark.parametrize(
    ("post", "says"),
    [
        ({}, "Choose a file to import."),
        ({"content": b"{}", "format": "junk"}, "Unknown format 'junk'."),
        ({"content": b"x" * 2_000}, "big.jsonl: its size"),
    ],
)
def test_an_upload_refused_by_the_form_starts_no_job(client, project, post, says):
    from reviews.formats import limits

    client.force_login(member(project, Role.ADMIN))
    url = reverse("import_upload", args=[project.slug])
    data = {k: v for k, v in post.items() if k != "content"}
    if "content" in post:
        data["file"] = SimpleUploadedFile("big.jsonl", post["content"])
    with limits.overridden(file_bytes=1_000):
        response = client.post(url, data, follow=True)
    assert response.status_code == 200
    assert says in html.unescape(response.content.decode())
    assert not ImportJob.objects.exists()
