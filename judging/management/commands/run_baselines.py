from evalsite.management.lookups import ProjectCommand
from judging.services.calibration.splits import SPLIT_CHOICES, SplitError
from judging.services.runs.baseline import baseline_run
from judging.services.runs.baselines import KINDS, ROUGE_TYPES, Baseline, BaselineError


class Command(ProjectCommand):
    help = (
        "Label a criterion with a deterministic baseline judge (exact, normalised, numeric, "
        "BLEU, ROUGE) comparing each item's output with its reference; writes verdicts."
    )
    refused = (BaselineError, SplitError)

    def add_arguments(self, parser):
        parser.add_argument("--criterion", required=True, metavar="NAME")
        parser.add_argument("--baseline", required=True, choices=KINDS)
        parser.add_argument(
            "--threshold", type=float, default=0.5, help="bleu/rouge: passing score (0-1)"
        )
        parser.add_argument(
            "--rel-tol", type=float, default=0.0, help="numeric: relative tolerance"
        )
        parser.add_argument("--rouge", choices=ROUGE_TYPES, default="rougeL")
        parser.add_argument("--split", choices=SPLIT_CHOICES, default="all")

    def handle_project(self, project, **options):
        baseline = Baseline(
            options["baseline"],
            threshold=options["threshold"],
            rel_tol=options["rel_tol"],
            rouge_type=options["rouge"],
        )
        result = baseline_run(
            project=project,
            criterion=options["criterion"],
            baseline=baseline,
            split=options["split"],
        )
        self.stdout.write(
            f"{result.judge}: {result.written} verdicts written ({result.passed} passed), "
            f"{result.already} already labelled, {result.skipped} items without output or "
            "reference"
        )
