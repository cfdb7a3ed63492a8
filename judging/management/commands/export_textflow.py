from pathlib import Path

from evalsite.management.lookups import ProjectCommand
from judging.reports.exports.textflow import NoTextflowItems, textflow_export


class Command(ProjectCommand):
    help = (
        "Write TextFlow evaluated results with human labels: a project's TextFlow items as "
        "imported, or a judge run's verdicts (decisionN = each sample's label, final_decision "
        "their majority); --judge NAME@V chooses the judge when several have verdicts."
    )
    refused = (NoTextflowItems,)

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, type=Path, metavar="FILE")
        parser.add_argument("--judge", metavar="NAME@V", help="the judge version to export")

    def handle_project(self, project, *, out: Path, judge: str | None, **_):
        data = textflow_export(project=project, judge=judge)
        out.write_bytes(data)
        self.stdout.write(f"wrote {out} ({len(data):,} bytes)")
