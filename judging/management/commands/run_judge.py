import sys

from django.core.management.base import CommandError

from evalsite.management.lookups import ProjectCommand, named_or_error, refusals
from judging.models import JudgeConfig, Run, RunStatus
from judging.services.runs.control import RunError, run_create, run_progress, run_resume
from judging.services.runs.runner import run_execute


class Command(ProjectCommand):
    help = (
        "Run a judge version over a split in the foreground, with a progress line. Calls "
        "finished by any earlier run are reused, so rerunning after a crash makes only the "
        "missing ones. --split held_out is a recorded look at the held-out items."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        # --version is the judge version here, not Django's own --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--judge", required=True, metavar="NAME")
        parser.add_argument("--version", type=int, metavar="V", help="default: the latest")
        parser.add_argument(
            "--split", choices=["calibration", "held_out", "all"], default="calibration"
        )
        parser.add_argument("--limit", type=int, metavar="N")
        parser.add_argument(
            "--concurrency", type=int, metavar="K", help="default: the version's setting"
        )
        parser.add_argument(
            "--budget-usd",
            metavar="X",
            help="stop before the call that would make the run cost more than X dollars "
            "(each call at its stored cost); the run ends budget_reached",
        )
        parser.add_argument(
            "--resume",
            type=int,
            metavar="RUN",
            help="go on with this stopped run (with --budget-usd: its new budget)",
        )

    def handle_project(self, project, *, judge, resume, budget_usd, **options):
        config = named_or_error(JudgeConfig, project, judge, "judge")
        with refusals(RunError):
            if resume is not None:
                run = run_resume(_run_of(config, resume), budget_usd=budget_usd)
            else:
                run = run_create(
                    config=config,
                    version=options["version"],
                    split=options["split"],
                    limit=options["limit"],
                    concurrency=options["concurrency"],
                    budget_usd=budget_usd,
                    confirm_held_out=True,  # asking for it on the command line is the confirmation
                )
        run = run_execute(run, on_progress=self._line)
        self._line(run, end="\n")
        if run.status == RunStatus.BUDGET_REACHED:
            self.stdout.write(
                f"run {run.pk}: {run.error} (manage.py run_judge --project {config.project.slug} "
                f"--judge {config.name} --resume {run.pk} --budget-usd X)"
            )
        elif run.error:
            raise CommandError(f"run {run.pk}: {run.error}")

    def _line(self, run, end="\r"):
        run.refresh_from_db()
        p = run_progress(run)
        cost = "" if p.cost.usd is None else f", {'at least ' * p.cost.at_least}${p.cost.usd:.4f}"
        self.stdout.write(
            f"run {run.pk} {run.version} on {run.split}: {p.finished}/{run.planned} "
            f"({run.done} done, {run.unparsed} unparsed, {run.failed} failed, "
            f"{run.reused} reused{f', {run.skipped} skipped' if run.skipped else ''}), tokens {run.input_tokens}+{run.output_tokens}{cost} "
            f"[{p.status}]",
            ending=end,
        )
        sys.stdout.flush()


def _run_of(config, pk: int) -> Run:
    run = Run.objects.filter(pk=pk, version__config=config).select_related("version").first()
    if run is None:
        raise RunError(f"--resume: judge {config.name!r} has no run {pk}")
    return run
