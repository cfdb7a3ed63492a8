from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from judging.services.export_textflow import export_textflow
from reviews.models import Project


class Command(BaseCommand):
    help = "Write a project's TextFlow items back as TextFlow evaluated results, with human labels."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument("--out", required=True, type=Path, metavar="FILE")

    def handle(self, *args, project, out: Path, **options):
        try:
            target = Project.objects.get(slug=project)
        except Project.DoesNotExist:
            raise CommandError(f"No project {project!r}.") from None
        data = export_textflow(project=target)
        out.write_bytes(data)
        self.stdout.write(f"wrote {out} ({len(data):,} bytes)")
