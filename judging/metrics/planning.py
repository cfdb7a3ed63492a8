"""How many labels a decision needs, from the labels there are (docs/estimates.md).

Each answer assumes the data go on as measured: the same spread of human labels, the same
judge errors, the same agreement. They are plans, not promises; the labels still have to be
drawn at random for the PPI and human-only intervals to hold.

- `ppi_labels_needed`: the smallest number of labelled items n' (of the n + N there are) whose
  PPI++ interval (judging/metrics/ppi.py, lambda re-tuned for n') has the half-width asked for,
  with Var(Y), Var(Yhat) and Cov(Y, Yhat) as measured;
- `classical_labels_needed`: the same for the human-only CLT interval, n' = (z sd(Y) / h)^2;
- `kappa_labels_needed`: the labelled items for kappa's lower bound to reach the gate if kappa
  stays as measured; its interval's half-width shrinks as 1 / sqrt(n) (kappa's asymptotic
  standard error), so n' = n (half-width / (kappa - gate))^2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .ppi import _arrays, z_critical

PPI_METHOD = (
    "PPI++ half-width z·sqrt(λ²·Var(Ŷ)/N′ + Var(Y − λŶ)/n′) with λ re-tuned for n′ and the "
    "variances as measured"
)
CLASSICAL_METHOD = "CLT half-width z·sd(Y)/sqrt(n′) with sd(Y) as measured"
KAPPA_METHOD = (
    "kappa's interval half-width shrinks as 1/sqrt(n) (asymptotic standard error): "
    "n′ = n × (half-width / (κ − gate))², if κ stays as measured"
)


@dataclass(frozen=True, slots=True)
class LabelsNeeded:
    """`total` labelled items needed (None: more than there are items, or never at this
    agreement), `more` beyond the `have` there are, and the method, named."""

    total: int | None
    have: int
    method: str

    @property
    def more(self) -> int | None:
        return None if self.total is None else max(0, self.total - self.have)

    def as_dict(self) -> dict:
        return {"total": self.total, "more": self.more, "method": self.method}


def _check_half_width(half_width: float) -> None:
    if not half_width > 0:
        raise ValueError(f"the half-width must be positive, got {half_width!r}")


def ppi_labels_needed(y, yhat, yhat_unlabeled, *, half_width: float, alpha: float) -> LabelsNeeded:
    _check_half_width(half_width)
    y, yhat, yhat_unlabeled = _arrays(y, yhat, yhat_unlabeled)
    n, total = y.size, y.size + yhat_unlabeled.size
    var_y, var_f = y.var(), np.concatenate([yhat, yhat_unlabeled]).var(ddof=1)
    cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
    candidates = np.arange(max(n, 2), total + 1, dtype=float)
    unlabelled = total - candidates
    with np.errstate(divide="ignore", invalid="ignore"):
        lam = np.where(var_f > 0, cov / ((1 + candidates / unlabelled) * var_f), 0.0)
        lam = np.clip(np.nan_to_num(lam), 0, 1)
        imputed = np.where(unlabelled > 0, lam**2 * var_f / unlabelled, 0.0)
    rectifier = (var_y - 2 * lam * cov + lam**2 * yhat.var()) / candidates
    widths = z_critical(alpha) * np.sqrt(imputed + np.maximum(rectifier, 0))
    reached = np.flatnonzero(widths <= half_width)
    needed = int(candidates[reached[0]]) if reached.size else None
    return LabelsNeeded(needed, n, PPI_METHOD)


def classical_labels_needed(y, *, total: int, half_width: float, alpha: float) -> LabelsNeeded:
    _check_half_width(half_width)
    (y,) = _arrays(y)
    needed = max(2, math.ceil((z_critical(alpha) * y.std() / half_width) ** 2 - 1e-9))
    return LabelsNeeded(needed if needed <= total else None, y.size, CLASSICAL_METHOD)


def kappa_labels_needed(
    *, kappa: float, ci_low: float, n: int, gate: float, min_n: int = 0
) -> LabelsNeeded:
    """None when kappa itself is at or under the gate: no number of labels lifts the lower
    bound above it unless agreement improves."""
    if kappa <= gate:
        return LabelsNeeded(None, n, KAPPA_METHOD)
    if ci_low >= gate:
        return LabelsNeeded(max(n, min_n), n, KAPPA_METHOD)
    needed = math.ceil(n * ((kappa - ci_low) / (kappa - gate)) ** 2 - 1e-9)  # 144.00000000003
    return LabelsNeeded(max(needed, min_n), n, KAPPA_METHOD)
