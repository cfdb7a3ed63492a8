"""Starting an upload's import as a background job."""

from __future__ import annotations

from django.db import transaction

from reviews.models import ImportJob
from reviews.services.imports import import_formats
from reviews.tasks import run_import_job


def _count_lines(upload) -> int | None:
    """Records in a JSONL/CSV upload (CSV minus its header), for the progress bar."""
    name = upload.name.lower()
    if not name.endswith((".jsonl", ".ndjson", ".csv")):
        return None
    lines, last = 0, b"\n"
    for chunk in upload.chunks():
        lines += chunk.count(b"\n")
        last = chunk[-1:] or last
    lines += last != b"\n"  # a last line without its newline
    upload.seek(0)
    return max(0, lines - 1) if name.endswith(".csv") else lines


@transaction.atomic
def import_job_start(*, actor, project, upload, format: str = "", options=None) -> ImportJob:
    if format and format not in import_formats():
        raise ValueError(f"Unknown format {format!r}.")
    job = ImportJob.objects.create(
        project=project,
        created_by=actor,
        file=upload,
        original_name=upload.name[:255],
        format=format,
        records_total=_count_lines(upload),
        report={"options": options or {}},
    )
    transaction.on_commit(lambda: run_import_job.enqueue(job.pk))
    return job
