"""A row export past EXPORT_INLINE_MAX rows is a background job (kind `rows_export`): the worker
writes the file to the configured storage (`default_storage`: the media folder, or the S3
bucket of evidence) under a name of 128 random bits that no page shows, and the job's page
offers it through `job_download`, which checks the same access as the export itself (project
admins). Smaller exports stream from the request as before; so does the API (its client reads
the stream a chunk at a time, whatever the size).

A file is kept KEPT_FOR (7 days) after its job ends: the project's next export removes older
ones (their job pages then say what was exported, with no file to offer).

The job runs `in_steps` (no transaction around it): it writes no row but the held-out look
judging records, and on SQLite a transaction would hold the one write lock while it reads.
A worker killed mid-way leaves a partial file under the job's name, which the resumed job
replaces from the first row.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Callable
from datetime import timedelta

from django.core.files import File
from django.core.files.storage import default_storage
from django.utils import timezone

from reviews.models import Job, Project
from reviews.selectors_rows import RowExportError, rows_count, rows_export
from reviews.services.jobs.records import job_start

KIND = "rows_export"
# Past this many rows the page's export is a job: the item list's bulk actions use the same
# line (reviews/views/item_list.py: INLINE_MAX). Below it the export streams in the request in
# well under a second (1,000 items as CSV: bench/jobs.py prints it), so the page answers with
# the file itself.
EXPORT_INLINE_MAX = 1000
FOLDER = "exports"
KEPT_FOR = timedelta(days=7)  # a finished export's file, then the next export removes it


def rows_export_start(*, actor, project: Project, form, back: str) -> Job:
    """Queue the export the valid `form` (kind, format) asks for; the file's name is chosen
    now, so an attempt resumed after a crash writes the same file."""
    name = f"{FOLDER}/{project.pk}/{secrets.token_hex(16)}.{form.cleaned_data['format']}"
    return job_start(
        kind=KIND, actor=actor, project=project, form=form, extra={"file": name}, back=back
    )


def rows_export_write(
    *, actor, project: Project, kind: str, format: str, file: str,
    progress: Callable[[int, int | None], None],
) -> str:  # fmt: skip
    """The job's work: every `kind` row into `file` in storage; what it wrote, in a sentence.
    The project's exports older than KEPT_FOR go first (their pages then offer no file)."""
    exports_prune(project)
    total = rows_count(project=project, kind=kind)
    export = rows_export(
        actor=actor, project=project, kind=kind, format=format,
        progress=lambda done: progress(done, total),
    )  # fmt: skip
    written = 0
    with tempfile.TemporaryFile() as spool:  # streamed to disk, then stored in one piece
        for chunk in export.chunks:
            spool.write(chunk)
            written += len(chunk)
        spool.seek(0)
        if default_storage.exists(file):  # a killed attempt's partial file
            default_storage.delete(file)
        stored = default_storage.save(file, File(spool))
    if stored != file:  # never offered under another name than the job's
        default_storage.delete(stored)
        raise RowExportError(f"the storage kept the file as {stored!r}, not {file!r}")
    rows = total if total is not None else "all"
    return f"Exported {rows} {kind} rows as {format.upper()} ({written:,} bytes)."


def exports_prune(project: Project) -> int:
    """Remove the files of the project's exports that finished more than KEPT_FOR ago; how
    many there were."""
    old = Job.objects.filter(project=project, kind=KIND, status=Job.Status.SUCCEEDED,
                             finished_at__lt=timezone.now() - KEPT_FOR)  # fmt: skip
    removed = 0
    for params in old.values_list("params", flat=True):
        name = params.get("extra", {}).get("file", "")
        if name and default_storage.exists(name):
            default_storage.delete(name)
            removed += 1
    return removed


def export_file(job: Job) -> str:
    """The stored file of a finished export job, or "" (another kind, not succeeded, or its
    file removed after KEPT_FOR)."""
    if job.kind != KIND or job.status != Job.Status.SUCCEEDED:
        return ""
    name = job.params.get("extra", {}).get("file", "")
    return name if name and default_storage.exists(name) else ""
