from django.core.management.base import CommandError

from evalsite.management.lookups import ProjectCommand
from judging.models import ScoreRun
from judging.services.scoring.claims_to_people import ClaimsToPeopleError, claims_to_people
from reviews.services.imports.pipeline import ImportFailed


class Command(ProjectCommand):
    help = (
        "Send a score run's claim decisions to people: each judged claim becomes an item with "
        "the claim judge's verdict and a question for the raters (claim_supported, "
        "claim_matched), so the judge's agreement with them shows on the dashboard."
    )
    refused = (ClaimsToPeopleError, ImportFailed)

    def add_arguments(self, parser):
        parser.add_argument("--score-run", type=int, required=True, metavar="ID")

    def handle_project(self, project, *, score_run, **_):
        run = ScoreRun.objects.filter(project=project, pk=score_run).first()
        if run is None:
            raise CommandError(f"No score run {score_run} in project {project.slug!r}.")
        for report in claims_to_people(actor=None, project=project, run=run):
            self.stdout.write(report.summary())
