"""Chance-corrected agreement between raters: Cohen's kappa, Gwet's AC1, Fleiss' kappa.

Two-rater statistics are computed from a k x k confusion matrix (rows = first rater / human,
columns = second rater / judge). Every ``*_values`` function is vectorised over leading axes
(``tables`` of shape ``(..., k, k)``) and marks undefined entries with NaN; it is the form the
bootstrap resamples. The Stat-returning twin (``cohen_kappa`` etc.) turns NaN into an undefined
``Stat`` with its reason: NaN never leaves this package.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, Literal

import numpy as np

from ._labels import encode, encode_rows
from .stat import Stat

Weights = Literal["linear", "quadratic"] | None

NO_ITEMS = "no rated items (n = 0)"
SINGLE_LABEL = (
    "chance agreement is 1: both raters used a single label (the same one for every item)"
)


def confusion_matrix(
    rater_a: Sequence[Hashable | None],
    rater_b: Sequence[Hashable | None],
    labels: Sequence[Hashable],
) -> np.ndarray:
    """k x k int64 counts: ``table[i, j]`` = items A labelled ``labels[i]`` and B ``labels[j]``.

    Items where either rating is ``None`` (missing) are skipped. A rating not in ``labels``
    raises ``ValueError``; unequal lengths raise ``ValueError``.
    """
    a = encode(rater_a, labels, what="rater_a labels")
    b = encode(rater_b, labels, what="rater_b labels")
    if a.shape != b.shape:
        raise ValueError(f"rater_a has {a.size} ratings but rater_b has {b.size}")
    k = len(labels)
    both = (a >= 0) & (b >= 0)
    flat = np.bincount(a[both] * k + b[both], minlength=k * k)
    return flat.reshape(k, k).astype(np.int64)


def as_tables(tables: Any) -> np.ndarray:
    """Validate count table(s) of shape ``(..., k, k)``: finite and non-negative; float64."""
    t = np.asarray(tables, dtype=np.float64)
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ValueError(f"expected square table(s) of shape (..., k, k), got {t.shape}")
    if not np.isfinite(t).all() or (t < 0).any():
        raise ValueError("table counts must be finite and non-negative")
    return t


def disagreement_weights(k: int, weights: Weights = None) -> np.ndarray:
    """k x k disagreement weights, normalised to a maximum of 1 (all zero when k < 2).

    ``None``: 0 on the diagonal, 1 elsewhere; ``"linear"``: |i-j|/(k-1);
    ``"quadratic"``: ((i-j)/(k-1))^2. Linear/quadratic assume the labels are in ordinal order.
    """
    i = np.arange(k)
    distance = np.abs(i[:, None] - i[None, :]).astype(np.float64)
    if weights is None:
        w = (distance > 0).astype(np.float64)
    elif weights == "linear":
        w = distance
    elif weights == "quadratic":
        w = distance**2
    else:
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    return w / w.max() if k > 1 else w


def _margins(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = t.sum(axis=-1)
    cols = t.sum(axis=-2)
    return t.sum(axis=(-2, -1)), rows, cols


def _where_defined(values: np.ndarray, defined: np.ndarray) -> np.ndarray:
    return np.where(defined, values, np.nan)


def observed_agreement_values(tables: Any, weights: Weights = None) -> np.ndarray:
    """A_o = 1 - sum(w_ij * n_ij) / n  (unweighted: trace / n). NaN when n = 0."""
    t = as_tables(tables)
    n, _, _ = _margins(t)
    w = disagreement_weights(t.shape[-1], weights)
    disagree = np.einsum("...ij,ij->...", t, w)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _where_defined(1.0 - disagree / n, n > 0)


def expected_agreement_values(tables: Any, weights: Weights = None) -> np.ndarray:
    """A_e = 1 - sum(w_ij * r_i * c_j) / n^2 with row/column margins r, c. NaN when n = 0."""
    t = as_tables(tables)
    n, rows, cols = _margins(t)
    w = disagreement_weights(t.shape[-1], weights)
    disagree = np.einsum("...i,ij,...j->...", rows, w, cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _where_defined(1.0 - disagree / n**2, n > 0)


def cohen_kappa_values(tables: Any, weights: Weights = None) -> np.ndarray:
    """kappa = (A_o - A_e) / (1 - A_e) = 1 - n * sum(w * n_ij) / sum(w * r_i * c_j).

    NaN when n = 0 or the expected disagreement is 0 (A_e = 1). The exact-zero test is safe:
    the expected disagreement is a sum of non-negative products of counts.
    """
    t = as_tables(tables)
    n, rows, cols = _margins(t)
    w = disagreement_weights(t.shape[-1], weights)
    observed = np.einsum("...ij,ij->...", t, w)
    expected = np.einsum("...i,ij,...j->...", rows, w, cols)
    with np.errstate(divide="ignore", invalid="ignore"):
        return _where_defined(1.0 - n * observed / expected, expected > 0)


def _single_table(table: Any) -> np.ndarray:
    t = as_tables(table)
    if t.ndim != 2:
        raise ValueError(f"expected one k x k table, got shape {t.shape}; use the *_values form")
    return t


def observed_agreement(table: Any, weights: Weights = None) -> Stat:
    """Observed (optionally weighted) agreement A_o of a confusion matrix. Undefined: n = 0."""
    value = float(observed_agreement_values(_single_table(table), weights))
    return Stat.undefined(NO_ITEMS) if np.isnan(value) else Stat(value)


def expected_agreement(table: Any, weights: Weights = None) -> Stat:
    """Chance agreement A_e = sum_i r_i c_i / n^2 (weighted: see values form). Undefined: n = 0."""
    value = float(expected_agreement_values(_single_table(table), weights))
    return Stat.undefined(NO_ITEMS) if np.isnan(value) else Stat(value)


def cohen_kappa(table: Any, weights: Weights = None) -> Stat:
    """Cohen's kappa (unweighted, linear or quadratic weights) from a k x k confusion matrix.

    kappa = (A_o - A_e) / (1 - A_e). Weighted kappa needs the table in ordinal label order.
    Undefined: n = 0; A_e = 1 (both raters used the same single label, also k = 1).
    """
    t = _single_table(table)
    value = float(cohen_kappa_values(t, weights))
    if not np.isnan(value):
        return Stat(value)
    return Stat.undefined(NO_ITEMS if t.sum() == 0 else SINGLE_LABEL)


def gwet_ac1_values(tables: Any) -> np.ndarray:
    """Gwet's AC1 for two raters: (p_a - p_e) / (1 - p_e), vectorised over ``(..., q, q)``.

    p_a = trace / n; pi_k = (r_k + c_k) / (2n); p_e = sum_k pi_k (1 - pi_k) / (q - 1) with q the
    number of labels in the table (unused labels count). p_e <= 1/q < 1, so only n = 0 or q < 2
    are undefined (NaN).
    """
    t = as_tables(tables)
    q = t.shape[-1]
    n, rows, cols = _margins(t)
    if q < 2:
        return np.full(n.shape, np.nan)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_a = np.trace(t, axis1=-2, axis2=-1) / n
        pi = (rows + cols) / (2.0 * n[..., None])
        p_e = (pi * (1.0 - pi)).sum(axis=-1) / (q - 1)
        return _where_defined((p_a - p_e) / (1.0 - p_e), n > 0)


def gwet_ac1(table: Any) -> Stat:
    """Gwet's AC1 (p_a - p_e) / (1 - p_e) of a two-rater table, p_e from the mean margins.

    See ``gwet_ac1_values`` for the formula. Undefined: n = 0; fewer than 2 labels (q < 2).
    """
    t = _single_table(table)
    if t.shape[-1] < 2:
        return Stat.undefined("AC1 needs at least two categories in the label set")
    value = float(gwet_ac1_values(t))
    return Stat.undefined(NO_ITEMS) if np.isnan(value) else Stat(value)


def rating_counts(ratings: Any, labels: Sequence[Hashable]) -> np.ndarray:
    """Items x categories int64 counts from items x raters labels (ragged ok; None = missing)."""
    item, code, n_items = encode_rows(ratings, labels, what="ratings")
    q = len(labels)
    keep = code >= 0
    flat = np.bincount(item[keep] * q + code[keep], minlength=n_items * q)
    return flat.reshape(n_items, q).astype(np.int64)


def _as_counts(counts: Any) -> np.ndarray:
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 2:
        raise ValueError(f"expected an items x categories count matrix, got shape {c.shape}")
    if not np.isfinite(c).all() or (c < 0).any() or (c != np.round(c)).any():
        raise ValueError("rating counts must be non-negative integers")
    return c


def fleiss_kappa(counts: Any) -> Stat:
    """Fleiss' kappa from an items x categories count matrix (m raters per item).

    P_i = (sum_j n_ij^2 - m) / (m (m - 1)); P = mean_i P_i; p_j = sum_i n_ij / (N m);
    P_e = sum_j p_j^2; kappa = (P - P_e) / (1 - P_e). Items with no rating are dropped.
    Undefined: no rated item; items rated by different numbers of raters (Fleiss needs equal
    m; use Krippendorff's alpha or multi-rater AC1); m < 2; all ratings in one category (P_e = 1).
    """
    c = _as_counts(counts)
    c = c[c.sum(axis=1) > 0]
    if c.shape[0] == 0:
        return Stat.undefined("no rated items")
    m = c.sum(axis=1)
    if (m != m[0]).any():
        return Stat.undefined(
            f"raters per item differ ({int(m.min())} to {int(m.max())}): Fleiss' kappa needs the "
            "same number of ratings for every item"
        )
    m0 = m[0]
    if m0 < 2:
        return Stat.undefined("each item has a single rating: agreement needs at least two")
    col = c.sum(axis=0)
    if (col > 0).sum() < 2:
        return Stat.undefined("chance agreement is 1: every rating is in the same category")
    p_items = ((c**2).sum(axis=1) - m0) / (m0 * (m0 - 1))
    p_j = col / col.sum()
    p_e = float((p_j**2).sum())
    return Stat((float(p_items.mean()) - p_e) / (1.0 - p_e))


def fleiss_kappa_from_ratings(ratings: Any, labels: Sequence[Hashable]) -> Stat:
    """Fleiss' kappa from items x raters labels (None = missing); see ``fleiss_kappa``."""
    return fleiss_kappa(rating_counts(ratings, labels))


def gwet_ac1_multi(counts: Any) -> Stat:
    """Gwet's AC1 for any number of raters from an items x categories count matrix (q = columns).

    Over items with r_i >= 2 ratings: p_a = mean_i sum_k r_ik (r_ik - 1) / (r_i (r_i - 1));
    over items with r_i >= 1: pi_k = mean_i r_ik / r_i; p_e = sum_k pi_k (1 - pi_k) / (q - 1).
    Raters per item may differ (Gwet 2008). With two raters it equals ``gwet_ac1``.
    Undefined: q < 2; no item with two or more ratings.
    """
    c = _as_counts(counts)
    q = c.shape[1]
    if q < 2:
        return Stat.undefined("AC1 needs at least two categories in the label set")
    r = c.sum(axis=1)
    pairable = r >= 2
    if not pairable.any():
        return Stat.undefined("no item has two or more ratings")
    cp, rp = c[pairable], r[pairable]
    p_a = float(((cp * (cp - 1)).sum(axis=1) / (rp * (rp - 1))).mean())
    rated = r >= 1
    pi = (c[rated] / r[rated, None]).mean(axis=0)
    p_e = float((pi * (1 - pi)).sum() / (q - 1))
    return Stat((p_a - p_e) / (1 - p_e))


def gwet_ac1_from_ratings(ratings: Any, labels: Sequence[Hashable]) -> Stat:
    """Multi-rater Gwet's AC1 from items x raters labels (None = missing); q = len(labels)."""
    return gwet_ac1_multi(rating_counts(ratings, labels))
