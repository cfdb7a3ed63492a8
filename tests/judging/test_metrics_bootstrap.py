"""Bootstrap CIs: reproducibility, coverage of the estimate, oracles, undefined resamples, speed."""

from statistics import NormalDist

import numpy as np
import pytest
from scipy.stats import bootstrap as scipy_bootstrap
from statsmodels.stats.inter_rater import cohens_kappa

from judging.metrics import (
    Stat,
    bootstrap_items,
    bootstrap_table,
    cohen_kappa,
    cohen_kappa_ci,
    cohen_kappa_values,
    confusion_matrix,
    gwet_ac1_ci,
    observed_agreement_values,
)

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def correlated_codes(n, seed, k=3, agree=0.7):
    rng = np.random.default_rng(seed)
    a = rng.choice(k, size=n, p=np.linspace(2, 1, k) / np.linspace(2, 1, k).sum())
    b = np.where(rng.random(n) < agree, a, rng.choice(k, size=n))
    return a, b


def table_of(a, b, k=3):
    return confusion_matrix(a.tolist(), b.tolist(), list(range(k)))


def kappa_from_codes(a, b, axis=-1, k=3):
    """Vectorised kappa of paired code arrays (scipy.stats.bootstrap calling convention)."""
    a, b = np.moveaxis(a, axis, -1), np.moveaxis(b, axis, -1)
    eye = np.eye(k)
    tables = np.einsum("...ni,...nj->...ij", eye[a], eye[b])
    return cohen_kappa_values(tables)


TABLE = table_of(*correlated_codes(400, seed=11))


def test_seeded_reproducibility():
    first = cohen_kappa_ci(TABLE, rng=123)
    assert cohen_kappa_ci(TABLE, rng=np.random.default_rng(123)) == first
    assert cohen_kappa_ci(TABLE, rng=124).percentile != first.percentile


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_ci_contains_point_estimate(weights):
    result = cohen_kappa_ci(TABLE, weights=weights, rng=5)
    point = cohen_kappa(TABLE, weights).value
    assert result.estimate.value == point
    for low, high in (result.percentile, result.bca):
        assert low < point < high
    assert result.estimate.ci == result.bca
    percentile_only = cohen_kappa_ci(TABLE, weights=weights, method="percentile", rng=5)
    assert percentile_only.estimate.ci == result.percentile
    ac1 = gwet_ac1_ci(TABLE, rng=5)
    assert ac1.ci[0] < ac1.estimate.value < ac1.ci[1]


def test_percentile_width_close_to_normal_approximation():
    se = cohens_kappa(TABLE).std_kappa  # large-sample standard error (Fleiss, Cohen, Everitt 1969)
    normal_width = 2 * NormalDist().inv_cdf(0.975) * se
    low, high = cohen_kappa_ci(TABLE, rng=7).percentile
    assert high - low == pytest.approx(normal_width, rel=0.12)


@pytest.mark.parametrize(("method", "scipy_method"), [("percentile", "percentile"), ("bca", "BCa")])
def test_matches_scipy_bootstrap_on_small_sample(method, scipy_method):
    a, b = correlated_codes(60, seed=3)
    ours = cohen_kappa_ci(table_of(a, b), method=method, n_resamples=4000, rng=1)
    theirs = scipy_bootstrap(
        (a, b),
        kappa_from_codes,
        paired=True,
        vectorized=True,
        n_resamples=4000,
        method=scipy_method,
        random_state=np.random.default_rng(2),
    ).confidence_interval
    assert ours.resamples_undefined == 0
    assert ours.ci[0] == pytest.approx(theirs.low, abs=0.04)
    assert ours.ci[1] == pytest.approx(theirs.high, abs=0.04)


class Recorder:
    """Wraps a vectorised statistic and keeps every batch of tables it was called with."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def __call__(self, tables):
        self.calls.append(np.array(tables))
        return self.fn(tables)


def test_bca_matches_textbook_formula_with_item_jackknife():
    a, b = correlated_codes(50, seed=9)
    table = table_of(a, b)
    recorder = Recorder(cohen_kappa_values)
    result = bootstrap_table(table, recorder, n_resamples=1000, rng=4, level=0.9)
    point_tables, draws, _ = recorder.calls
    np.testing.assert_array_equal(point_tables[0], table)
    assert draws.shape == (1000, 3, 3) and (draws.sum(axis=(1, 2)) == 50).all()
    theta = cohen_kappa(table).value
    boot = cohen_kappa_values(draws)
    # brute force: leave each of the 50 items out in turn
    jack = np.array([kappa_from_codes(np.delete(a, i), np.delete(b, i)) for i in range(50)])
    d = jack.mean() - jack
    accel = (d**3).sum() / (6 * ((d**2).sum()) ** 1.5)
    z0 = NormalDist().inv_cdf(((boot < theta).sum() + 0.5 * (boot == theta).sum()) / boot.size)
    ends = [
        NormalDist().cdf(z0 + (z0 + z) / (1 - accel * (z0 + z)))
        for z in (NormalDist().inv_cdf(0.05), NormalDist().inv_cdf(0.95))
    ]
    expected = np.quantile(boot, ends)
    assert result.bca == pytest.approx(tuple(expected), abs=1e-12)
    assert result.percentile == pytest.approx(tuple(np.quantile(boot, [0.05, 0.95])), abs=1e-12)


def test_undefined_resamples_are_dropped_and_counted():
    table = np.array([[30, 2], [1, 1]])  # a resample of only (0, 0) items has kappa undefined
    recorder = Recorder(cohen_kappa_values)
    result = bootstrap_table(table, recorder, n_resamples=4000, rng=0, estimate=cohen_kappa(table))
    draws = recorder.calls[0]
    expected_undefined = int(np.isnan(cohen_kappa_values(draws)).sum())
    assert result.resamples_undefined == expected_undefined > 0
    assert result.percentile is not None and result.bca is not None
    assert all(np.isfinite(result.percentile)) and all(np.isfinite(result.bca))
    assert result.as_dict()["resamples_undefined"] == expected_undefined


def test_bca_undefined_with_reason_when_jackknife_is_undefined():
    table = np.array([[18, 0], [0, 1]])  # dropping the single (1, 1) item leaves one label
    result = cohen_kappa_ci(table, rng=0)
    assert result.resamples_undefined > 0
    assert result.percentile == (1.0, 1.0)
    assert result.bca is None and "jackknife" in result.bca_undefined_reason
    assert result.estimate.ci is None and result.ci_undefined_reason == result.bca_undefined_reason
    assert cohen_kappa_ci(table, method="percentile", rng=0).estimate.ci == (1.0, 1.0)


def test_all_resamples_undefined():
    result = bootstrap_table(TABLE, lambda t: np.full(len(t), np.nan), estimate=Stat(0.5), rng=0)
    assert result.resamples_undefined == result.n_resamples == 2000
    assert result.estimate == Stat(0.5)
    assert result.percentile is None and result.bca is None
    assert result.ci_undefined_reason == "all 2000 bootstrap resamples were undefined"
    assert result.as_dict() == {
        "value": 0.5,
        "ci": None,
        "undefined_reason": None,
        "method": "bca",
        "level": 0.95,
        "n_resamples": 2000,
        "resamples_undefined": 2000,
        "ci_undefined_reason": "all 2000 bootstrap resamples were undefined",
    }


def test_undefined_point_estimate_gives_undefined_interval():
    result = cohen_kappa_ci(np.array([[5, 0], [0, 0]]), rng=0)
    assert not result.estimate.is_defined
    assert result.estimate.as_dict()["ci"] is None
    assert "point estimate undefined" in result.ci_undefined_reason
    assert "single label" in result.ci_undefined_reason
    empty = bootstrap_table(np.zeros((2, 2), dtype=int), observed_agreement_values, rng=0)
    assert not empty.estimate.is_defined and empty.percentile_undefined_reason


def test_item_bootstrap_agrees_with_table_bootstrap():
    a, b = correlated_codes(80, seed=21)
    table_result = cohen_kappa_ci(table_of(a, b), rng=0)

    def kappa_of_items(idx):
        return cohen_kappa(table_of(a[idx], b[idx]))

    item_result = bootstrap_items(80, kappa_of_items, n_resamples=1000, rng=0)
    assert item_result.estimate.value == table_result.estimate.value
    assert item_result.percentile == pytest.approx(table_result.percentile, abs=0.05)
    assert item_result.bca == pytest.approx(table_result.bca, abs=0.05)
    assert not bootstrap_items(0, kappa_of_items).estimate.is_defined


def test_validation():
    with pytest.raises(ValueError):
        cohen_kappa_ci(TABLE, level=1.5)
    with pytest.raises(ValueError):
        cohen_kappa_ci(TABLE, method="studentized")
    with pytest.raises(ValueError):
        bootstrap_table(np.array([[0.5, 1], [1, 1]]), cohen_kappa_values)


def test_constant_statistic_gives_a_point_interval_not_an_undefined_bca():
    # perfect agreement: every resample and every jackknife value is exactly 1.0
    table = np.diag([20, 15, 5])
    result = bootstrap_table(table, observed_agreement_values, rng=0)
    assert result.percentile == (1.0, 1.0) and result.bca == (1.0, 1.0)
    assert result.estimate.as_dict() == {"value": 1.0, "ci": [1.0, 1.0], "undefined_reason": None}


def test_bca_undefined_when_every_resample_is_on_one_side():
    result = bootstrap_table(TABLE, lambda t: np.ones(len(t)), estimate=Stat(0.0), rng=0)
    assert result.percentile == (1.0, 1.0)
    assert result.bca is None and "one side" in result.bca_undefined_reason
