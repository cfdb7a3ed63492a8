from evalsite.management.lookups import ProjectCommand, form_or_error
from judging.forms import SendToHumansForm
from judging.services.calibration.send_to_humans import SendError, items_send_to_humans
from judging.services.calibration.splits import SplitError


class Command(ProjectCommand):
    help = "Ask raters for a criterion's labels on chosen items (never shows them the verdicts)."
    refused = (SendError, SplitError)

    def add_arguments(self, parser):
        parser.add_argument("--criterion", required=True, metavar="NAME")
        chosen = parser.add_mutually_exclusive_group(required=True)
        for flag, selection, help in (
            ("--split-votes", "split_votes", "items whose samples disagree"),
            ("--held-out", "held_out", "every held-out item"),
            (
                "--inconsistent-pairs",
                "inconsistent_pairs",
                "pairwise items whose verdict changed with the display order",
            ),
        ):
            chosen.add_argument(
                flag, dest="selection", action="store_const", const=selection, help=help
            )
        chosen.add_argument(
            "--calibration-sample", type=int, dest="n", metavar="N", help="N calibration items"
        )
        parser.add_argument("--seed", type=int, help="for --calibration-sample")

    def handle_project(self, project, *, criterion, selection, n, seed, **_):
        data = {
            "criterion": criterion,
            "selection": selection or "calibration_sample",
            "n": n,
            "seed": seed,
        }
        chosen = form_or_error(SendToHumansForm(data, project=project))
        result = items_send_to_humans(actor=None, project=project, **chosen)
        self.stdout.write(
            f"{result.selection}: {result.items} items, {result.questions_created} questions "
            f"created, {result.questions_existing} already asked, {result.items_reopened} re-opened"
        )
