"""Release gates: may this judge replace human review on this criterion? GO or HOLD, with why.

Pure functions over agreement-report rows (the `agreement_report` JSON shape), no Django:
- a criterion passes when its statistic's lower 95% CI bound reaches the threshold with enough
  held-out items (e.g. Cohen's kappa lower bound >= 0.6 and n >= 50);
- a critical criterion must also pass on every slice marked critical;
- a judge's release decision is GO only when every criterion passes: one failing critical
  criterion holds the release, however much the aggregate pass rate improved.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

GO = "GO"
HOLD = "HOLD"


@dataclass(frozen=True)
class GateRule:
    statistic: str = "cohen_kappa"
    min_lower: float = 0.6
    min_n: int = 50
    max_ci_width: float = 0.3  # wider than this: warn that held-out n is too small


@dataclass(frozen=True)
class GateOutcome:
    criterion: str
    judge: str
    decision: str
    reasons: tuple[str, ...]
    failing_slices: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.decision == GO


# How a reason names the gated statistic (reasons are read on the dashboard and in reports).
STATISTIC_NAMES = {
    "cohen_kappa": "Cohen's κ",
    "gwet_ac1": "Gwet's AC1",
    "krippendorff_alpha": "Krippendorff's α",
}


def _stat(row: dict[str, Any], name: str) -> dict[str, Any]:
    return row.get(name) or {"value": None, "ci": None, "undefined_reason": "not reported"}


def check_row(rule: GateRule, row: dict[str, Any], *, label: str = "") -> list[str]:
    """Why `row` fails `rule` (empty when it passes). `label` prefixes reasons (a slice name)."""
    where = f"{label}: " if label else ""
    n = row.get("n") or 0
    name = STATISTIC_NAMES.get(rule.statistic, rule.statistic.replace("_", " "))
    reasons = []
    if n < rule.min_n:
        reasons.append(f"{where}held-out n = {n} < {rule.min_n}")
    stat = _stat(row, rule.statistic)
    if stat.get("value") is None:
        reasons.append(f"{where}{name} undefined ({stat.get('undefined_reason') or 'no value'})")
    elif not stat.get("ci"):
        reasons.append(f"{where}{name} has no confidence interval")
    elif stat["ci"][0] < rule.min_lower:
        reasons.append(f"{where}{name} lower 95% bound {stat['ci'][0]:.2f} < {rule.min_lower:.2f}")
    return reasons


def ci_width_warning(rule: GateRule, row: dict[str, Any]) -> str | None:
    """Say so when the interval is too wide to decide, and roughly how many items would do.

    The width of a bootstrap CI shrinks like 1/sqrt(n), so n * (width / target)^2 items would
    bring it to the target width.
    """
    stat = _stat(row, rule.statistic)
    n = row.get("n") or 0
    if not stat.get("ci") or not n:
        return None
    width = stat["ci"][1] - stat["ci"][0]
    if width <= rule.max_ci_width:
        return None
    needed = math.ceil(n * (width / rule.max_ci_width) ** 2)
    return (
        f"CI width {width:.2f} > {rule.max_ci_width:.2f}: held-out n = {n} is too small "
        f"(about {needed} items would do)"
    )


def evaluate(
    rule: GateRule,
    row: dict[str, Any],
    *,
    critical: bool,
    critical_slice_rows: dict[str, dict[str, Any]] | None = None,
) -> GateOutcome:
    """The gate for one criterion x judge row, with its critical slices' rows if critical."""
    reasons = check_row(rule, row)
    failing = []
    if critical:
        for slice_name, slice_row in sorted((critical_slice_rows or {}).items()):
            slice_reasons = check_row(rule, slice_row, label=f"slice {slice_name}")
            if slice_reasons:
                failing.append(slice_name)
                reasons += slice_reasons
    warning = ci_width_warning(rule, row)
    return GateOutcome(
        criterion=row.get("criterion", ""),
        judge=row.get("judge", ""),
        decision=HOLD if reasons else GO,
        reasons=tuple(reasons),
        failing_slices=tuple(failing),
        warnings=(warning,) if warning else (),
    )


@dataclass(frozen=True)
class ReleaseDecision:
    judge: str
    decision: str
    failing_criteria: tuple[str, ...]
    failing_slices: tuple[str, ...]
    outcomes: tuple[GateOutcome, ...] = field(default=())


def release_decision(judge: str, outcomes: list[GateOutcome]) -> ReleaseDecision:
    """GO only if every criterion's gate passes for this judge."""
    failing = tuple(dict.fromkeys(o.criterion for o in outcomes if not o.passed))
    slices = tuple(sorted({s for o in outcomes for s in o.failing_slices}))
    return ReleaseDecision(
        judge=judge,
        decision=GO if outcomes and not failing else HOLD,
        failing_criteria=failing,
        failing_slices=slices,
        outcomes=tuple(outcomes),
    )
