import json

from evalsite.management.lookups import ProjectCommand
from judging.reports.run_list import runs_report, runs_text


class Command(ProjectCommand):
    help = (
        "List a project's judge and reader runs: status, calls, tokens, replies without usage "
        "and cost (each call's cost fixed at the price in force when it was made)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=("text", "json"), default="text")

    def handle_project(self, project, *, format, **_):
        report = runs_report(project=project)
        self.stdout.write(json.dumps(report, indent=2) if format == "json" else runs_text(report))
