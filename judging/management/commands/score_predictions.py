from pathlib import Path

from django.core.management.base import CommandError

from evalsite.management.lookups import ReportCommand
from judging.reports.scoring.claims import COMPARISONS
from judging.reports.scoring.markdown import render_markdown
from judging.services.scoring.claim_judge import ClaimJudgeError
from judging.services.scoring.score import predictions_score
from reviews.formats.errors import FormatError


class Command(ReportCommand):
    help = (
        "Score a predictions JSONL file against the project's approved ground truth "
        "(docs/scoring.md); the report is kept as a score run."
    )
    refused = (FormatError, ClaimJudgeError)

    def add_arguments(self, parser):
        parser.add_argument("path", type=Path, metavar="PATH")
        parser.add_argument(
            "--allow-generated",
            action="store_true",
            help="score cases without ground truth against the generated reference, reported "
            "apart as agreement with a provisional AI reference",
        )
        parser.add_argument(
            "--comparison",
            choices=COMPARISONS,
            default="auto",
            help="auto (default): exact for values and JSON, claims for free text, tables and "
            "notes; semantic: everything by claims; exact: skip what is not exact-compatible",
        )
        parser.add_argument(
            "--claim-judge",
            metavar="NAME",
            help="the judge configuration (no criterion; NAME or NAME@V) that decides claims",
        )

    def handle_project(self, project, *, path, format, allow_generated, seed, **options):
        try:
            with path.open("rb") as stream:
                run = predictions_score(
                    actor=None,
                    project=project,
                    stream=stream,
                    source_name=path.name,
                    allow_generated=allow_generated,
                    seed=seed,
                    comparison=options["comparison"],
                    claim_judge=options["claim_judge"],
                )
        except OSError as error:
            raise CommandError(f"{path}: {error.strerror}") from None
        self.write_report(run.report, format=format, markdown=render_markdown)
        self.stderr.write(f"stored as score run {run.pk}")
