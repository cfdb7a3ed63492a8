"""pass@k: the unbiased estimator against a brute-force count over every k-subset."""

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.metrics.pass_at_k import pass_at_k, pass_at_k_figures

FAST = settings(max_examples=150, deadline=None, database=None)


@st.composite
def samples(draw):
    outcomes = draw(st.lists(st.booleans(), min_size=1, max_size=9))
    k = draw(st.integers(1, len(outcomes)))
    return outcomes, k


@FAST
@given(samples())
def test_estimator_is_the_share_of_k_subsets_with_a_pass(data):
    outcomes, k = data
    subsets = list(itertools.combinations(outcomes, k))
    brute = sum(any(subset) for subset in subsets) / len(subsets)
    assert pass_at_k(len(outcomes), sum(outcomes), k) == pytest.approx(brute, abs=1e-12)


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [(10, 0, 5, 0.0), (10, 10, 1, 1.0), (10, 3, 1, 0.3), (5, 1, 2, 0.4), (4, 2, 3, 1.0)],
)
def test_hand_computed_values(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 4, 1), (3, 1, 0), (3, 1, 4)])
def test_impossible_counts_are_refused(n, c, k):
    with pytest.raises(ValueError, match="pass@k needs"):
        pass_at_k(n, c, k)


def test_cases_with_fewer_samples_than_the_largest_k_are_left_out_and_counted():
    figures = pass_at_k_figures([(5, 1), (5, 0), (2, 2)], [1, 3], n_resamples=200)
    assert (figures["cases"], figures["excluded_cases"]) == (2, 1)
    assert figures["pass_at_k"]["1"]["value"] == pytest.approx((0.2 + 0.0) / 2)
    assert figures["pass_at_k"]["3"]["value"] == pytest.approx((0.6 + 0.0) / 2)
    low, high = figures["pass_at_k"]["3"]["ci"]
    assert low <= 0.3 <= high
    # the idealised figure from p = pass@1 = 0.1, labelled apart
    assert figures["idealised"]["3"] == {"value": pytest.approx(1 - 0.9**3), "p": 0.1}


def test_no_case_with_enough_samples_is_undefined_with_the_reason():
    figures = pass_at_k_figures([(2, 1)], [5])
    assert figures["pass_at_k"]["5"]["value"] is None
    assert (
        figures["pass_at_k"]["5"]["undefined_reason"] == "no case has at least 5 labelled samples"
    )
    assert figures["idealised"]["5"]["value"] is None
    assert math.isclose(pass_at_k_figures([(3, 3)], [2])["pass_at_k"]["2"]["value"], 1.0)
