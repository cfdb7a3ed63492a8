from django.core.management.base import BaseCommand

from judging.services.splits import SplitError, split_draw
from reviews.management.lookups import project_or_error, refusals


class Command(BaseCommand):
    help = (
        "Draw the calibration / held-out split (seeded, stratified by slice); frozen once labelled."
    )

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, metavar="SLUG")
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("--held-out-fraction", type=float, default=0.5)

    def handle(self, *args, project, seed, held_out_fraction, **options):
        target = project_or_error(project)
        with refusals(SplitError):
            draw = split_draw(
                actor=None, project=target, seed=seed, held_out_fraction=held_out_fraction
            )
        held_out = draw.assignments.filter(split="held_out").count()
        total = draw.assignments.count()
        self.stdout.write(
            f"drew the split of {target.slug}: {held_out} held-out, {total - held_out} "
            f"calibration items (seed {seed})"
        )
