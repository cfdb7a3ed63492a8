"""What runs cost: the sum of their calls' costs, each fixed when the call was made; and how
long their calls took.

A reply without token usage is counted (`usage_missing`) and its cost taken as 0, so the run's
cost is then a lower bound ("at least"). Calls reused from another run cost this run nothing.
Latency: the 50th and 95th percentiles of the answered calls' latency (from the request sent to
the last byte of the answered attempt; numpy's linear interpolation), None without any.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from django.db.models import Count, Q, Sum

from judging.models import Call, CallStatus

ANSWERED = ~Q(status=CallStatus.FAILED)
NO_USAGE = Q(input_tokens__isnull=True) | Q(output_tokens__isnull=True)


@dataclass(frozen=True)
class RunCost:
    calls: int = 0
    usage_missing: int = 0  # answered calls whose reply carried no token usage
    unpriced: int = 0  # answered calls made while no price was in force for the model
    usd: Decimal | None = Decimal(0)  # None: answered calls, none of them priced
    latency_p50: int | None = None  # ms
    latency_p95: int | None = None

    @property
    def at_least(self) -> bool:
        """The true cost may be higher: some replies had no usage, or some calls no price."""
        return self.usd is not None and bool(self.usage_missing or self.unpriced)


def run_costs(run_pks: Iterable[int]) -> dict[int, RunCost]:
    """{run pk: RunCost} in one query; a run without calls costs 0."""
    pks = list(run_pks)
    rows = (
        Call.objects.filter(run_id__in=pks)
        .values("run_id")
        .annotate(
            calls=Count("pk"),
            answered=Count("pk", filter=ANSWERED),
            usage_missing=Count("pk", filter=ANSWERED & NO_USAGE),
            unpriced=Count("pk", filter=ANSWERED & Q(price__isnull=True)),
            usd=Sum("cost_usd"),
        )
    )
    costs = dict.fromkeys(pks, RunCost())
    latencies = _latencies(pks)
    for row in rows:
        priced = row["answered"] - row["unpriced"]
        p50, p95 = _percentiles(latencies.get(row["run_id"], []))
        costs[row["run_id"]] = RunCost(
            calls=row["calls"],
            usage_missing=row["usage_missing"],
            unpriced=row["unpriced"],
            usd=(row["usd"] or Decimal(0)) if priced or not row["answered"] else None,
            latency_p50=p50,
            latency_p95=p95,
        )
    return costs


def _latencies(pks: list[int]) -> dict[int, list[int]]:
    """{run pk: its answered calls' latencies}, in one query."""
    out: dict[int, list[int]] = {}
    rows = Call.objects.filter(ANSWERED, run_id__in=pks, latency_ms__isnull=False)
    for run_id, ms in rows.values_list("run_id", "latency_ms").order_by().iterator():
        out.setdefault(run_id, []).append(ms)
    return out


def _percentiles(values: list[int]) -> tuple[int | None, int | None]:
    if not values:
        return None, None
    p50, p95 = np.percentile(np.asarray(values, dtype=float), [50, 95])
    return round(float(p50)), round(float(p95))
