from evalsite.management.lookups import ProjectCommand
from judging.services.calibration.splits import SplitError, split_draw


class Command(ProjectCommand):
    help = (
        "Draw the calibration / held-out split (seeded, stratified by slice); frozen once labelled."
    )
    refused = (SplitError,)

    def add_arguments(self, parser):
        parser.add_argument("--seed", type=int, required=True)
        parser.add_argument("--held-out-fraction", type=float, default=0.5)

    def handle_project(self, project, *, seed, held_out_fraction, **_):
        draw = split_draw(
            actor=None, project=project, seed=seed, held_out_fraction=held_out_fraction
        )
        held_out = draw.assignments.filter(split="held_out").count()
        total = draw.assignments.count()
        self.stdout.write(
            f"drew the split of {project.slug}: {held_out} held-out, {total - held_out} "
            f"calibration items (seed {seed})"
        )
