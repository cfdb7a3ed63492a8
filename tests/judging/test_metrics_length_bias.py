"""The length-bias logistic fit against statsmodels' Logit (test-only oracle), and its edges."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from judging.metrics.length_bias import LogitError, length_bias, logit_fit, two_sided_p


def _data(seed: int, n: int, slope: float):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(50, 4000, size=n)
    human = rng.random(n) < 0.6
    logit = -1.0 + slope * lengths / 1000 + 2.0 * human
    judge = rng.random(n) < 1 / (1 + np.exp(-logit))
    return lengths, judge, human


@pytest.mark.parametrize(("seed", "n", "slope"), [(1, 60, 0.0), (2, 200, 0.8), (3, 500, -0.3)])
def test_matches_statsmodels_logit(seed, n, slope):
    lengths, judge, human = _data(seed, n, slope)
    x = np.column_stack([np.ones(n), lengths / 1000, human.astype(float)])
    oracle = sm.Logit(judge.astype(float), x).fit(disp=0, tol=1e-12, maxiter=100)
    fit = logit_fit(x, judge)
    np.testing.assert_allclose(fit.params, oracle.params, atol=1e-6)
    np.testing.assert_allclose(fit.bse, oracle.bse, atol=1e-6)
    np.testing.assert_allclose(fit.pvalues, oracle.pvalues, atol=1e-6)
    result = length_bias(lengths.tolist(), judge.tolist(), human.tolist())
    assert result["n"] == n
    assert result["slope_per_1000_chars"] == pytest.approx(oracle.params[1], abs=1e-6)
    assert result["p_value"] == pytest.approx(oracle.pvalues[1], abs=1e-6)
    assert result["undefined_reason"] is None


def test_a_strong_length_bias_is_found_and_none_is_not():
    lengths, judge, human = _data(4, 400, 1.5)
    assert length_bias(lengths, judge, human)["p_value"] < 1e-6
    lengths, judge, human = _data(5, 400, 0.0)
    assert length_bias(lengths, judge, human)["p_value"] > 0.01


def test_quintiles_give_judge_minus_human_by_length():
    lengths = list(range(100, 1100, 100))  # 10 items, 2 per quintile
    judge = [False, False, True, False, True, True, True, True, True, True]
    human = [False, True, False, True, False, True, True, False, True, False]
    rows = length_bias(lengths, judge, human)["quintiles"]
    assert [(r["min_chars"], r["max_chars"], r["n"]) for r in rows] == [
        (100, 200, 2),
        (300, 400, 2),
        (500, 600, 2),
        (700, 800, 2),
        (900, 1000, 2),
    ]
    assert [r["difference"] for r in rows] == [-0.5, 0.0, 0.5, 0.5, 0.5]


@pytest.mark.parametrize(
    ("lengths", "judge", "reason"),
    [
        ([100] * 5, [True, False] * 2 + [True], "fewer than 10 items"),
        ([100] * 12, [True, False] * 6, "same length"),
        (list(range(12)), [True] * 12, "same verdict on every item"),
        (list(range(12)), [False] * 6 + [True] * 6, "separate the judge"),
    ],
)
def test_undefined_with_a_reason(lengths, judge, reason):
    result = length_bias(lengths, judge, [True] * len(lengths))
    assert result["slope_per_1000_chars"] is None
    assert reason in result["undefined_reason"]


def test_refuses_mismatched_lengths_and_singular_designs():
    with pytest.raises(ValueError, match="3 lengths, 2 judge"):
        length_bias([1, 2, 3], [True, False], [True, True, False])
    with pytest.raises(LogitError, match="no information"):
        logit_fit(np.ones((10, 2)), np.array([0, 1] * 5))


def test_two_sided_p():
    assert two_sided_p(0.0) == 1.0
    assert two_sided_p(1.959963984540054) == pytest.approx(0.05, abs=1e-12)
