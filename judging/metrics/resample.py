"""Seeded percentile bootstrap over items for statistics that are sums over items: a mean of
per-item scores, or a corpus statistic computed from summed per-item counts (corpus BLEU).

A resample of n items with replacement is a count vector ``w`` (how often each item was drawn,
Multinomial(n, 1/n)); any sum over the resample is then ``w @ per_item``. Drawing the count
matrices in chunks keeps memory bounded (about ``CHUNK_CELLS`` counts at a time) for any n.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .stat import Stat

CHUNK_CELLS = 4_000_000
NO_ITEMS = "no items (n = 0)"


def resample_counts(n: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Count matrices ``(chunk, n)``, ``n_resamples`` rows in all: row r says how many times
    each item is in resample r (each row sums to n)."""
    chunk = max(1, CHUNK_CELLS // max(n, 1))
    p = np.full(n, 1.0 / n)
    for start in range(0, n_resamples, chunk):
        yield rng.multinomial(n, p, size=min(chunk, n_resamples - start))


def percentile_ci(boot: np.ndarray, level: float) -> tuple[float, float] | None:
    """The (alpha/2, 1 - alpha/2) quantiles of the defined (non-NaN) resamples; None if none."""
    defined = boot[~np.isnan(boot)]
    if defined.size == 0:
        return None
    alpha = 1.0 - level
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def summed_ci(
    per_item: np.ndarray,
    statistic: Callable[[np.ndarray], np.ndarray],
    *,
    n_resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> Stat:
    """``statistic(sums)`` of the per-item rows ``per_item`` (shape ``(n,)`` or ``(n, m)``),
    with a percentile bootstrap CI over the items. ``statistic`` maps summed rows ``(B, ...)``
    to ``(B,)`` values (NaN = undefined) and gets the resample size n as its second argument."""
    values = np.asarray(per_item, dtype=np.float64)
    n = values.shape[0]
    if n == 0:
        return Stat.undefined(NO_ITEMS)
    point = float(statistic(values.sum(axis=0, keepdims=True), n)[0])
    if np.isnan(point):
        return Stat.undefined("undefined on the observed items")
    rng = np.random.default_rng(seed)
    boot = np.concatenate(
        [statistic(w @ values, n) for w in resample_counts(n, n_resamples, rng)]
    ).astype(np.float64)
    return Stat(point, percentile_ci(boot, level))


def _mean(sums: np.ndarray, n: int) -> np.ndarray:
    return sums / n


def mean_ci(values, *, n_resamples: int = 2000, level: float = 0.95, seed: int = 0) -> Stat:
    """The mean of per-item scores with a percentile bootstrap CI over the items."""
    return summed_ci(
        np.asarray(values, dtype=np.float64),
        _mean,
        n_resamples=n_resamples,
        level=level,
        seed=seed,
    )
