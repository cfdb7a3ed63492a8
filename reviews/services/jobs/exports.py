"""Exports as background jobs: a row export past EXPORT_INLINE_MAX rows (kind `rows_export`)
and the ground-truth .zip past GROUND_TRUTH_INLINE_MAX approved items (kind
`ground_truth_export`). The worker writes the file to the configured storage
(`default_storage`: the media folder, or the S3 bucket of evidence) under a name of 128 random
bits that no page shows, and the job's page offers it through `job_download`, which checks the
same access as the export itself (the kind's `roles`: project admins for rows, admins and
approvers for ground truth). Smaller exports answer from the request as before; so does the
API (its client reads the stream a chunk at a time, whatever the size).

A file is kept KEPT_FOR (7 days) after its job ends: the project's next export of either kind
removes older ones (their job pages then say what was exported, with no file to offer).

The jobs run `in_steps` (no transaction around them): on SQLite a transaction would hold the
one write lock while they read. A worker killed mid-way leaves a partial file under the job's
name, which the resumed job replaces from the first row. The ground-truth export writes its
`exported` events (one per item, naming the export) in one short transaction once its file is
stored; a resumed job writes only those its killed attempt had not (none, if that attempt got
that far), so each item of the file has its line once, however often the job was started.
"""

from __future__ import annotations

import io
import secrets
import tempfile
from collections.abc import Callable
from datetime import timedelta

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

from reviews.models import Event, EventKind, Job, Project
from reviews.reports.exports import exported_record, zip_export
from reviews.selectors_rows import RowExportError, rows_count, rows_export
from reviews.services.jobs.records import job_start

KIND = "rows_export"
GROUND_TRUTH_KIND = "ground_truth_export"
# Past this many rows the page's export is a job: the item list's bulk actions use the same
# line (reviews/views/item_list.py: INLINE_MAX). Below it the export streams in the request in
# well under a second (1,000 items as CSV: bench/jobs.py prints it), so the page answers with
# the file itself.
EXPORT_INLINE_MAX = 1000
# Past this many approved items the ground-truth .zip is a job. An item costs the export far
# more than a row: its approval's signed fields and rows rendered and, for review files (the
# slowest format), two queries of its own for the decisions' notes: about 4 ms an item
# (references and CSV about 1 ms). 100 review files answer from the request in about 0.6 s at
# load 7 (bench/jobs.py prints it), the longest a click should wait for its file.
GROUND_TRUTH_INLINE_MAX = 100
FOLDER = "exports"
FILE_KINDS = (KIND, GROUND_TRUTH_KIND)  # the kinds whose job leaves a file to download
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
        _store(spool, file)
    rows = total if total is not None else "all"
    return f"Exported {rows} {kind} rows as {format.upper()} ({written:,} bytes)."


def ground_truth_export_start(*, actor, project: Project, form, back: str) -> Job:
    """Queue the ground-truth .zip the valid `form` (format) asks for; its file's name and the
    export's id (on each `exported` event) are chosen now, so a resumed attempt reuses them."""
    name = f"{FOLDER}/{project.pk}/{secrets.token_hex(16)}.zip"
    extra = {"file": name, "export": secrets.token_hex(8)}
    return job_start(
        kind=GROUND_TRUTH_KIND, actor=actor, project=project, form=form, extra=extra, back=back
    )


def ground_truth_zip(*, actor, project: Project, format: str) -> bytes:
    """The .zip of a small export (at most GROUND_TRUTH_INLINE_MAX items), built in memory for
    the request that answers with it; each item's `exported` event written."""
    buffer = io.BytesIO()
    exported = zip_export(buffer, project=project, format=format)
    exported_record(actor=actor, format=format, exported=exported)
    return buffer.getvalue()


def ground_truth_export_write(
    *, actor, project: Project, format: str, file: str, export: str,
    progress: Callable[[int, int | None], None],
) -> str:  # fmt: skip
    """The job's work: the .zip of every approved item into `file` in storage (spooled to a
    temporary file on disk), then each item's `exported` event; what it wrote, in a sentence."""
    exports_prune(project)
    with tempfile.TemporaryFile() as spool:
        exported = zip_export(spool, project=project, format=format, progress=progress)
        written = spool.tell()
        spool.seek(0)
        _store(spool, file)
    with transaction.atomic():  # short: the lines only, read and written
        recorded = set(
            Event.objects.filter(
                item__project=project, kind=EventKind.EXPORTED, data__export=export
            ).values_list("item_id", "data__version")
        )
        missing = [line for line in exported if line not in recorded]
        exported_record(actor=actor, format=format, exported=missing, export=export)
    return (
        f"Exported the ground truth of {len(exported):,} approved items as {format} "
        f"({written:,} bytes, .zip)."
    )


def _store(spool, file: str) -> None:
    """The spooled file into storage under `file` exactly (a killed attempt's partial file
    replaced)."""
    spool.seek(0)
    if default_storage.exists(file):
        default_storage.delete(file)
    stored = default_storage.save(file, File(spool))
    if stored != file:  # never offered under another name than the job's
        default_storage.delete(stored)
        raise RowExportError(f"the storage kept the file as {stored!r}, not {file!r}")


def exports_prune(project: Project) -> int:
    """Remove the files of the project's exports that finished more than KEPT_FOR ago; how
    many there were."""
    old = Job.objects.filter(project=project, kind__in=FILE_KINDS, status=Job.Status.SUCCEEDED,
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
    if job.kind not in FILE_KINDS or job.status != Job.Status.SUCCEEDED:
        return ""
    name = job.params.get("extra", {}).get("file", "")
    return name if name and default_storage.exists(name) else ""


def export_filename(job: Job, slug: str) -> str:
    """What the download of an export job's file is called, as the direct download would be."""
    data = job.params.get("data", {})
    format = data["format"][0]
    if job.kind == GROUND_TRUTH_KIND:
        return f"{slug}-ground-truth-{format}.zip"
    return f"{slug}-{data['kind'][0]}.{format}"
