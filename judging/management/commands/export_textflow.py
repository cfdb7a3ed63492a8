from pathlib import Path

from django.core.management.base import BaseCommand

from judging.services.export_textflow import NoTextflowItems, textflow_export
from reviews.management.lookups import project_or_error, refusals


class Command(BaseCommand):
    help = "Write a project's TextFlow items back as TextFlow evaluated results, with human labels."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument("--out", required=True, type=Path, metavar="FILE")

    def handle(self, *args, project, out: Path, **options):
        target = project_or_error(project)
        with refusals(NoTextflowItems):
            data = textflow_export(project=target)
        out.write_bytes(data)
        self.stdout.write(f"wrote {out} ({len(data):,} bytes)")
