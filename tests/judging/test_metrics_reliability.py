"""Krippendorff's alpha against the published example and the `krippendorff` package."""

import warnings

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.metrics import krippendorff_alpha

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
FAST = settings(max_examples=60, deadline=None, database=None)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 coders x 12
# units, values 1..5, missing values. Published: nominal 0.743, ordinal 0.815, interval 0.849.
K2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]
PUBLISHED = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849}


def as_nan(data):
    return np.array([[np.nan if v is None else v for v in row] for row in data], dtype=float)


def package_alpha(data, level, domain=None):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return float(
            krippendorff.alpha(as_nan(data), value_domain=domain, level_of_measurement=level)
        )


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_2011_published_example(level):
    ours = krippendorff_alpha(K2011, level=level)
    assert ours.value == pytest.approx(PUBLISHED[level], abs=5e-4)
    assert ours.value == pytest.approx(package_alpha(K2011, level), abs=1e-12)


def test_ratio_level_matches_package():
    assert krippendorff_alpha(K2011, level="ratio").value == pytest.approx(
        package_alpha(K2011, "ratio"), abs=1e-12
    )


def test_string_values_need_an_order_for_ordinal():
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    words = [[None if v is None else names[v] for v in row] for row in K2011]
    order = list(names.values())
    assert krippendorff_alpha(words, level="nominal").value == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(words, level="ordinal", values=order).value == pytest.approx(
        krippendorff_alpha(K2011, level="ordinal").value, abs=1e-12
    )
    with pytest.raises(ValueError, match="values="):
        krippendorff_alpha(words, level="ordinal")
    with pytest.raises(ValueError, match="numeric"):
        krippendorff_alpha(words, level="interval", values=order)


def test_nan_in_float_array_is_missing():
    assert krippendorff_alpha(as_nan(K2011), level="interval").value == pytest.approx(
        krippendorff_alpha(K2011, level="interval").value, abs=1e-12
    )


@st.composite
def reliability_data(draw):
    coders = draw(st.integers(2, 4))
    units = draw(st.integers(1, 12))
    cell = st.one_of(st.none(), st.integers(1, 4))
    return [draw(st.lists(cell, min_size=units, max_size=units)) for _ in range(coders)]


@FAST
@given(reliability_data(), st.sampled_from(["nominal", "ordinal", "interval", "ratio"]))
def test_matches_package_with_missing_data(data, level):
    domain = [1, 2, 3, 4]
    ours = krippendorff_alpha(data, level=level, values=domain)
    pairable = any(sum(row[u] is not None for row in data) >= 2 for u in range(len(data[0])))
    if not pairable:  # the package raises here
        assert not ours.is_defined and "two or more coders" in ours.undefined_reason
        return
    expected = package_alpha(data, level, domain)
    if np.isnan(expected):  # 0/0: a single value among the pairable values
        assert not ours.is_defined and "expected disagreement is 0" in ours.undefined_reason
    else:
        assert ours.value == pytest.approx(expected, abs=1e-9)
        # default domain (distinct observed values) agrees with the package's default too
        if len({v for row in data for v in row if v is not None}) > 1:
            assert krippendorff_alpha(data, level=level).value == pytest.approx(
                package_alpha(data, level), abs=1e-9
            )


def test_undefined_cases():
    no_pairs = krippendorff_alpha([[1, None], [None, 2]])
    assert not no_pairs.is_defined and no_pairs.undefined_reason
    one_value = krippendorff_alpha([[3, 3, 3], [3, 3, None]], level="interval")
    assert "expected disagreement is 0" in one_value.undefined_reason
    assert not krippendorff_alpha([[], []]).is_defined


def test_input_validation():
    with pytest.raises(ValueError, match="coders x units"):
        krippendorff_alpha([[1, 2], [1]])
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(K2011, level="cardinal")
    with pytest.raises(ValueError, match="not in the label order"):
        krippendorff_alpha(K2011, level="ordinal", values=[1, 2, 3])
