"""Import jobs whose worker died: queued again by the next worker, a few times at most, and the
evidence files their attempts stored removed when the job ends (the process-level test is
test_import_worker_resume.py; this one runs on both databases)."""

from datetime import timedelta

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from reviews.models import ImportJob
from reviews.services.imports.job_progress import StoredJournal, heartbeat_key
from reviews.services.imports.jobs import MAX_RESUMES, import_job_start, import_jobs_resume_stalled

pytestmark = pytest.mark.django_db


def test_a_stalled_job_is_queued_again_then_given_up_and_its_stored_files_removed(
    project, settings
):
    from django.core.cache import cache

    settings.IMPORT_STALE_SECONDS = 1
    upload = SimpleUploadedFile("items.jsonl", b'{"type": "item", "item_id": "a"}\n')
    job = import_job_start(actor=None, project=project, upload=upload)
    alive = import_job_start(actor=None, project=project, upload=upload)
    orphan = default_storage.save("documents/ab/orphan.png", ContentFile(b"x"))
    StoredJournal(job.pk).add(orphan)
    long_ago = timezone.now() - timedelta(minutes=5)
    ImportJob.objects.filter(pk__in=[job.pk, alive.pk]).update(created_at=long_ago)
    cache.set(heartbeat_key(alive.pk), timezone.now().timestamp())  # its worker still beats
    for attempt in range(1, MAX_RESUMES + 1):
        ImportJob.objects.filter(pk__in=[job.pk, alive.pk]).update(status="running")
        assert import_jobs_resume_stalled() == [job.pk]
        job.refresh_from_db()
        assert (job.status, job.report["resumes"]) == ("queued", attempt)
        assert default_storage.exists(orphan)  # the job has not ended
    ImportJob.objects.filter(pk=job.pk).update(status="running")
    assert import_jobs_resume_stalled() == []
    job.refresh_from_db()
    assert job.status == "failed" and f"stopped {MAX_RESUMES + 1} times" in job.error
    assert not default_storage.exists(orphan)
    assert ImportJob.objects.get(pk=alive.pk).status == "running"
