"""Seeded bootstrap confidence intervals (percentile and BCa), resampling items.

For any statistic of a two-rater k x k table, resampling the n items with replacement is the
same as drawing the k*k cell counts from Multinomial(n, table / n). ``bootstrap_table`` draws
all resamples at once (``rng.multinomial(n, p, size=B)``) and evaluates a vectorised
``statistic(tables[B, k, k]) -> values[B]`` (NaN = undefined) once: 100k items x 2,000
resamples take milliseconds. Its BCa jackknife needs only the <= k*k distinct leave-one-out
tables (one item removed from a non-empty cell), weighted by the cell counts.

Undefined resamples are dropped and counted (``resamples_undefined``); the interval is built
from the defined ones. The interval is undefined (with a reason) only when the point estimate
is undefined or no resample is defined; BCa alone can also be undefined (jackknife undefined,
or every resample on one side of the estimate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

from .agreement import Weights, cohen_kappa, cohen_kappa_values, gwet_ac1, gwet_ac1_values
from .stat import Stat

Method = Literal["percentile", "bca"]
TableStatistic = Callable[[np.ndarray], np.ndarray]
_NORMAL = NormalDist()


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    """Point estimate plus both intervals; ``estimate.ci`` is the interval of ``method``."""

    estimate: Stat
    method: str
    level: float
    n_resamples: int
    resamples_undefined: int
    percentile: tuple[float, float] | None
    bca: tuple[float, float] | None
    percentile_undefined_reason: str | None
    bca_undefined_reason: str | None

    @property
    def ci(self) -> tuple[float, float] | None:
        return self.estimate.ci

    @property
    def ci_undefined_reason(self) -> str | None:
        """Why ``estimate.ci`` is None (None when the interval is defined)."""
        if self.method == "bca":
            return self.bca_undefined_reason
        return self.percentile_undefined_reason

    def as_dict(self) -> dict[str, Any]:
        """``estimate.as_dict()`` plus method, level, resample counts and the CI's reason."""
        return {
            **self.estimate.as_dict(),
            "method": self.method,
            "level": self.level,
            "n_resamples": self.n_resamples,
            "resamples_undefined": self.resamples_undefined,
            "ci_undefined_reason": self.ci_undefined_reason,
        }


def _check(n_resamples: int, level: float, method: str) -> None:
    if n_resamples < 1:
        raise ValueError("n_resamples must be >= 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must be in (0, 1)")
    if method not in ("percentile", "bca"):
        raise ValueError(f"method must be 'percentile' or 'bca', got {method!r}")


def _undefined_result(
    estimate: Stat, reason: str, method: str, level: float, b: int
) -> BootstrapResult:
    return BootstrapResult(estimate.with_ci(None), method, level, b, 0, None, None, reason, reason)


def _bca(
    theta: float, boot: np.ndarray, jack: np.ndarray, weights: np.ndarray, alpha: float
) -> tuple[tuple[float, float] | None, str | None]:
    """BCa (Efron 1987): z0 = Phi^-1(share of resamples below theta, ties count half);
    a = sum w d^3 / (6 (sum w d^2)^1.5), d = weighted jackknife mean - jackknife value;
    bounds = quantiles at Phi(z0 + (z0 + z) / (1 - a (z0 + z))) for z = Phi^-1(alpha/2) and
    z = Phi^-1(1 - alpha/2).
    """
    if np.isnan(jack).any():
        return (
            None,
            "BCa undefined: the statistic is undefined after leaving out some item (jackknife)",
        )
    tol = 1e-12 * max(1.0, abs(theta))
    below = (boot < theta - tol).sum() + 0.5 * (np.abs(boot - theta) <= tol).sum()
    share = below / boot.size
    if share <= 0.0 or share >= 1.0:
        return (
            None,
            "BCa undefined: every resample lies on one side of the estimate (infinite bias)",
        )
    z0 = _NORMAL.inv_cdf(share)
    mean = float((weights * jack).sum() / weights.sum())
    d = mean - jack
    spread = float((weights * d**2).sum())
    small = (1e-12 * max(1.0, abs(mean))) ** 2 * float(weights.sum())
    accel = float((weights * d**3).sum()) / (6.0 * spread**1.5) if spread > small else 0.0
    quantiles = []
    for z in (_NORMAL.inv_cdf(alpha / 2), _NORMAL.inv_cdf(1 - alpha / 2)):
        denominator = 1.0 - accel * (z0 + z)
        if denominator <= 0:
            return None, "BCa undefined: the acceleration is too large for this level"
        quantiles.append(_NORMAL.cdf(z0 + (z0 + z) / denominator))
    low, high = np.quantile(boot, quantiles)
    return (float(low), float(high)), None


def _finish(
    estimate: Stat,
    boot: np.ndarray,
    jack: np.ndarray,
    weights: np.ndarray,
    method: str,
    level: float,
) -> BootstrapResult:
    b = boot.size
    defined = boot[~np.isnan(boot)]
    undefined = b - defined.size
    if defined.size == 0:
        reason = f"all {b} bootstrap resamples were undefined"
        return BootstrapResult(
            estimate.with_ci(None), method, level, b, undefined, None, None, reason, reason
        )
    alpha = 1.0 - level
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    percentile = (float(low), float(high))
    bca, bca_reason = _bca(float(estimate.value), defined, jack, weights, alpha)
    chosen = bca if method == "bca" else percentile
    return BootstrapResult(
        estimate.with_ci(chosen), method, level, b, undefined, percentile, bca, None, bca_reason
    )


def _cell_counts(table: Any, *, dims: int) -> tuple[int, np.ndarray]:
    """(k, the flattened int64 counts) of one k x k (dims 2) or k x k x k (dims 3) table."""
    t = np.asarray(table)
    if t.ndim != dims or len(set(t.shape)) != 1:
        shape = " x ".join(["k"] * dims)
        raise ValueError(f"expected one {shape} table, got shape {t.shape}")
    if (t < 0).any() or (t != np.round(t)).any():
        raise ValueError("table counts must be non-negative integers")
    return t.shape[0], t.astype(np.int64).ravel()


def _leave_one_out(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct leave-one-out count vectors (one item removed from each non-empty cell),
    and how many items each stands for (the cell's count): the weighted jackknife's input."""
    cells = np.flatnonzero(counts)
    rows = np.repeat(counts[None, :], cells.size, axis=0)
    rows[np.arange(cells.size), cells] -= 1
    return rows, counts[cells].astype(np.float64)


def bootstrap_table(
    table: Any,
    statistic: TableStatistic,
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    method: Method = "bca",
    rng: np.random.Generator | int | None = None,
    estimate: Stat | None = None,
) -> BootstrapResult:
    """Bootstrap CI of ``statistic`` over the items behind a k x k count table (see module doc).

    ``statistic`` maps tables ``(B, k, k)`` to ``(B,)`` floats, NaN where undefined (e.g.
    ``cohen_kappa_values``). ``estimate``: the point estimate with its undefined reason (default:
    ``statistic`` on the table). ``rng``: a Generator or seed. Percentile: quantiles alpha/2 and
    1 - alpha/2 of the defined resamples; BCa: Efron's bias-corrected and accelerated quantiles
    (z0 counts resamples equal to the estimate as half below). Undefined: point estimate
    undefined; no items; every resample undefined; BCa alone also when a leave-one-out value is
    undefined or every resample lies on one side of the estimate.
    """
    _check(n_resamples, level, method)
    k, counts = _cell_counts(table, dims=2)
    n = int(counts.sum())
    if estimate is None:
        value = float(np.asarray(statistic(counts.reshape(1, k, k))).reshape(-1)[0])
        estimate = (
            Stat.undefined("statistic undefined on the observed table")
            if np.isnan(value)
            else Stat(value)
        )
    if not estimate.is_defined:
        reason = f"point estimate undefined: {estimate.undefined_reason}"
        return _undefined_result(estimate, reason, method, level, n_resamples)
    if n == 0:
        return _undefined_result(estimate, "no items to resample", method, level, n_resamples)
    gen = np.random.default_rng(rng)
    draws = gen.multinomial(n, counts / n, size=n_resamples).reshape(n_resamples, k, k)
    boot = np.asarray(statistic(draws), dtype=np.float64).reshape(n_resamples)
    leave_one_out, weights = _leave_one_out(counts)
    jack = np.asarray(statistic(leave_one_out.reshape(-1, k, k)), dtype=np.float64).reshape(-1)
    return _finish(estimate, boot, jack, weights, method, level)


def _as_float(result: Stat | float | None) -> float:
    if isinstance(result, Stat):
        return np.nan if result.value is None else result.value
    return np.nan if result is None else float(result)


def bootstrap_items(
    n_items: int,
    statistic: Callable[[np.ndarray], Stat | float | None],
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    method: Method = "bca",
    rng: np.random.Generator | int | None = None,
) -> BootstrapResult:
    """Generic item bootstrap: ``statistic(indices)`` is evaluated on resampled item indices.

    ``statistic`` returns a Stat, a float, or None (NaN/None/undefined Stat = undefined). Costs
    ``n_resamples + n_items`` calls (full leave-one-out jackknife for BCa): for small data or
    statistics that are not a function of one two-rater table (Fleiss, alpha, ECE, ...).
    Intervals as in ``bootstrap_table``. Undefined: n_items = 0 or the point estimate undefined;
    every resample undefined (BCa also when a leave-one-out value is undefined).
    """
    _check(n_resamples, level, method)
    if n_items < 1:
        no_items = Stat.undefined("no items (n = 0)")
        reason = "point estimate undefined: no items (n = 0)"
        return _undefined_result(no_items, reason, method, level, n_resamples)
    everything = np.arange(n_items)
    point = statistic(everything)
    estimate = (
        point
        if isinstance(point, Stat)
        else (
            Stat.undefined("statistic undefined on the observed items")
            if np.isnan(_as_float(point))
            else Stat(_as_float(point))
        )
    )
    if not estimate.is_defined:
        reason = f"point estimate undefined: {estimate.undefined_reason}"
        return _undefined_result(estimate, reason, method, level, n_resamples)
    gen = np.random.default_rng(rng)
    boot = np.array(
        [_as_float(statistic(gen.integers(0, n_items, size=n_items))) for _ in range(n_resamples)]
    )
    jack = np.array([_as_float(statistic(np.delete(everything, i))) for i in range(n_items)])
    return _finish(estimate, boot, jack, np.ones(n_items), method, level)


def cohen_kappa_ci(table: Any, *, weights: Weights = None, **kwargs: Any) -> BootstrapResult:
    """Cohen's kappa with a bootstrap CI; ``kwargs`` go to ``bootstrap_table``."""
    return bootstrap_table(
        table,
        partial(cohen_kappa_values, weights=weights),
        estimate=cohen_kappa(table, weights),
        **kwargs,
    )


def gwet_ac1_ci(table: Any, **kwargs: Any) -> BootstrapResult:
    """Gwet's AC1 (two raters) with a bootstrap CI; ``kwargs`` go to ``bootstrap_table``."""
    return bootstrap_table(table, gwet_ac1_values, estimate=gwet_ac1(table), **kwargs)


@dataclass(frozen=True, slots=True)
class PairedBootstrapResult:
    """Two raters, each against the same reference on the same items, and their difference
    (``b - a``), all from the same resampled items."""

    a: BootstrapResult
    b: BootstrapResult
    difference: BootstrapResult


def _difference(a: Stat, b: Stat) -> Stat:
    if not a.is_defined:
        return Stat.undefined(f"A: {a.undefined_reason}")
    if not b.is_defined:
        return Stat.undefined(f"B: {b.undefined_reason}")
    return Stat(b.value - a.value)


def bootstrap_paired(
    table: Any,
    statistic: TableStatistic,
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    method: Method = "percentile",
    rng: np.random.Generator | int | None = None,
    estimates: tuple[Stat, Stat] | None = None,
) -> PairedBootstrapResult:
    """Paired bootstrap of ``statistic`` for two raters A and B against one reference.

    ``table[h, a, b]``: items whose reference label is ``h``, A's ``a`` and B's ``b`` (k x k x k).
    Resampling the n items with replacement draws the k**3 cell counts (flattened in C order:
    reference, A, B) from Multinomial(n, table / n) with ``rng.multinomial(n, p, size=B)``; each
    resample's reference x A table sums out B's axis and its reference x B table sums out A's,
    so both sides and ``b - a`` are computed on the same items. A resample where either side is
    undefined is undefined for the difference (dropped and counted). Intervals, jackknife and
    undefined cases as in ``bootstrap_table``; ``estimates``: the two point estimates with their
    reasons (default: ``statistic`` on the observed tables).
    """
    _check(n_resamples, level, method)
    k, counts = _cell_counts(table, dims=3)
    n = int(counts.sum())

    def sides(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        cubes = cells.reshape(-1, k, k, k)
        a = np.asarray(statistic(cubes.sum(axis=3)), dtype=np.float64).reshape(-1)
        b = np.asarray(statistic(cubes.sum(axis=2)), dtype=np.float64).reshape(-1)
        return a, b

    if estimates is None:
        observed = sides(counts[None, :])
        estimates = tuple(
            Stat.undefined("statistic undefined on the observed table")
            if np.isnan(v[0])
            else Stat(float(v[0]))
            for v in observed
        )
    point_a, point_b = estimates
    points = (point_a, point_b, _difference(point_a, point_b))
    if n == 0:
        return PairedBootstrapResult(
            *(
                _undefined_result(p, "no items to resample", method, level, n_resamples)
                for p in points
            )
        )
    gen = np.random.default_rng(rng)
    draws = gen.multinomial(n, counts / n, size=n_resamples)
    boot_a, boot_b = sides(draws)
    leave_one_out, weights = _leave_one_out(counts)
    jack_a, jack_b = sides(leave_one_out)
    results = []
    for point, boot, jack in zip(
        points, (boot_a, boot_b, boot_b - boot_a), (jack_a, jack_b, jack_b - jack_a), strict=True
    ):
        if not point.is_defined:
            reason = f"point estimate undefined: {point.undefined_reason}"
            results.append(_undefined_result(point, reason, method, level, n_resamples))
        else:
            results.append(_finish(point, boot, jack, weights, method, level))
    return PairedBootstrapResult(*results)
