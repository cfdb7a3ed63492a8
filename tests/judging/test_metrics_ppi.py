"""PPI++ mean estimator against ppi-python (the authors' package, test-only) to 1e-9, and the
interval's coverage on simulated judges."""

import numpy as np
import pytest
from ppi_py import classical_mean_ci, ppi_mean_ci, ppi_mean_pointestimate

from judging.metrics.ppi import classical_mean, power_tuned_lambda, ppi_mean

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def judged(seed, n, big_n, *, rate=0.6, sensitivity=0.9, false_pass=0.3, ordinal=False):
    """Human labels Y on n + N items and a judge's Yhat that passes `sensitivity` of the good
    and `false_pass` of the bad ones; the first n are the labelled ones."""
    rng = np.random.default_rng(seed)
    if ordinal:
        y = rng.integers(1, 6, size=n + big_n).astype(float)
        yhat = np.clip(y + rng.integers(-1, 2, size=y.size), 1, 5).astype(float)
    else:
        y = (rng.random(n + big_n) < rate).astype(float)
        yhat = np.where(y == 1, rng.random(y.size) < sensitivity, rng.random(y.size) < false_pass)
        yhat = yhat.astype(float)
    return y[:n], yhat[:n], yhat[n:], y


DATASETS = [
    pytest.param(1, 400, 2600, {}, id="400 of 3000, biased judge"),
    pytest.param(2, 30, 500, {"sensitivity": 0.99, "false_pass": 0.01}, id="good judge"),
    pytest.param(3, 50, 50, {"sensitivity": 0.5, "false_pass": 0.5}, id="useless judge"),
    pytest.param(4, 200, 5000, {"rate": 0.05}, id="rare passes"),
    pytest.param(5, 120, 900, {"ordinal": True}, id="ordinal 1-5"),
    pytest.param(6, 2, 3, {}, id="tiny"),
]


@pytest.mark.parametrize(("seed", "n", "big_n", "kw"), DATASETS)
@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_matches_ppi_python(seed, n, big_n, kw, alpha):
    y, yhat, yhat_u, _ = judged(seed, n, big_n, **kw)
    ours = ppi_mean(y, yhat, yhat_u, alpha=alpha)
    assert ours.ppi.value == pytest.approx(
        float(ppi_mean_pointestimate(y, yhat, yhat_u)[0]), abs=1e-9
    )
    low, high = ppi_mean_ci(y, yhat, yhat_u, alpha=alpha)
    assert ours.ppi.ci == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
    assert 0 <= ours.lam <= 1
    human = classical_mean(y, alpha=alpha)
    assert human.value == pytest.approx(y.mean(), abs=1e-12)
    assert human.ci == pytest.approx(classical_mean_ci(y, alpha=alpha), abs=1e-9)


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_fixed_lambda_matches_ppi_python(lam):
    y, yhat, yhat_u, _ = judged(7, 80, 700)
    ours = ppi_mean(y, yhat, yhat_u, alpha=0.05, lam=lam)
    low, high = ppi_mean_ci(y, yhat, yhat_u, alpha=0.05, lam=lam)
    assert ours.ppi.ci == pytest.approx((float(low[0]), float(high[0])), abs=1e-9)
    assert ours.lam == lam


def test_lambda_is_clipped_to_zero_for_an_anticorrelated_judge():
    y, _, _, _ = judged(8, 100, 400)
    rng = np.random.default_rng(8)
    yhat = 1 - y  # always wrong: lambda would be negative
    yhat_u = (rng.random(400) < 0.5).astype(float)
    assert power_tuned_lambda(y, yhat, yhat_u) == 0.0
    assert ppi_mean(y, yhat, yhat_u).ppi.value == pytest.approx(y.mean())


def test_lambda_is_clipped_to_one():
    y, _, _, truth = judged(9, 100, 2000)
    # a judge on half the scale: cov(Y, Yhat) is twice var(Yhat), lambda would be about 2
    assert power_tuned_lambda(y, y / 2, truth[100:] / 2) == 1.0


def test_a_perfect_judge_narrows_the_interval():
    y, _, _, truth = judged(9, 100, 2000)
    result = ppi_mean(y, y, truth[100:])
    assert result.lam > 0.9
    assert result.ppi.half_width < classical_mean(y).half_width / 3


def test_a_constant_judge_gives_lambda_zero_not_nan():
    y = np.array([1.0, 0.0, 1.0, 1.0])
    result = ppi_mean(y, np.ones(4), np.ones(10))
    assert result.lam == 0.0
    assert result.ppi.ci == pytest.approx(classical_mean(y).ci)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="2 labelled"):
        ppi_mean([1.0], [1.0], [0.0, 1.0])
    with pytest.raises(ValueError, match="3 human labels but 2"):
        ppi_mean([1, 0, 1], [1, 0], [0, 1])
    with pytest.raises(ValueError, match="finite"):
        ppi_mean([1, np.nan], [1, 0], [0, 1])
    with pytest.raises(ValueError, match="alpha"):
        ppi_mean([1, 0], [1, 0], [0, 1], alpha=1.5)


@pytest.mark.scale
def test_coverage_on_1000_seeded_datasets():
    """95% PPI intervals cover the true pass rate 93.5-96.5% of the time; the judge-only
    interval of a biased judge (passes 90% of good and 30% of bad answers) almost never does.
    The true rate is the rate of the process that produced the outputs (0.6); measured against
    the 3,000 items' own rate the interval is a little wider than needed (finite population)."""
    runs, ppi_covers, judge_covers, true_rate = 1000, 0, 0, 0.6
    for seed in range(runs):
        y, yhat, yhat_u, _ = judged(10_000 + seed, 300, 2700, rate=true_rate)
        ppi = ppi_mean(y, yhat, yhat_u, alpha=0.05).ppi
        judge = classical_mean(np.concatenate([yhat, yhat_u]), alpha=0.05)
        ppi_covers += ppi.ci[0] <= true_rate <= ppi.ci[1]
        judge_covers += judge.ci[0] <= true_rate <= judge.ci[1]
    assert 0.935 <= ppi_covers / runs <= 0.965
    assert judge_covers / runs < 0.05
