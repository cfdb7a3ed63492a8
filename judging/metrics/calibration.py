"""Expected calibration error with its reliability table (equal-width confidence bins)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .stat import Stat


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """One confidence bin [low, high) (the last bin includes 1.0); None stats when empty."""

    low: float
    high: float
    count: int
    mean_confidence: float | None
    accuracy: float | None

    @property
    def gap(self) -> float | None:
        """accuracy - mean confidence (negative = over-confident); None when empty."""
        if self.count == 0:
            return None
        return self.accuracy - self.mean_confidence  # type: ignore[operator]


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    ece: Stat
    max_calibration_error: Stat
    bins: tuple[ReliabilityBin, ...]
    n: int


def _present(values: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    """(float values with missing as 0, present mask); None = missing, NaN is an error."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuf":
        present = np.ones(values.shape, dtype=bool)
        out = values.astype(np.float64)
    else:
        items = list(values)
        present = np.fromiter((v is not None for v in items), dtype=bool, count=len(items))
        out = np.array([0.0 if v is None else float(v) for v in items], dtype=np.float64)
    if out.ndim != 1:
        raise ValueError(f"{what} must be 1-D")
    if np.isnan(out).any():
        raise ValueError(f"{what} contain NaN (missing data must be None)")
    return out, present


def expected_calibration_error(
    confidences: Sequence[float | None], correct: Sequence[bool | None], *, n_bins: int = 10
) -> CalibrationReport:
    """ECE = sum_b (n_b / n) |accuracy_b - mean_confidence_b| over ``n_bins`` equal-width bins.

    Bin b = [b/B, (b+1)/B), the last one closed at 1.0. ``confidences`` must lie in [0, 1];
    ``correct`` is bool / 0 / 1. Items where either is None are dropped. Also reports the
    maximum calibration error (largest |gap| over non-empty bins). Undefined: no item left.
    """
    if n_bins < 1:
        raise ValueError("n_bins must be >= 1")
    conf, conf_present = _present(confidences, "confidences")
    hit, hit_present = _present(correct, "correct")
    if conf.shape != hit.shape:
        raise ValueError(f"{conf.size} confidences but {hit.size} correctness flags")
    keep = conf_present & hit_present
    conf, hit = conf[keep], hit[keep]
    if ((conf < 0) | (conf > 1)).any():
        raise ValueError("confidences must lie in [0, 1]")
    if not np.isin(hit, (0.0, 1.0)).all():
        raise ValueError("correct must be booleans (or 0/1)")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    index = np.minimum(np.searchsorted(edges, conf, side="right") - 1, n_bins - 1)
    count = np.bincount(index, minlength=n_bins)
    conf_sum = np.bincount(index, weights=conf, minlength=n_bins)
    hit_sum = np.bincount(index, weights=hit, minlength=n_bins)
    filled = count > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_conf = np.where(filled, conf_sum / count, np.nan)
        acc = np.where(filled, hit_sum / count, np.nan)
    bins = tuple(
        ReliabilityBin(
            float(edges[b]),
            float(edges[b + 1]),
            int(count[b]),
            float(mean_conf[b]) if filled[b] else None,
            float(acc[b]) if filled[b] else None,
        )
        for b in range(n_bins)
    )
    n = int(count.sum())
    if n == 0:
        reason = "no items with both a confidence and a correctness flag"
        return CalibrationReport(Stat.undefined(reason), Stat.undefined(reason), bins, 0)
    gaps = np.abs(acc[filled] - mean_conf[filled])
    ece = float((count[filled] / n * gaps).sum())
    return CalibrationReport(Stat(ece), Stat(float(gaps.max())), bins, n)
