from datetime import timedelta

from django.core.management.base import BaseCommand

from reviews.services.files.gc import evidence_gc
from reviews.tasks import evidence_gc_periodic


class Command(BaseCommand):
    help = "Remove evidence files that no document references (safe beside running imports)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--older-than-minutes",
            type=int,
            default=60,
            help="leave younger files alone (default 60)",
        )
        parser.add_argument(
            "--schedule",
            action="store_true",
            help="also queue the periodic task (runs in db_worker every EVIDENCE_GC_MINUTES)",
        )

    def handle(self, *args, older_than_minutes, schedule, **options):
        removed = evidence_gc(older_than=timedelta(minutes=older_than_minutes))
        for name in removed:
            self.stdout.write(f"removed {name}")
        self.stdout.write(f"removed {len(removed)} unreferenced evidence files")
        if schedule:
            evidence_gc_periodic.enqueue()
            self.stdout.write("queued the periodic evidence_gc task")
