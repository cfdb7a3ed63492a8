"""Expected calibration error and its reliability table."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.metrics import expected_calibration_error

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
FAST = settings(max_examples=60, deadline=None, database=None)


def test_hand_computed_example():
    confidences = [0.9, 0.9, 0.8, 0.3, 0.2, 1.0]
    correct = [True, False, True, False, False, True]
    report = expected_calibration_error(confidences, correct, n_bins=5)
    # bins of width 0.2: [0.2,0.4): 0.3, 0.2 -> conf 0.25, acc 0
    #                    [0.8,1.0]: 0.9 0.9 0.8 1.0 -> conf 0.9, acc 0.75
    low_bin, high_bin = report.bins[1], report.bins[4]
    assert (low_bin.count, low_bin.mean_confidence, low_bin.accuracy) == (
        2,
        pytest.approx(0.25),
        0.0,
    )
    assert (high_bin.count, high_bin.mean_confidence, high_bin.accuracy) == (
        4,
        pytest.approx(0.9),
        0.75,
    )
    assert high_bin.gap == pytest.approx(-0.15)
    assert (
        report.bins[0].count == 0 and report.bins[0].accuracy is None and report.bins[0].gap is None
    )
    assert report.ece.value == pytest.approx(2 / 6 * 0.25 + 4 / 6 * 0.15)
    assert report.max_calibration_error.value == pytest.approx(0.25)
    assert report.n == 6
    assert [(b.low, b.high) for b in report.bins][:2] == [(0.0, 0.2), (0.2, 0.4)]


def brute_force_ece(confidences, correct, n_bins):
    total = 0.0
    for b in range(n_bins):
        low, high = b / n_bins, (b + 1) / n_bins
        members = [
            (c, k)
            for c, k in zip(confidences, correct, strict=True)
            if low <= c < high or (b == n_bins - 1 and c == 1.0)
        ]
        if members:
            conf = sum(c for c, _ in members) / len(members)
            acc = sum(k for _, k in members) / len(members)
            total += len(members) / len(confidences) * abs(acc - conf)
    return total


@FAST
@given(
    st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=50), st.integers(1, 15)
)
def test_matches_brute_force(items, n_bins):
    # keep away from bin edges, where float rounding of b / n_bins decides the bin
    items = [
        (c, k)
        for c, k in items
        if min(abs(c * n_bins - round(c * n_bins)), 1) > 1e-9 or c in (0, 1)
    ]
    if not items:
        return
    confidences, correct = zip(*items, strict=True)
    report = expected_calibration_error(list(confidences), list(correct), n_bins=n_bins)
    assert report.ece.value == pytest.approx(
        brute_force_ece(confidences, correct, n_bins), abs=1e-12
    )
    assert sum(b.count for b in report.bins) == len(items)


def test_perfectly_calibrated_is_zero_and_missing_is_dropped():
    report = expected_calibration_error(
        np.array([0.25] * 4 + [0.75] * 4), np.array([1, 0, 0, 0, 1, 1, 1, 0]), n_bins=4
    )
    assert report.ece.value == pytest.approx(0.0)
    with_missing = expected_calibration_error([0.25, None, 0.75], [True, True, None])
    assert with_missing.n == 1


def test_undefined_and_validation():
    empty = expected_calibration_error([], [])
    assert not empty.ece.is_defined and empty.ece.undefined_reason
    assert not empty.max_calibration_error.is_defined
    assert len(empty.bins) == 10
    assert not expected_calibration_error([None], [True]).ece.is_defined
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        expected_calibration_error([1.5], [True])
    with pytest.raises(ValueError, match="NaN"):
        expected_calibration_error([float("nan")], [True])
    with pytest.raises(ValueError, match="booleans"):
        expected_calibration_error([0.5], [2])
    with pytest.raises(ValueError):
        expected_calibration_error([0.5, 0.6], [True])
