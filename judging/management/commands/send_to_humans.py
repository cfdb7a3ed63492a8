from django.core.management.base import CommandError

from judging.services import panels
from judging.services.criteria import latest_criterion
from judging.services.send_to_humans import CHOSEN, SendError, items_send_to_humans
from judging.services.splits import SplitError
from reviews.management.lookups import ProjectCommand


class Command(ProjectCommand):
    help = "Ask raters for a criterion's labels on chosen items (never shows them the verdicts)."
    refused = (SendError, SplitError)

    def add_arguments(self, parser):
        parser.add_argument("--criterion", required=True, metavar="NAME")
        chosen = parser.add_mutually_exclusive_group(required=True)
        chosen.add_argument(
            "--split-votes", action="store_true", help="items whose samples disagree"
        )
        chosen.add_argument(
            "--calibration-sample", type=int, metavar="N", help="N calibration items"
        )
        chosen.add_argument("--held-out", action="store_true", help="every held-out item")
        chosen.add_argument(
            "--inconsistent-pairs",
            action="store_true",
            help="pairwise items whose verdict changed with the display order",
        )
        parser.add_argument("--seed", type=int, help="for --calibration-sample")

    def handle_project(
        self,
        project,
        *,
        criterion,
        split_votes,
        calibration_sample,
        held_out,
        inconsistent_pairs,
        seed,
        **_,
    ):
        found = latest_criterion(project=project, name=criterion)
        if found is None:
            raise CommandError(f"No criterion {criterion!r} in {project.slug!r}.")
        selection = (
            "split_votes" if split_votes else "held_out" if held_out else "calibration_sample"
        )
        item_ids = None
        if inconsistent_pairs:
            selection, item_ids = CHOSEN, panels.inconsistent_pairs(criterion=found)
        result = items_send_to_humans(
            actor=None,
            project=project,
            criterion=found,
            selection=selection,
            n=calibration_sample,
            seed=seed,
            item_ids=item_ids,
        )
        self.stdout.write(
            f"{result.selection}: {result.items} items, {result.questions_created} questions "
            f"created, {result.questions_existing} already asked, {result.items_reopened} re-opened"
        )
