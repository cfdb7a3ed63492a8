"""Executing a run: calls in a thread pool, results written in batches by this thread.

A run asks only about items whose current revision lacks this judge's verdicts (every sample and
display order): unchanged items judged before are not asked again, changed ones are. Finished
calls (by fingerprint) are skipped too, so a run resumed after a crash or a cancel makes only
the calls that are missing. The run's status is re-read between batches: `cancelling` stops
submitting, lets the calls in flight finish and records them. A budget (the run's own, the
project's monthly cap) stops submitting before the call that would pass it: the run ends
`budget_reached` (budgets.py).
"""

import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from itertools import islice

from django.db import transaction
from django.db.models import Count, F, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from judging.models import Call, CallStatus, JudgeVersion, Run, RunStatus, Verdict
from judging.providers import Provider, ProviderError, make_provider
from judging.services.calibration.splits import items_in_split
from judging.services.judges.endpoints import EndpointRefused, check_endpoint
from judging.services.runs.budgets import Budget, budget_for
from judging.services.runs.control import run_finished
from judging.services.runs.plan import PlannedCall, has_pair, plan_calls
from judging.services.runs.record import Outcome, record_outcomes
from judging.services.runs.shared import (
    LATER,
    Claims,
    claims_create,
    run_left_to_share,
    share_of_concurrency,
)

FLUSH_EVERY = 64
FLUSH_SECONDS = 0.25
LOOKUP_CHUNK = 256


def run_items(run: Run):
    """The run's split's items still to judge, in pk order, `limit` of them at most."""
    items = items_in_split(project=run.project, split=run.split).order_by("pk")
    items = items_unjudged(items, run.version, calls_per_item(run))
    return items[: run.limit] if run.limit else items


def _plan_counts(run: Run) -> None:
    """The run's `planned` calls: those still to make, and those of items already judged on
    their current revision, which count as `reused` (less this run's own, when it resumes)."""
    per_item = calls_per_item(run)
    split = items_in_split(project=run.project, split=run.split)
    todo = run_items(run).count()
    skipped = _pairless(run)
    judged = (split.count() - items_unjudged(split, run.version, per_item).count()) * per_item
    own = run.done + run.unparsed
    Run.objects.filter(pk=run.pk).update(
        planned=(todo - skipped) * per_item + judged,
        reused=max(judged - own, 0),
        skipped=skipped,
    )


def _pairless(run: Run) -> int:
    """Items of a pairwise run without both answers: they cannot be judged, only counted."""
    criterion = run.version.criterion
    if not criterion.pairwise:
        return 0
    metadata = run_items(run).values_list("metadata", flat=True)
    return sum(not has_pair(m, criterion.name) for m in metadata.iterator())


def items_unjudged(items: QuerySet, version: JudgeVersion, per_item: int) -> QuerySet:
    """`items` whose current revision has fewer than `per_item` verdicts of `version`'s
    judge on its criterion (a verdict on an earlier revision does not count)."""
    verdicts = (
        Verdict.objects.filter(
            item=OuterRef("pk"),
            revision=OuterRef("revision"),
            criterion_id=version.criterion_id,
            judge_id=version.judge_id,
        )
        .order_by()
        .values("item")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return items.annotate(judged=Coalesce(Subquery(verdicts), 0)).filter(judged__lt=per_item)


def calls_per_item(run: Run) -> int:
    version = run.version
    return version.samples * (2 if version.criterion and version.criterion.pairwise else 1)


def provider_for(run: Run) -> Provider:
    """The run's provider, once its address and key variable are still allowed (the settings
    may have changed since the judge was saved)."""
    version = run.version
    try:
        check_endpoint(version.base_url, version.api_key_env)
    except EndpointRefused as exc:
        raise ProviderError(str(exc)) from None
    return make_provider(
        version.provider,
        model=version.model,
        base_url=version.base_url,
        api_key_env=version.api_key_env,
        timeout=float(version.timeout_seconds),
        max_retries=version.max_retries,
        concurrency=run.concurrency,
    )


def _missing(planned: Iterator[PlannedCall], run: Run) -> Iterator[PlannedCall]:
    """The planned calls not finished before; those finished by other runs count as reused."""
    while chunk := list(islice(planned, LOOKUP_CHUNK)):
        rows = (
            Call.objects.filter(fingerprint__in=[c.fingerprint for c in chunk])
            .exclude(status=CallStatus.FAILED)
            .values_list("fingerprint", "run_id")
        )
        finished = {fp for fp, _ in rows}
        elsewhere = sum(1 for _, run_id in rows if run_id != run.pk)
        if elsewhere:  # this run's own earlier calls are already in its counters
            Run.objects.filter(pk=run.pk).update(reused=F("reused") + elsewhere)
        yield from (c for c in chunk if c.fingerprint not in finished)


def _call(provider: Provider, planned: PlannedCall) -> Outcome:
    try:
        return Outcome(planned, reply=provider.complete(planned.request))
    except ProviderError as error:
        return Outcome(planned, error=error)


def _claim(run: Run) -> bool:
    """Only one executor per run: queued -> running, atomically."""
    now = timezone.now()
    claimed = Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING,
        started_at=run.started_at or now,
        heartbeat_at=now,
        error="",
        failed=0,  # failed calls are tried again
    )
    return bool(claimed)


def _cancelling(run: Run) -> bool:
    return Run.objects.filter(pk=run.pk, status=RunStatus.CANCELLING).exists()


def _take(run: Run) -> bool | None:
    """True: this executor starts the run; False: it joins a run other workers share (see
    shared.py); None: nothing to do here (taken, or finished, meanwhile)."""
    if run.workers <= 1:
        return True if _claim(run) else None
    with transaction.atomic():
        if _claim(run):
            claims_create(run, run_items(run).values_list("pk", flat=True).iterator())
            return True
    return False if Run.objects.filter(pk=run.pk, status=RunStatus.RUNNING).exists() else None


def _planned_items(run: Run, item_ids: list[int]) -> list[PlannedCall]:
    """A shared run's calls still missing for the items this worker just took."""
    items = items_in_split(project=run.project, split=run.split).filter(pk__in=item_ids)
    return list(_missing(plan_calls(run.version, items.order_by("pk").iterator()), run))


def run_execute(
    run: Run,
    *,
    provider: Provider | None = None,
    plan: Callable[[Run], Iterator[PlannedCall]] | None = None,
    on_progress: Callable[[Run], None] | None = None,
) -> Run:
    """Execute a queued run to its end (done, cancelled, budget reached or failed) and return
    it refreshed; or, for a run several workers share, do this worker's part of it."""
    first = _take(run)
    if first is None:
        return Run.objects.get(pk=run.pk)
    run.refresh_from_db()
    own_provider = provider is None
    claims = Claims(run, lambda ids: _planned_items(run, ids)) if run.workers > 1 else None
    if claims is None:
        planned = (plan or (lambda r: plan_calls(r.version, run_items(r).iterator())))(run)
        todo = _missing(planned, run)
    else:
        todo = claims.calls()
    if first:
        _plan_counts(run)
    status, error = RunStatus.FAILED, "interrupted"
    try:
        provider = provider or provider_for(run)  # refused endpoints fail the run, named
        status, error = _pump(run, provider, todo, on_progress, claims)
    except Exception as exc:  # recorded on the run, then raised for the worker's log too
        error = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        if own_provider and provider is not None:
            provider.close()
        ended = _end(run, status, error, shared=claims is not None)
    run.refresh_from_db()
    if ended:
        run_finished(run)
    return run


def _end(run: Run, status: str, error: str, *, shared: bool) -> bool:
    """Record how the run ended; True if this executor ended it. A shared run is ended by
    its last worker out (a done one once no item is left), and only once."""
    rows = Run.objects.filter(pk=run.pk)
    if shared:
        if status == RunStatus.DONE and run_left_to_share(run):
            return False
        rows = rows.filter(status__in=(RunStatus.RUNNING, RunStatus.CANCELLING))
    return bool(rows.update(status=status, error=error[:2000], finished_at=timezone.now()))


def _pump(run, provider, todo, on_progress, claims: Claims | None) -> tuple[str, str]:
    """Keep `concurrency` calls in flight (fewer when a budget needs it; a shared run's worker
    its share); write results every FLUSH_EVERY or FLUSH_SECONDS. Returns the run's end:
    (status, error)."""
    pending: set[Future] = set()
    results: list[Outcome] = []
    last_flush = time.monotonic()
    cancelled = False
    budget = budget_for(run)
    concurrency = share_of_concurrency(run) if claims else run.concurrency
    waiting: PlannedCall | None = None  # the next call, held back by the budget
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        while True:
            later = False
            while not cancelled and len(pending) < concurrency * 2:
                waiting = waiting or next(todo, None)
                if waiting is LATER:  # other workers hold the rest: look again soon
                    waiting, later = None, True
                    break
                if waiting is None or not budget.allows(len(pending), waiting.request):
                    break
                pending.add(pool.submit(_call, provider, waiting))
                waiting = None
            if not pending and not later:
                break
            finished, pending = wait(pending, timeout=FLUSH_SECONDS, return_when=FIRST_COMPLETED)
            if not pending and not finished:
                time.sleep(FLUSH_SECONDS)
            results.extend(_answered(f.result(), budget) for f in finished)
            if len(results) >= FLUSH_EVERY or time.monotonic() - last_flush >= FLUSH_SECONDS:
                _flush(run, results, budget, claims)
                results, last_flush = [], time.monotonic()
                cancelled = cancelled or _cancelling(run)
                if on_progress:
                    on_progress(run)
    _flush(run, results, budget, claims)
    if cancelled or _cancelling(run):
        return RunStatus.CANCELLED, ""
    if waiting is not None:
        return RunStatus.BUDGET_REACHED, budget.reason()
    return RunStatus.DONE, ""


def _answered(outcome: Outcome, budget: Budget) -> Outcome:
    if outcome.reply is not None:
        budget.answered(outcome.reply)
    return outcome


def _flush(run: Run, results: list[Outcome], budget: Budget, claims: Claims | None) -> None:
    record_outcomes(run, run.version, results)
    if claims is not None:
        claims.recorded(outcome.planned for outcome in results)
    if budget.limited and results:
        budget.refresh(run)
