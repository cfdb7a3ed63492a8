"""Prediction-powered inference for a mean: a judge on every item, people on a random few.

PPI (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference", Science
382, 2023) corrects the mean of a model's predictions over all items by the mean error it makes
on the items people labelled; PPI++ (Angelopoulos, Duchi, Zrnic, "PPI++: Efficient
prediction-powered inference", arXiv:2311.01453, 2023) weighs the predictions by a power-tuned
lambda, so a poor judge costs no more than ignoring it (lambda 0 is the classical estimate).

The formulas are those of ``ppi_py.ppi_mean_pointestimate`` and ``ppi_py.ppi_mean_ci``
(ppi-python 0.2.3, unweighted, one coordinate, the default two-sided alternative), written
on numpy here because ppi-python pulls numba, scikit-learn and statsmodels into the site for
three lines of arithmetic; tests/judging/test_metrics_ppi.py holds them to it to 1e-9:

    theta(lam) = lam * mean(Yhat_unlabeled) + mean(Y - lam * Yhat)
    lam        = clip(2 cov(Y, Yhat) / (2 (1 + n/N) var(Yhat ∪ Yhat_unlabeled)), 0, 1)
    se(lam)    = sqrt(var(lam * Yhat_unlabeled) / N + var(Y - lam * Yhat) / n)
    ci         = theta -/+ z(1 - alpha/2) * se

where cov is the 1/n covariance around theta(1) (the plain PPI estimate, as ppi_py centres
its gradients), var(Yhat ∪ Yhat_unlabeled) is np.cov's (n + N - 1) variance of every
prediction, and the standard errors use numpy's default 1/n variance. One departure: when
every prediction is the same, ppi_py's lambda is 0/0 = NaN; here it is 0, the limit that
gives the same estimate and interval (a constant judge carries no information).

Valid only when the labelled items are a uniformly random sample of all the items: see
docs/estimates.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

_NORMAL = NormalDist()


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate and its two-sided confidence interval at level 1 - alpha."""

    value: float
    ci: tuple[float, float]

    @property
    def half_width(self) -> float:
        return (self.ci[1] - self.ci[0]) / 2

    def as_dict(self) -> dict:
        return {"value": self.value, "ci": [self.ci[0], self.ci[1]]}


@dataclass(frozen=True, slots=True)
class PPIResult:
    ppi: Interval
    lam: float


def z_critical(alpha: float) -> float:
    """The two-sided normal quantile z(1 - alpha/2)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    return _NORMAL.inv_cdf(1 - alpha / 2)


def _z_interval(value: float, std_error: float, alpha: float) -> Interval:
    half = z_critical(alpha) * std_error
    return Interval(float(value), (float(value - half), float(value + half)))


def _arrays(*arrays) -> list[np.ndarray]:
    out = [np.asarray(a, dtype=float).reshape(-1) for a in arrays]
    if any(not np.all(np.isfinite(a)) for a in out):
        raise ValueError("labels must be finite numbers")
    return out


def classical_mean(y, *, alpha: float = 0.05) -> Interval:
    """The CLT interval of a sample mean (``ppi_py.classical_mean_ci``: 1/n standard deviation)."""
    (y,) = _arrays(y)
    if y.size == 0:
        raise ValueError("no observations")
    return _z_interval(y.mean(), y.std() / math.sqrt(y.size), alpha)


def power_tuned_lambda(y, yhat, yhat_unlabeled) -> float:
    """PPI++'s lambda minimising the estimate's variance, clipped to [0, 1] (ppi_py's
    ``_calc_lam_glm`` for a mean: the Hessian is the identity)."""
    y, yhat, yhat_unlabeled = _arrays(y, yhat, yhat_unlabeled)
    n, big_n = y.size, yhat_unlabeled.size
    theta = yhat_unlabeled.mean() + (y - yhat).mean()  # plain PPI (lambda 1): ppi_py's centre
    grads, grads_hat = y - theta, yhat - theta
    cov = 2 * np.mean((grads - grads.mean()) * (grads_hat - grads_hat.mean()))
    var = np.var(np.concatenate([yhat, yhat_unlabeled]) - theta, ddof=1)
    if var == 0:
        return 0.0
    return float(np.clip(cov / (2 * (1 + n / big_n) * var), 0, 1))


def ppi_mean(
    y, yhat, yhat_unlabeled, *, alpha: float = 0.05, lam: float | None = None
) -> PPIResult:
    """PPI++ estimate of the mean of Y and its CLT interval.

    `y`, `yhat`: the people's and the judge's labels on the n labelled items (same order);
    `yhat_unlabeled`: the judge's labels on the N items nobody labelled. `lam` None tunes it.
    """
    y, yhat, yhat_unlabeled = _arrays(y, yhat, yhat_unlabeled)
    if y.size != yhat.size:
        raise ValueError(f"{y.size} human labels but {yhat.size} judge labels on them")
    if y.size < 2 or yhat_unlabeled.size < 1:
        raise ValueError("PPI needs at least 2 labelled items and 1 unlabelled item")
    if lam is None:
        lam = power_tuned_lambda(y, yhat, yhat_unlabeled)
    value = lam * yhat_unlabeled.mean() + (y - lam * yhat).mean()
    imputed_se = (lam * yhat_unlabeled).std() / math.sqrt(yhat_unlabeled.size)
    rectifier_se = (y - lam * yhat).std() / math.sqrt(y.size)
    return PPIResult(_z_interval(value, math.hypot(imputed_se, rectifier_se), alpha), float(lam))
