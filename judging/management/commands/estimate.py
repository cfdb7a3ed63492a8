import json

from evalsite.management.lookups import ProjectCommand, user_or_error
from judging.reports.estimates.markdown import render_estimate_markdown
from judging.reports.estimates.report import DEFAULT_ALPHA, ESTIMATE_ERRORS, estimate_report
from judging.services.calibration.splits import SPLIT_CHOICES


class Command(ProjectCommand):  # no bootstrap, so no --seed: not a ReportCommand
    help = (
        "A criterion's true score from a judge's labels on every item and people's on a random "
        "few: the prediction-powered (PPI++) estimate with its interval, beside the human-only "
        "and judge-only ones (docs/estimates.md)."
    )
    refused = ESTIMATE_ERRORS

    def add_arguments(self, parser):
        parser.add_argument("--criterion", required=True, metavar="NAME")
        parser.add_argument(
            "--judge",
            required=True,
            metavar="NAME",
            help="provider/model (imported verdicts) or NAME@VERSION (a judge run here)",
        )
        parser.add_argument(
            "--split",
            choices=SPLIT_CHOICES,
            default="all",
            help="default: all (a recorded look at held-out)",
        )
        parser.add_argument("--slice", metavar="NAME", help="only the items of this slice")
        parser.add_argument(
            "--assume-random-labels",
            action="store_true",
            help="use human labels of unknown selection (imported) as if placed at random",
        )
        parser.add_argument(
            "--alpha", type=float, default=DEFAULT_ALPHA, help="1 - confidence (default 0.05)"
        )
        parser.add_argument(
            "--half-width",
            type=float,
            metavar="H",
            help="also say how many random labels each interval needs to reach ±H",
        )
        parser.add_argument("--format", choices=("json", "markdown"), default="markdown")
        parser.add_argument("--user", metavar="USERNAME", help="who reads the figures (logged)")

    def handle_project(self, project, *, format, user, assume_random_labels, **options):
        report = estimate_report(
            actor=user_or_error(user),
            project=project,
            criterion=options["criterion"],
            judge=options["judge"],
            split=options["split"],
            slice_name=options["slice"],
            assume_random=assume_random_labels,
            alpha=options["alpha"],
            half_width=options["half_width"],
        )
        if format == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(render_estimate_markdown(report))
