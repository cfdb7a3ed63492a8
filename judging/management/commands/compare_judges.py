from evalsite.management.lookups import ReportCommand, user_or_error
from judging.reports.compare.markdown import render_compare_markdown
from judging.reports.compare.report import CompareError, judges_compare
from judging.services.calibration.splits import SPLIT_CHOICES


class Command(ReportCommand):
    help = (
        "Compare two judges, or two versions of one, item by item on a criterion: the items "
        "whose label flipped, each one's agreement with people, and the difference B - A with a "
        "paired bootstrap interval; then what changed (settings, prompt diff)."
    )
    refused = (CompareError,)

    def add_arguments(self, parser):
        parser.add_argument("--criterion", required=True, metavar="NAME")
        parser.add_argument(
            "--a",
            required=True,
            metavar="NAME@V",
            help="NAME@VERSION, or provider/model (imported)",
        )
        parser.add_argument(
            "--b",
            required=True,
            metavar="NAME@V",
            help="NAME@VERSION, or provider/model (imported)",
        )
        parser.add_argument(
            "--split",
            choices=SPLIT_CHOICES,
            default="all",
            help="default: all (every item both judged; a recorded look at held-out)",
        )
        parser.add_argument("--user", metavar="USERNAME", help="who reads the figures (logged)")

    def handle_project(self, project, *, criterion, a, b, split, format, seed, user, **_):
        report = judges_compare(
            actor=user_or_error(user),
            project=project,
            criterion=criterion,
            a=a,
            b=b,
            split=split,
            seed=seed,
        )
        self.write_report(report, format=format, markdown=render_compare_markdown)
