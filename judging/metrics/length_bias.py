"""Length bias of a pass/fail judge: does it pass longer outputs more, at equal human verdict?

On the items with both a judge label and a final human label, fit by maximum likelihood

    logit P(judge passes) = a + b * (length / 1000) + c * human_passes

and report b (log-odds per 1,000 characters of output) with its two-sided Wald p-value. A
positive b with a small p-value: at the same human verdict, the judge passes longer outputs
more often. The binned table beside it gives judge-minus-human pass rate by length quintile.

Logistic regression is hand-written (Newton-Raphson = IRLS, a few lines of numpy) because the
site has no statistics library at run time; tests/judging/test_metrics_length_bias.py holds it
to statsmodels' ``sm.Logit`` to 1e-6. The normal tail uses ``math.erfc`` (no scipy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

MAX_ITER = 50
TOL = 1e-10
PER = 1000.0  # lengths are scaled to thousands of characters
MIN_ITEMS = 10
SEPARATED = "the fit did not converge (length and the human verdict separate the judge's labels)"


class LogitError(ValueError):
    """The fit has no finite maximum (separation) or no information (a constant column)."""


@dataclass(frozen=True, slots=True)
class LogitFit:
    params: np.ndarray
    bse: np.ndarray  # Wald standard errors, sqrt(diag(inverse Fisher information))
    z: np.ndarray
    pvalues: np.ndarray  # two-sided, normal


def two_sided_p(z: float) -> float:
    """P(|N(0,1)| > |z|) = erfc(|z| / sqrt 2)."""
    return math.erfc(abs(z) / math.sqrt(2.0))


def logit_fit(x: np.ndarray, y: np.ndarray) -> LogitFit:
    """Maximum-likelihood logistic regression of 0/1 ``y`` on design matrix ``x`` (include the
    intercept column yourself), by Newton-Raphson from zero. Raises LogitError when the
    information matrix is singular or the fit does not converge (perfect separation)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if np.linalg.matrix_rank(x) < x.shape[1]:
        raise LogitError("the model has no information (a constant or repeated column)")
    beta = np.zeros(x.shape[1])
    for _ in range(MAX_ITER):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        info = x.T @ (x * (p * (1.0 - p))[:, None])
        try:
            step = np.linalg.solve(info, x.T @ (y - p))
        except np.linalg.LinAlgError:  # the weights p(1 - p) underflowed: separation
            raise LogitError(SEPARATED) from None
        beta = beta + step
        if np.max(np.abs(step)) < TOL:
            break
    else:
        raise LogitError(SEPARATED)
    p = 1.0 / (1.0 + np.exp(-(x @ beta)))
    info = x.T @ (x * (p * (1.0 - p))[:, None])
    if np.linalg.cond(info) > 1e12:
        raise LogitError(SEPARATED)
    bse = np.sqrt(np.diag(np.linalg.inv(info)))
    z = beta / bse
    return LogitFit(beta, bse, z, np.array([two_sided_p(v) for v in z]))


def _quintiles(lengths: np.ndarray, judge: np.ndarray, human: np.ndarray) -> list[dict]:
    """Judge-minus-human pass rate per length quintile (rank-based, so ties never empty a bin)."""
    order = np.argsort(lengths, kind="stable")
    rows = []
    for chunk in np.array_split(order, 5):
        if len(chunk) == 0:
            continue
        rows.append(
            {
                "min_chars": int(lengths[chunk].min()),
                "max_chars": int(lengths[chunk].max()),
                "n": len(chunk),
                "judge_pass_rate": float(judge[chunk].mean()),
                "human_pass_rate": float(human[chunk].mean()),
                "difference": float(judge[chunk].mean() - human[chunk].mean()),
            }
        )
    return rows


def length_bias(
    lengths: Sequence[int], judge_pass: Sequence[bool], human_pass: Sequence[bool]
) -> dict:
    """``{"n", "slope_per_1000_chars", "se", "p_value", "quintiles", "undefined_reason"}`` for
    paired items (output length in characters, judge passes, human passes). Undefined (slope
    None, reason given) with fewer than MIN_ITEMS items, equal lengths, a judge that always or
    never passes, or separation; the quintile table is given whenever there are items."""
    n = len(lengths)
    if not n == len(judge_pass) == len(human_pass):
        raise ValueError(f"{n} lengths, {len(judge_pass)} judge and {len(human_pass)} human labels")
    length = np.asarray(lengths, dtype=float)
    judge = np.asarray(judge_pass, dtype=float)
    human = np.asarray(human_pass, dtype=float)
    result = {"n": n, "slope_per_1000_chars": None, "se": None, "p_value": None}
    result["quintiles"] = _quintiles(length, judge, human) if n else []
    reason = None
    if n < MIN_ITEMS:
        reason = f"fewer than {MIN_ITEMS} items with both a judge and a human label"
    elif np.ptp(length) == 0:
        reason = "every output has the same length"
    elif judge.min() == judge.max():
        reason = "the judge gave the same verdict on every item"
    if reason is None:
        # A human column with one value carries nothing: leave it out rather than fail.
        columns = [np.ones(n), length / PER] + ([human] if np.ptp(human) else [])
        try:
            fit = logit_fit(np.column_stack(columns), judge)
        except LogitError as error:
            reason = str(error)
        else:
            result |= {
                "slope_per_1000_chars": float(fit.params[1]),
                "se": float(fit.bse[1]),
                "p_value": float(fit.pvalues[1]),
            }
    result["undefined_reason"] = reason
    return result
