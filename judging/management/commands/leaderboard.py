from evalsite.management.lookups import ReportCommand
from judging.reports.estimates.leaderboard import SOURCES, leaderboard_report
from judging.reports.estimates.markdown import render_leaderboard_markdown
from judging.reports.estimates.report import ESTIMATE_ERRORS


class Command(ReportCommand):
    help = (
        "A pairwise criterion's systems ranked by Bradley-Terry strength (ties split), with "
        "bootstrap intervals and each judge's position-consistency (docs/estimates.md)."
    )
    refused = ESTIMATE_ERRORS

    def add_arguments(self, parser):
        parser.add_argument("--criterion", required=True, metavar="NAME")
        parser.add_argument("--judge", metavar="NAME", help="needed for --source judge or both")
        parser.add_argument("--source", choices=SOURCES, default="both")

    def handle_project(self, project, *, format, seed, **options):
        report = leaderboard_report(
            project=project,
            criterion=options["criterion"],
            judge=options["judge"],
            source=options["source"],
            seed=seed,
        )
        self.write_report(report, format=format, markdown=render_leaderboard_markdown)
