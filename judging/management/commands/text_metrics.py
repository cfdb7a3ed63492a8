from evalsite.management.lookups import ReportCommand, user_or_error
from judging.metrics.text import METRICS
from judging.reports.text_metrics import TextMetricsError, render_markdown, text_metrics_report
from judging.services.calibration.splits import SPLIT_CHOICES, SplitError


class Command(ReportCommand):
    help = (
        "Text metrics of each item's output against its reference (exact match, token F1, "
        "BLEU, ROUGE): the mean with a bootstrap CI over items, and corpus BLEU."
    )
    refused = (SplitError, TextMetricsError)

    def add_arguments(self, parser):
        parser.add_argument(
            "--metric",
            action="extend",
            nargs="+",
            required=True,
            choices=METRICS,
            dest="metrics",
            help="one or more (repeat --metric or list them after one)",
        )
        parser.add_argument("--split", choices=SPLIT_CHOICES, default="all")
        parser.add_argument("--slice", metavar="NAME", help="only the items of this slice")
        parser.add_argument("--user", metavar="USERNAME", help="who reads the figures (logged)")

    def handle_project(self, project, *, metrics, split, slice, format, seed, user, **_):
        report = text_metrics_report(
            actor=user_or_error(user),
            project=project,
            metrics=metrics,
            split=split,
            slice_name=slice,
            seed=seed,
        )
        self.write_report(report, format=format, markdown=render_markdown)
