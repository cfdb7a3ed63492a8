from pathlib import Path

from judging.services.export_textflow import NoTextflowItems, textflow_export
from reviews.management.lookups import ProjectCommand


class Command(ProjectCommand):
    help = "Write a project's TextFlow items back as TextFlow evaluated results, with human labels."
    refused = (NoTextflowItems,)

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, type=Path, metavar="FILE")

    def handle_project(self, project, *, out: Path, **_):
        data = textflow_export(project=project)
        out.write_bytes(data)
        self.stdout.write(f"wrote {out} ({len(data):,} bytes)")
