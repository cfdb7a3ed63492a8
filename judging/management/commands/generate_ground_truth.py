from pathlib import Path

from django.core.management.base import CommandError

from evalsite.management.lookups import ProjectCommand
from judging.services.generation.reconcile import GenerationError, ground_truth_generate
from reviews.evidence import EvidenceError
from reviews.services.imports.pipeline import ImportFailed


class Command(ProjectCommand):
    help = (
        "Each PATH (a PDF or image) becomes an item; every --provider (a judge configuration "
        "without a criterion) reads its evidence blind; agreed fields become the generated "
        "reference, the rest field questions for review. Union (accepting a field some readers "
        "omitted) is the project's setting."
    )
    refused = (GenerationError, EvidenceError)

    def add_arguments(self, parser):
        parser.add_argument("--fields", required=True, help="'$.a,$.b,...'")
        parser.add_argument("--instruction", required=True, metavar="TEXT")
        parser.add_argument(
            "--provider", action="append", required=True, metavar="JUDGE_NAME", dest="providers"
        )
        parser.add_argument("--min-agreement", type=float, default=1.0)
        parser.add_argument("--second-read", action="store_true")
        parser.add_argument(
            "--budget-usd",
            metavar="X",
            help="the most each reader's run may cost; a read that would pass it is not made",
        )
        parser.add_argument(
            "--producer",
            default="",
            metavar="PROVIDER/MODEL",
            help="who made the predictions, overriding the producer known from an item that "
            "already holds the evidence: readers of its family cannot settle a field alone",
        )
        parser.add_argument("paths", nargs="+", metavar="PATH")

    def handle_project(self, project, **o):
        fields = [f.strip() for f in o["fields"].split(",") if f.strip()]
        missing = [p for p in o["paths"] if not Path(p).is_file()]
        if missing:
            raise CommandError(f"{missing[0]}: no such file")
        try:
            result = ground_truth_generate(
                project=project,
                paths=[Path(p) for p in o["paths"]],
                fields=fields,
                instruction=o["instruction"],
                readers=o["providers"],
                min_agreement=o["min_agreement"],
                second_read=o["second_read"],
                producer=o["producer"],
                budget_usd=o["budget_usd"],
            )
        except ImportFailed as exc:
            raise CommandError(f"the generated review file did not import: {exc}") from None
        held = [case for case in result.cases if case.failed]
        for case in result.cases:
            if case.failed:
                readers = ", ".join(case.failed)
                self.stdout.write(f"{case.case}: not imported, the read of {readers} failed")
                continue
            agreed = ", ".join(f"{p} ({how})" for p, how in case.agreed.items()) or "none"
            disputed = ", ".join(f"{p} ({why})" for p, why in case.disputed.items()) or "none"
            self.stdout.write(f"{case.case}: generated {agreed}; questions {disputed}")
        if result.report is not None:
            self.stdout.write(result.report.summary())
        stopped = [run for run in result.runs if run.status == "budget_reached"]
        for run in stopped:
            run.refresh_from_db()
            self.stdout.write(f"run {run.pk} ({run.version}): {run.error}")
        if held:
            raise CommandError(
                f"{len(held)} case(s) not imported because a read failed (the runs' calls say "
                "why): run the command again; every finished read is reused"
            )
