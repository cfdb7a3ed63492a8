from pathlib import Path

from evalsite.management.lookups import ProjectCommand
from reviews.reports.exports import EXPORT_FORMATS, NothingToExport, files_export


class Command(ProjectCommand):
    help = "Write the approved ground truth of a project (current versions only) to a folder."
    refused = (NothingToExport,)

    def add_arguments(self, parser):
        parser.add_argument("--format", required=True, choices=EXPORT_FORMATS)
        parser.add_argument("--out", required=True, type=Path, metavar="DIR")

    def handle_project(self, project, *, format, out: Path, **_):
        files = files_export(actor=None, project=project, format=format)
        out.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            (out / name).write_bytes(content)
        self.stdout.write(f"exported {len(files)} file(s) of approved ground truth to {out}")
