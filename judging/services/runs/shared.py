"""A run shared by several task workers (`Run.workers` > 1, set from RUN_WORKERS).

The worker that starts the run writes a claim row per item still to judge (RunClaim). Every
worker of the run then takes a few free claims at a time, plans and makes only those items'
calls, and deletes each claim once all its item's calls are recorded: an item's calls are made
by one worker only. Taking claims is one transaction: rows locked with
`select_for_update(skip_locked=True)` on PostgreSQL, so two workers never wait on, nor take,
the same rows; SQLite has one writer at a time, and the UPDATE re-checks that the rows are
still free either way. A worker keeps its claims fresh as it records; a claim left stale for
RUN_STALE_SECONDS (its worker died) is taken again, and its calls already recorded are not made
again (the runner skips finished fingerprints).
"""

from __future__ import annotations

import itertools
import math
import os
import socket
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from judging.models import Run, RunClaim
from judging.services.runs.plan import PlannedCall

CLAIM_ITEMS = 8  # items taken at a time: enough for a few calls per thread, few left if it dies
INSERT_BATCH = 2000
LATER = object()  # "nothing free now, but other workers still hold items": ask again soon
_WORKER_SERIAL = itertools.count(1)


def worker_name() -> str:
    """This executor, by host, process and a serial (one process may run a run twice)."""
    return f"{socket.gethostname()[:40]}:{os.getpid()}:{next(_WORKER_SERIAL)}"


def share_of_concurrency(run: Run) -> int:
    """Each worker's calls in flight: together, at most the run's concurrency."""
    return max(1, math.ceil(run.concurrency / max(run.workers, 1)))


def claims_create(run: Run, item_ids: Iterable[int]) -> None:
    """The run's claims, one per item to judge (the starting worker, as it takes the run)."""
    RunClaim.objects.filter(run=run).delete()  # a resumed run's leftovers
    ids = iter(item_ids)
    while batch := list(itertools.islice(ids, INSERT_BATCH)):
        RunClaim.objects.bulk_create([RunClaim(run=run, item_id=pk) for pk in batch])


def _free(run: Run):
    stale = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS)
    return RunClaim.objects.filter(run=run).filter(Q(worker="") | Q(claimed_at__lt=stale))


def claim_items(run: Run, worker: str, n: int = CLAIM_ITEMS) -> list[int]:
    """Up to `n` free items of the run, now `worker`'s."""
    with transaction.atomic():
        free = _free(run).order_by("pk")
        if connection.features.has_select_for_update_skip_locked:
            free = free.select_for_update(skip_locked=True)
        pks = list(free.values_list("pk", flat=True)[:n])
        if not pks:
            return []
        now = timezone.now()
        _free(run).filter(pk__in=pks).update(worker=worker, claimed_at=now)
        return list(
            RunClaim.objects.filter(pk__in=pks, worker=worker, claimed_at=now).values_list(
                "item_id", flat=True
            )
        )


def others_hold(run: Run, worker: str) -> bool:
    return RunClaim.objects.filter(run=run).exclude(Q(worker="") | Q(worker=worker)).exists()


class Claims:
    """One worker's claims on a shared run: what it plans, and what it has recorded."""

    def __init__(self, run: Run, plan: Callable[[list[int]], list[PlannedCall]]):
        self.run, self.plan, self.worker = run, plan, worker_name()
        self.outstanding: Counter[int] = Counter()

    def calls(self) -> Iterator[PlannedCall | object]:
        """The calls of the items this worker takes, a few items at a time; LATER while
        nothing is free but other workers still hold items (one may die: its claims go
        stale and are taken here)."""
        while True:
            items = claim_items(self.run, self.worker)
            if not items:
                if not others_hold(self.run, self.worker):
                    return
                yield LATER
                continue
            planned = self.plan(items)
            self.outstanding.update(call.item_id for call in planned)
            self._release(set(items) - set(self.outstanding))  # nothing left to ask
            yield from planned

    def recorded(self, calls: Iterable[PlannedCall]) -> None:
        """After these calls are written: release the items all of whose calls are, keep
        the others fresh."""
        self.outstanding.subtract(call.item_id for call in calls)
        finished = {item for item, left in self.outstanding.items() if left <= 0}
        for item in finished:
            del self.outstanding[item]
        self._release(finished)
        mine = RunClaim.objects.filter(run=self.run, worker=self.worker)
        mine.update(claimed_at=timezone.now())

    def _release(self, items: set[int]) -> None:
        if items:
            RunClaim.objects.filter(run=self.run, worker=self.worker, item_id__in=items).delete()


def run_left_to_share(run: Run) -> bool:
    """Whether any of the run's items is still free or held (the last worker out ends it)."""
    return RunClaim.objects.filter(run=run).exists()
