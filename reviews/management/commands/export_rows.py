import sys
from pathlib import Path

from django.core.management.base import CommandError

from evalsite.management.lookups import ProjectCommand, user_or_error
from reviews.formats.rows import ROW_FORMATS
from reviews.selectors_rows import RowExportError, row_kinds, rows_export


class Command(ProjectCommand):
    help = (
        "Write every row of one kind (items, answers, resolutions, approvals, audit, calls, "
        "verdicts, labels) as CSV, JSONL or Parquet, streamed: memory stays flat at any size."
    )
    refused = (RowExportError,)

    def add_arguments(self, parser):
        parser.add_argument("--kind", required=True, choices=list(row_kinds()))
        parser.add_argument("--format", choices=ROW_FORMATS, default="csv")
        parser.add_argument("--out", required=True, metavar="PATH", help="the file ('-': stdout)")
        parser.add_argument("--user", metavar="USERNAME", help="who reads the rows (logged)")

    def handle_project(self, project, *, kind, format, out, user, **_):
        export = rows_export(actor=user_or_error(user), project=project, kind=kind, format=format)
        if out == "-":
            for chunk in export.chunks:
                sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            return
        path, partial = Path(out), Path(out + ".partial")
        try:
            with partial.open("wb") as handle:
                for chunk in export.chunks:
                    handle.write(chunk)
        except OSError as error:
            partial.unlink(missing_ok=True)
            raise CommandError(f"{out}: {error.strerror}") from None
        partial.replace(path)  # a half-written file never takes the name
        self.stderr.write(f"wrote {kind} of {project.slug} as {format} to {path}")
