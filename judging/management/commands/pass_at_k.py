from evalsite.management.lookups import ReportCommand, user_or_error
from judging.reports.pass_at_k import PassAtKError, pass_at_k_report, render_markdown
from judging.services.calibration.splits import SPLIT_CHOICES, SplitError


class Command(ReportCommand):
    help = (
        "pass@k of a criterion: items sharing a metadata value are samples of one case; "
        "Chen et al.'s unbiased estimator per case, averaged with a bootstrap CI over cases."
    )
    refused = (SplitError, PassAtKError)

    def add_arguments(self, parser):
        parser.add_argument("--criterion", required=True, metavar="NAME")
        parser.add_argument(
            "--k", type=int, action="append", required=True, dest="ks", help="repeatable"
        )
        parser.add_argument(
            "--group-by",
            required=True,
            metavar="METADATA_KEY",
            help="items with the same metadata value are samples of one case",
        )
        parser.add_argument(
            "--judge",
            metavar="NAME@V",
            help="a sample's pass from this judge's label (NAME@VERSION or provider/model), "
            "not the final human label",
        )
        parser.add_argument("--split", choices=SPLIT_CHOICES, default="all")
        parser.add_argument("--user", metavar="USERNAME", help="who reads the figures (logged)")

    def handle_project(self, project, *, criterion, ks, group_by, judge, split, **options):
        report = pass_at_k_report(
            actor=user_or_error(options["user"]),
            project=project,
            criterion=criterion,
            ks=ks,
            group_by=group_by,
            judge=judge,
            split=split,
            seed=options["seed"],
        )
        self.write_report(report, format=options["format"], markdown=render_markdown)
