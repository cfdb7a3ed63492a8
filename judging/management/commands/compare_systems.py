import json

from evalsite.management.lookups import ProjectCommand, user_or_error
from judging.reports.estimates.markdown import render_systems_markdown
from judging.reports.estimates.report import DEFAULT_ALPHA, ESTIMATE_ERRORS
from judging.reports.estimates.systems import systems_compare


class Command(ProjectCommand):  # no bootstrap, so no --seed: not a ReportCommand
    help = (
        "Two systems on the same inputs: each one's true score (PPI++ beside human-only and "
        "judge-only) and the paired difference A - B with its interval, and the pairs that "
        "drive it (docs/estimates.md)."
    )
    refused = ESTIMATE_ERRORS

    def add_arguments(self, parser):
        parser.add_argument("--criterion", required=True, metavar="NAME")
        parser.add_argument("--judge", required=True, metavar="NAME")
        parser.add_argument(
            "--a", required=True, metavar="SYSTEM", help="a slice or metadata.system"
        )
        parser.add_argument("--b", required=True, metavar="SYSTEM")
        parser.add_argument(
            "--pair-by", required=True, metavar="METADATA_KEY", help="the input both outputs share"
        )
        parser.add_argument("--assume-random-labels", action="store_true")
        parser.add_argument("--alpha", type=float, default=DEFAULT_ALPHA)
        parser.add_argument("--format", choices=("json", "markdown"), default="markdown")
        parser.add_argument("--user", metavar="USERNAME", help="who reads the figures (logged)")

    def handle_project(self, project, *, format, user, **options):
        report = systems_compare(
            actor=user_or_error(user),
            project=project,
            criterion=options["criterion"],
            judge=options["judge"],
            a=options["a"],
            b=options["b"],
            pair_by=options["pair_by"],
            assume_random=options["assume_random_labels"],
            alpha=options["alpha"],
        )
        if format == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(render_systems_markdown(report))
