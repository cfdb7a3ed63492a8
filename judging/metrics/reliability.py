"""Krippendorff's alpha for reliability data (coders x units, missing values allowed)."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from numbers import Real
from typing import Any, Literal

import numpy as np

from ._labels import encode
from .stat import Stat

Level = Literal["nominal", "ordinal", "interval", "ratio"]
LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _rows(reliability_data: Any) -> list[list[Any]]:
    if isinstance(reliability_data, np.ndarray):
        if reliability_data.ndim != 2:
            raise ValueError(
                f"reliability data must be coders x units, got {reliability_data.shape}"
            )
        reliability_data = reliability_data.tolist()
    rows = [[None if _is_missing(v) else v for v in row] for row in reliability_data]
    if len({len(row) for row in rows}) > 1:
        raise ValueError(
            "reliability data must be coders x units: every coder row has one cell per unit"
        )
    return rows


def _value_domain(
    rows: list[list[Any]], level: str, values: Sequence[Hashable] | None
) -> list[Any]:
    if values is None:
        seen = dict.fromkeys(v for row in rows for v in row if v is not None)
        numeric = all(isinstance(v, Real) and not isinstance(v, bool) for v in seen)
        if level == "nominal" and not numeric:
            return list(seen)  # order is irrelevant for nominal data
        if not numeric:
            raise ValueError(f"{level} alpha on non-numeric values needs values= in their order")
        values = sorted(seen)
    values = list(values)
    if level in ("interval", "ratio") and not all(
        isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v) for v in values
    ):
        raise ValueError(f"{level} alpha needs finite numeric values")
    return values


def _distances(level: str, values: list[Any], n_c: np.ndarray) -> np.ndarray:
    """delta^2(c, k) for every pair of domain values (Krippendorff 2011, section C)."""
    size = len(values)
    if level == "nominal":
        return 1.0 - np.eye(size)
    if level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
        i = np.arange(size)
        low, high = np.minimum(i[:, None], i[None, :]), np.maximum(i[:, None], i[None, :])
        between = cumulative[high + 1] - cumulative[low]
        return (between - (n_c[:, None] + n_c[None, :]) / 2.0) ** 2
    v = np.asarray(values, dtype=np.float64)
    diff = v[:, None] - v[None, :]
    if level == "interval":
        return diff**2
    total = v[:, None] + v[None, :]
    ratio = np.divide(diff, total, out=np.zeros_like(diff), where=total != 0)
    return ratio**2


def krippendorff_alpha(
    reliability_data: Any, *, level: Level = "nominal", values: Sequence[Hashable] | None = None
) -> Stat:
    """Krippendorff's alpha = 1 - D_o / D_e = 1 - (n - 1) sum o_ck d_ck / sum n_c n_k d_ck.

    ``reliability_data`` is coders x units; ``None`` (or a float NaN) is a missing value.
    Units with fewer than two values are not pairable and are dropped. The coincidence matrix is
    o_ck = sum_u (pairs (c, k) from different coders in u) / (m_u - 1); n_c = sum_k o_ck;
    n = sum_c n_c. ``level``: nominal (d = [c != k]), ordinal (rank distance over ``values``
    order), interval ((c - k)^2), ratio (((c - k) / (c + k))^2). ``values`` is the value domain:
    required order for ordinal non-numeric data; default: the distinct values (sorted if numeric).
    Undefined: no pairable unit; D_e = 0 (a single value among the pairable values).
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    rows = _rows(reliability_data)
    domain = _value_domain(rows, level, values)
    n_units = len(rows[0]) if rows else 0
    size = len(domain)
    codes = encode([v for row in rows for v in row], domain, what="reliability data")
    unit = np.tile(np.arange(n_units), len(rows))
    keep = codes >= 0
    counts = np.bincount(unit[keep] * size + codes[keep], minlength=n_units * size)
    counts = counts.reshape(n_units, size).astype(np.float64)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    if counts.shape[0] == 0:
        return Stat.undefined("no unit has values from two or more coders (nothing pairable)")
    scaled = counts / (m - 1)[:, None]
    o = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    n_c = o.sum(axis=0)
    n = n_c.sum()
    d = _distances(level, domain, n_c)
    expected = float(n_c @ d @ n_c)
    if expected <= 0:
        return Stat.undefined("expected disagreement is 0: all pairable values are the same value")
    return Stat(1.0 - (n - 1.0) * float((o * d).sum()) / expected)
