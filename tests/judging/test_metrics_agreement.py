"""Confusion matrix, Cohen's kappa, Fleiss' kappa, Gwet's AC1 against oracles and published data."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from judging.metrics import (
    SINGLE_LABEL,
    Stat,
    cohen_kappa,
    cohen_kappa_values,
    confusion_matrix,
    expected_agreement,
    fleiss_kappa,
    fleiss_kappa_from_ratings,
    gwet_ac1,
    gwet_ac1_from_ratings,
    gwet_ac1_multi,
    gwet_ac1_values,
    observed_agreement,
    rating_counts,
)

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
FAST = settings(
    max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
LABELS = ["fail", "partial", "pass", "n/a"]


@st.composite
def label_pairs(draw, min_size=1, max_size=40):
    k = draw(st.integers(1, len(LABELS)))
    labels = LABELS[:k]
    n = draw(st.integers(min_size, max_size))
    a = draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    b = draw(st.lists(st.sampled_from(labels), min_size=n, max_size=n))
    return labels, a, b


def oracle(fn, *args, **kwargs):
    """Call an oracle silencing its own 'undefined' warnings; returns a float (maybe NaN)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return float(fn(*args, **kwargs))


# -- confusion matrix ------------------------------------------------------------------------


@pytest.mark.filterwarnings("ignore:A single label was found:UserWarning")
@FAST
@given(label_pairs())
def test_confusion_matrix_matches_sklearn(data):
    labels, a, b = data
    ours = confusion_matrix(a, b, labels)
    assert ours.dtype == np.int64
    np.testing.assert_array_equal(ours, sk_confusion_matrix(a, b, labels=labels))


def test_confusion_matrix_rows_are_first_rater_and_order_is_explicit():
    table = confusion_matrix(["x", "x", "y"], ["y", "y", "y"], ["y", "x"])
    np.testing.assert_array_equal(table, [[1, 0], [2, 0]])


def test_confusion_matrix_skips_missing_and_rejects_unknown_labels():
    table = confusion_matrix(["a", None, "b", "a"], ["a", "b", None, "b"], ["a", "b"])
    np.testing.assert_array_equal(table, [[1, 1], [0, 0]])
    with pytest.raises(ValueError, match="not in the label order"):
        confusion_matrix(["a", "zzz"], ["a", "a"], ["a", "b"])
    with pytest.raises(ValueError, match="ratings"):
        confusion_matrix(["a"], ["a", "b"], ["a", "b"])


def test_confusion_matrix_numpy_fast_path_equals_list_path():
    rng = np.random.default_rng(3)
    a = rng.choice(np.array(["u", "v", "w"]), 500)
    b = rng.choice(np.array(["u", "v", "w"]), 500)
    np.testing.assert_array_equal(
        confusion_matrix(a, b, ["w", "v", "u"]),
        confusion_matrix(a.tolist(), b.tolist(), ["w", "v", "u"]),
    )
    with pytest.raises(ValueError, match="not in the label order"):
        confusion_matrix(a, b, ["u", "v"])


# -- Cohen's kappa ---------------------------------------------------------------------------


def test_book_worked_example_kappa():
    # A_o = 0.84, A_e = 0.68 -> kappa = (0.84 - 0.68) / (1 - 0.68) = 0.50 (n = 100, 80/20 margins).
    table = np.array([[72, 8], [8, 12]])
    assert observed_agreement(table).value == pytest.approx(0.84)
    assert expected_agreement(table).value == pytest.approx(0.68)
    assert cohen_kappa(table).value == pytest.approx(0.50)


@FAST
@given(label_pairs(), st.sampled_from([None, "linear", "quadratic"]))
def test_cohen_kappa_matches_sklearn(data, weights):
    labels, a, b = data
    expected = oracle(cohen_kappa_score, a, b, labels=labels, weights=weights)
    ours = cohen_kappa(confusion_matrix(a, b, labels), weights)
    if np.isnan(expected):
        assert not ours.is_defined and ours.undefined_reason
    else:
        assert ours.value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("wt", ["linear", "quadratic"])
def test_weighted_kappa_matches_statsmodels(wt):
    table = np.array([[20, 5, 1, 0], [4, 15, 6, 2], [1, 3, 18, 4], [0, 1, 5, 11]])
    expected = cohens_kappa(table, wt=wt, return_results=False)
    assert cohen_kappa(table, wt).value == pytest.approx(expected, abs=1e-12)
    # SAS reference (statsmodels test-suite): table10 unweighted kappa 0.4842
    assert cohen_kappa([[0, 4, 1], [0, 8, 0], [0, 1, 5]]).value == pytest.approx(0.4842, abs=5e-5)


def test_kappa_vectorised_equals_per_table():
    rng = np.random.default_rng(0)
    tables = rng.integers(0, 30, size=(50, 3, 3))
    tables[7] = [[5, 0, 0], [0, 0, 0], [0, 0, 0]]  # undefined (single label)
    for weights in (None, "linear", "quadratic"):
        values = cohen_kappa_values(tables, weights)
        assert values.shape == (50,)
        for table, value in zip(tables, values, strict=True):
            single = cohen_kappa(table, weights)
            assert (single.value is None) == np.isnan(value)
            if single.is_defined:
                assert single.value == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_undefined_cases_have_reasons(weights):
    empty = cohen_kappa(np.zeros((3, 3)), weights)
    assert not empty.is_defined and "n = 0" in empty.undefined_reason
    single = cohen_kappa(confusion_matrix(["pass"] * 5, ["pass"] * 5, ["pass", "fail"]), weights)
    assert single.undefined_reason == SINGLE_LABEL
    one_label = cohen_kappa([[4]], weights)
    assert one_label.undefined_reason == SINGLE_LABEL
    assert not observed_agreement(np.zeros((2, 2))).is_defined
    assert expected_agreement(np.zeros((2, 2))).undefined_reason


def test_kappa_defined_when_raters_use_different_single_labels():
    # A_e = 0 (not 1): kappa is defined and equals 0.
    assert cohen_kappa([[0, 5], [0, 0]]).value == pytest.approx(0.0)


def test_table_validation():
    with pytest.raises(ValueError):
        cohen_kappa([[1, 2, 3]])
    with pytest.raises(ValueError):
        cohen_kappa([[1, -1], [0, 2]])
    with pytest.raises(ValueError):
        cohen_kappa([[1, 2], [3, 4]], "cubic")


# -- Fleiss' kappa ---------------------------------------------------------------------------

# Wikipedia "Fleiss' kappa" worked example: 10 subjects x 5 categories, 14 raters -> 0.210.
WIKIPEDIA_TABLE = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)

# Fleiss (1971), psychiatric diagnoses: 30 subjects x 6 raters, 5 categories (as shipped in R's
# irr::diagnoses and statsmodels' test-suite); published kappa 0.430.
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4],
        [2, 2, 2, 5, 5, 5],
        [2, 3, 3, 3, 3, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4],
        [1, 1, 3, 3, 3, 3],
        [3, 3, 3, 3, 5, 5],
        [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4],
        [5, 5, 5, 5, 5, 5],
        [1, 4, 4, 4, 4, 4],
        [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3],
        [1, 4, 4, 4, 4, 4],
        [2, 2, 4, 4, 4, 5],
        [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5],
        [1, 1, 1, 1, 1, 2],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5],
        [2, 4, 4, 4, 4, 4],
        [2, 2, 4, 5, 5, 5],
        [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5],
        [2, 2, 2, 2, 2, 4],
        [1, 1, 1, 1, 5, 5],
        [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3],
        [5, 5, 5, 5, 5, 5],
    ]
)


def test_fleiss_wikipedia_worked_example():
    assert fleiss_kappa(WIKIPEDIA_TABLE).value == pytest.approx(0.210, abs=5e-4)


def test_fleiss_1971_diagnoses():
    kappa = fleiss_kappa_from_ratings(FLEISS_1971, [1, 2, 3, 4, 5])
    assert kappa.value == pytest.approx(0.430, abs=5e-4)
    assert kappa.value == pytest.approx(
        sm_fleiss_kappa(aggregate_raters(FLEISS_1971)[0]), abs=1e-12
    )


@FAST
@given(st.integers(1, 12), st.integers(2, 6), st.integers(2, 4), st.data())
def test_fleiss_matches_statsmodels(n_items, n_raters, q, data):
    ratings = np.array(
        data.draw(
            st.lists(
                st.lists(st.integers(0, q - 1), min_size=n_raters, max_size=n_raters),
                min_size=n_items,
                max_size=n_items,
            )
        )
    )
    counts = aggregate_raters(ratings, n_cat=q)[0]
    np.testing.assert_array_equal(rating_counts(ratings, list(range(q))), counts)
    expected = oracle(sm_fleiss_kappa, counts)
    ours = fleiss_kappa(counts)
    if np.isnan(expected):
        assert not ours.is_defined and ours.undefined_reason
    else:
        assert ours.value == pytest.approx(expected, abs=1e-10)


def test_fleiss_undefined_cases():
    unequal = fleiss_kappa_from_ratings([["a", "a", "b"], ["a", None, "b"]], ["a", "b"])
    assert not unequal.is_defined and "same number of ratings" in unequal.undefined_reason
    assert "same category" in fleiss_kappa([[3, 0], [3, 0]]).undefined_reason
    assert "single rating" in fleiss_kappa([[1, 0], [0, 1]]).undefined_reason
    assert fleiss_kappa(np.zeros((0, 3))).undefined_reason == "no rated items"
    # Items nobody rated are dropped, not counted as disagreement.
    assert fleiss_kappa([[2, 0], [0, 0], [0, 2]]).value == pytest.approx(1.0)


# -- Gwet's AC1 ------------------------------------------------------------------------------


def ac1_direct(table):
    """AC1 by Gwet (2008) written out for a 2x2 table, independent of the implementation."""
    (a, b), (c, d) = table
    n = a + b + c + d
    pa = (a + d) / n
    p1 = ((a + b) + (a + c)) / (2 * n)
    pe = 2 * p1 * (1 - p1)
    return (pa - pe) / (1 - pe)


def test_ac1_prevalence_paradox():
    # 125 items, 94.4% raw agreement, one dominant category: kappa < 0 while AC1 ~ 0.94.
    table = np.array([[118, 5], [2, 0]])
    kappa, ac1 = cohen_kappa(table).value, gwet_ac1(table).value
    # hand computation: A_o = 118/125 = 0.944, A_e = (123*120 + 2*5)/125^2 = 0.94528
    assert kappa == pytest.approx((0.944 - 0.94528) / (1 - 0.94528), abs=1e-12)
    assert kappa == pytest.approx(-0.0234, abs=5e-5)
    assert ac1 == pytest.approx(ac1_direct(table), abs=1e-12)
    # hand computation: pa = 118/125 = 0.944, pi = 243/250 = 0.972, pe = 2*0.972*0.028 = 0.054432
    assert ac1 == pytest.approx((0.944 - 0.054432) / (1 - 0.054432), abs=1e-12)
    assert ac1 > 0.9


@FAST
@given(st.lists(st.integers(0, 40), min_size=4, max_size=4))
def test_ac1_two_by_two_matches_direct_formula(cells):
    assume(sum(cells) > 0)
    table = np.array(cells).reshape(2, 2)
    assert gwet_ac1(table).value == pytest.approx(ac1_direct(table), abs=1e-12)
    assert gwet_ac1_values(table) == pytest.approx(ac1_direct(table), abs=1e-12)


@FAST
@given(label_pairs(min_size=1))
def test_multi_rater_ac1_reduces_to_two_rater_ac1(data):
    labels, a, b = data
    two = gwet_ac1(confusion_matrix(a, b, labels))
    multi = gwet_ac1_from_ratings(list(zip(a, b, strict=True)), labels)
    assert two.is_defined == multi.is_defined
    if two.is_defined:
        assert multi.value == pytest.approx(two.value, abs=1e-12)


def test_multi_rater_ac1_with_missing_ratings_by_hand():
    # Items: [a,a,a] [a,b,None] [b,b,None] [a,None,None] (single rating: not pairable).
    ratings = [["a", "a", "a"], ["a", "b", None], ["b", "b", None], ["a", None, None]]
    pa = (1 + 0 + 1) / 3
    pi_a = (1 + 0.5 + 0 + 1) / 4
    pe = (pi_a * (1 - pi_a) + (1 - pi_a) * pi_a) / 1
    assert gwet_ac1_from_ratings(ratings, ["a", "b"]).value == pytest.approx((pa - pe) / (1 - pe))


def test_ac1_undefined_cases():
    assert "n = 0" in gwet_ac1(np.zeros((2, 2))).undefined_reason
    assert "two categories" in gwet_ac1([[5]]).undefined_reason
    assert "two or more" in gwet_ac1_multi([[1, 0], [0, 1]]).undefined_reason
    assert gwet_ac1_multi([[3]]).undefined_reason


def test_results_are_stats():
    assert isinstance(cohen_kappa([[1, 0], [0, 1]]), Stat)
    assert isinstance(fleiss_kappa([[1, 1], [2, 0]]), Stat)
