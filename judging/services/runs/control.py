"""Starting, cancelling and resuming runs, and reading their progress.

Running on held-out items is a look at the figures that count: it needs an explicit
confirmation, and the run records it (the dashboard counts the versions that looked)."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from evalsite.planner_statistics import planner_statistics_refresh
from judging.models import JudgeConfig, ProjectBudget, Run, RunStatus, Split
from judging.reports.run_costs import RunCost, run_costs
from judging.services.audit import run_event
from judging.services.calibration.splits import SPLIT_CHOICES, current_draw
from judging.services.judges.configs import JudgeConfigError, version_get
from judging.services.runs.budgets import BudgetError, budget_amount, budget_needs_price
from reviews.models import ProjectAction, WebhookEvent
from reviews.services.webhooks.emit import webhook_event_emit
from reviews.signals import project_data_changed

ACTIVE = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.CANCELLING)
STOPPED = (
    RunStatus.CANCELLED,
    RunStatus.FAILED,
    RunStatus.INTERRUPTED,
    RunStatus.BUDGET_REACHED,
)


MAX_LIMIT = 2**31 - 1  # Run.limit's column


class RunError(ValueError):
    """A run that cannot be started, cancelled or resumed; the message says why."""


@transaction.atomic
def run_create(
    *,
    config: JudgeConfig,
    version: int | None = None,
    split: str = Split.CALIBRATION,
    limit: int | None = None,
    concurrency: int | None = None,
    confirm_held_out: bool = False,
    actor=None,
    from_site: bool = False,
    budget_usd=None,
) -> Run:
    """A queued run of `config`'s version (the latest by default). `concurrency`: the
    version's own unless given; `budget_usd`: the most the run may cost (budgets.py)."""
    try:
        chosen = version_get(config, version)
    except JudgeConfigError as exc:
        raise RunError(str(exc)) from None
    if chosen.criterion is None:
        raise RunError(
            f"judge {config.name!r} has no criterion: it is a ground-truth reader "
            "(use generate_ground_truth)"
        )
    if split not in SPLIT_CHOICES:
        raise RunError(f"split: {split!r} is not one of {', '.join(SPLIT_CHOICES)}")
    if split != "all" and current_draw(config.project) is None:
        raise RunError("no split has been drawn yet: draw it first, or run on --split all")
    looks = split in (Split.HELD_OUT, "all")
    if looks and not confirm_held_out:
        raise RunError("running on held-out items needs an explicit confirmation")
    concurrency = chosen.concurrency if concurrency is None else concurrency
    if not 1 <= concurrency <= 64:
        raise RunError("concurrency: between 1 and 64")
    budget = _budget(chosen, budget_usd)
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise RunError(f"limit: at least 1, at most {MAX_LIMIT}")
    run = Run.objects.create(
        project=config.project,
        version=chosen,
        workers=_workers(config.project, budget) if from_site else 1,
        split=split,
        limit=limit,
        concurrency=concurrency,
        budget_usd=budget,
        confirmed_held_out=looks,
        from_site=from_site,
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    run_event(run, actor, ProjectAction.RUN_STARTED)
    return run


def _workers(project, budget) -> int:
    """How many task workers share a site run: RUN_WORKERS, but one for a run under a budget
    (its own or its project's monthly cap): each worker counts only its own calls in flight, so
    only a run on one worker can stop exactly before the call that would pass the budget."""
    if budget is not None or ProjectBudget.objects.filter(project=project).exists():
        return 1
    return settings.RUN_WORKERS


def _budget(version, budget_usd):
    try:
        budget = budget_amount("budget", budget_usd)
        if budget is not None:
            budget_needs_price("budget", version.provider, version.model)
    except BudgetError as exc:
        raise RunError(str(exc)) from None
    return budget


@transaction.atomic
def run_cancel(run: Run, actor=None) -> bool:
    """Ask a queued or running run to stop (the runner finishes the calls in flight)."""
    if run.status == RunStatus.QUEUED:
        changed = Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
            status=RunStatus.CANCELLED, finished_at=timezone.now()
        )
    else:
        changed = Run.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(
            status=RunStatus.CANCELLING
        )
    if changed:
        run_event(run, actor, ProjectAction.RUN_CANCELLED)
    return bool(changed)


def is_stale(run: Run) -> bool:
    beat = run.heartbeat_at or run.started_at or run.created_at
    return timezone.now() - beat > timedelta(seconds=settings.RUN_STALE_SECONDS)


def _stale_before():
    return timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS)


def runs_recover() -> list[int]:
    """Runs whose worker died (running or cancelling, no heartbeat for RUN_STALE_SECONDS) are
    recorded `interrupted` (a cancelling one `cancelled`); the judge runs among them started
    from the site are queued again. Returns those runs' pks, for the caller to enqueue (a
    worker calls this as it starts, and now and then while it lives)."""
    beat = Coalesce("heartbeat_at", "started_at", "created_at")
    stale = Run.objects.alias(beat=beat).filter(beat__lt=_stale_before())
    now = timezone.now()
    stale.filter(status=RunStatus.CANCELLING).update(status=RunStatus.CANCELLED, finished_at=now)
    dead = list(stale.filter(status=RunStatus.RUNNING).select_related("project", "version"))
    Run.objects.filter(pk__in=[run.pk for run in dead], status=RunStatus.RUNNING).update(
        status=RunStatus.INTERRUPTED,
        error=f"interrupted: its worker stopped (no heartbeat for {settings.RUN_STALE_SECONDS} s)",
    )
    for run in dead:
        run.status = RunStatus.INTERRUPTED
        webhook_event_emit(run.project, WebhookEvent.RUN_INTERRUPTED, run_summary(run))
    resumable = Run.objects.filter(
        status=RunStatus.INTERRUPTED, from_site=True, version__criterion__isnull=False
    )
    queued = []
    for run in resumable:
        try:
            queued.append(run_resume(run).pk)
        except RunError:  # resumed meanwhile by someone else
            continue
    return queued


@transaction.atomic
def run_resume(run: Run, actor=None, budget_usd=None) -> Run:
    """Queue a stopped run (or one that finished with failed calls) again: it makes only the
    calls still missing. A run that looks alive (a recent heartbeat) is refused, so two workers
    never run it at once. `budget_usd` replaces the run's budget (a run that reached its budget
    goes on with a new one)."""
    run = Run.objects.select_for_update().select_related("version").get(pk=run.pk)
    budget = _budget(run.version, budget_usd)
    if run.version.criterion_id is None:
        raise RunError(
            "a ground-truth reader's run resumes by generating again with the same files "
            "(its finished reads are reused)"
        )
    if run.status == RunStatus.DONE and not run.failed:
        raise RunError("the run is finished and none of its calls failed")
    if run.status in ACTIVE and not is_stale(run):
        raise RunError(
            f"the run is {run.status} and its worker reported less than "
            f"{settings.RUN_STALE_SECONDS} s ago"
        )
    run.status, run.finished_at, run.error = RunStatus.QUEUED, None, ""
    run.budget_usd = run.budget_usd if budget is None else budget
    run.workers = min(run.workers, _workers(run.project, run.budget_usd))
    run.save(update_fields=["status", "finished_at", "error", "budget_usd", "workers"])
    run_event(run, actor, ProjectAction.RUN_RESUMED)
    return run


def run_finished(run: Run) -> None:
    """New verdicts: the project's dashboard is recomputed (judging listens to this signal).
    Whatever its end, the project's webhooks hear of it."""
    if run.status == RunStatus.DONE or run.done or run.unparsed:
        transaction.on_commit(lambda: project_data_changed.send(Run, project=run.project))
        # Its calls and verdicts were bulk writes: analyzed as after an import (on commit).
        planner_statistics_refresh(after=f"judge run {run.pk}")
    webhook_event_emit(run.project, WebhookEvent.RUN_FINISHED, run_summary(run))


def run_summary(run: Run) -> dict:
    """What a webhook says about a run: which judge version, over what, how it ended."""
    return {
        "run": run.pk,
        "judge_version": run.version_id,
        "split": run.split,
        "status": run.status,
        "planned": run.planned,
        "done": run.done,
        "unparsed": run.unparsed,
        "failed": run.failed,
        "error": run.error,
    }


@dataclass(frozen=True)
class Progress:
    run: Run
    finished: int
    percent: int
    cost: RunCost

    @property
    def status(self) -> str:
        """The run's status as it truly is: a running run whose worker stopped beating is
        `interrupted` even before a worker has recorded it so."""
        if self.run.status in (RunStatus.RUNNING, RunStatus.CANCELLING) and is_stale(self.run):
            return RunStatus.INTERRUPTED
        return self.run.status

    @property
    def active(self) -> bool:
        return self.status in ACTIVE

    @property
    def cancellable(self) -> bool:
        """A reader's run is one part of a generation: it is not stopped on its own."""
        return self.active and self.run.version.criterion_id is not None

    @property
    def resumable(self) -> bool:
        """A judge run that stopped or has failed calls; a reader's run resumes by generating
        again (its finished reads are reused)."""
        stopped = self.status in STOPPED or self.run.failed
        return bool(stopped) and self.run.version.criterion_id is not None


def runs_progress(runs: Iterable[Run]) -> list[Progress]:
    runs = list(runs)
    costs = run_costs(run.pk for run in runs)
    out = []
    for run in runs:
        finished = run.done + run.unparsed + run.reused
        percent = int(100 * finished / run.planned) if run.planned else 0
        out.append(Progress(run, finished, min(percent, 100), costs[run.pk]))
    return out


def run_progress(run: Run) -> Progress:
    return runs_progress([run])[0]
