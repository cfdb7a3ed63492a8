"""Per-class and averaged precision / recall / F1 and accuracy against scikit-learn."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, precision_recall_fscore_support

from judging.metrics import (
    accuracy,
    accuracy_values,
    classification_report,
    confusion_matrix,
    macro_f1_values,
    precision_recall_f1,
)

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")
FAST = settings(max_examples=50, deadline=None, database=None)
LABELS = ["pass", "fail", "partial", "unsure"]


@st.composite
def judged(draw):
    k = draw(st.integers(1, len(LABELS)))
    n = draw(st.integers(1, 30))
    # labels may be left unused by either side: that is where metrics become undefined
    reference = draw(st.lists(st.sampled_from(LABELS[:k]), min_size=n, max_size=n))
    predicted = draw(st.lists(st.sampled_from(LABELS[:k]), min_size=n, max_size=n))
    return LABELS[:k], reference, predicted


def sklearn_prfs(reference, predicted, labels, average):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return precision_recall_fscore_support(
            reference, predicted, labels=labels, average=average, zero_division=np.nan
        )


def assert_matches(stat, expected):
    if np.isnan(expected):
        assert not stat.is_defined and stat.undefined_reason
    else:
        assert stat.value == pytest.approx(expected, abs=1e-12)


def test_book_worked_example():
    # 8 TP, 2 FP, 4 FN -> precision 0.80, recall 0.67, F1 0.73
    precision, recall, f1 = precision_recall_f1(tp=8, fp=2, fn=4)
    assert precision.value == pytest.approx(0.80)
    assert recall.value == pytest.approx(0.667, abs=5e-4)
    assert f1.value == pytest.approx(0.727, abs=5e-4)
    table = confusion_matrix(
        ["y"] * 12 + ["n"] * 8, ["y"] * 8 + ["n"] * 4 + ["y"] * 2 + ["n"] * 6, ["y", "n"]
    )
    scores = classification_report(table, ["y", "n"]).by_label()["y"]
    assert (scores.precision.value, scores.support) == (pytest.approx(0.8), 12)
    assert scores.f1.value == pytest.approx(16 / 22)


@FAST
@given(judged())
def test_per_class_and_averages_match_sklearn_zero_division_nan(data):
    labels, reference, predicted = data
    report = classification_report(confusion_matrix(reference, predicted, labels), labels)
    precision, recall, f1, support = sklearn_prfs(reference, predicted, labels, None)
    for i, scores in enumerate(report.per_class):
        assert scores.label == labels[i]
        assert scores.support == support[i]
        assert_matches(scores.precision, precision[i])
        assert_matches(scores.recall, recall[i])
        assert_matches(scores.f1, f1[i])
    for name in ("macro", "micro"):
        expected = sklearn_prfs(reference, predicted, labels, name)[:3]
        averaged = getattr(report, name)
        for stat, value in zip(
            (averaged.precision, averaged.recall, averaged.f1), expected, strict=True
        ):
            assert_matches(stat, value)
    expected = sklearn_prfs(reference, predicted, labels, "weighted")[:3]
    arrays = (precision, recall, f1)
    weighted = (report.weighted.precision, report.weighted.recall, report.weighted.f1)
    for stat, value, per_class in zip(weighted, expected, arrays, strict=True):
        defined_support = support[~np.isnan(per_class)].sum()
        if defined_support == 0 and not np.isnan(value):
            # documented difference: sklearn falls back to an unweighted mean here
            assert not stat.is_defined and "support 0" in stat.undefined_reason
        else:
            assert_matches(stat, value)
    assert report.accuracy.value == pytest.approx(accuracy_score(reference, predicted), abs=1e-12)
    assert float(macro_f1_values(confusion_matrix(reference, predicted, labels))) == pytest.approx(
        report.macro.f1.value, abs=1e-12
    )


def test_no_predicted_positives_is_undefined_not_zero():
    table = confusion_matrix(["a", "b", "b"], ["b", "b", "b"], ["a", "b"])
    report = classification_report(table, ["a", "b"])
    a = report.by_label()["a"]
    assert a.precision.value is None
    assert "never predicted" in a.precision.undefined_reason
    assert a.recall.value == 0.0
    assert a.f1.value == 0.0  # 2tp / (2tp + fp + fn) = 0 / 1
    # macro precision averages the defined classes only: class b -> 2/3
    assert report.macro.precision.value == pytest.approx(2 / 3)


def test_undefined_when_empty():
    report = classification_report(np.zeros((2, 2)), ["a", "b"])
    for stat in (
        report.accuracy,
        report.macro.precision,
        report.macro.f1,
        report.micro.recall,
        report.weighted.recall,
        *(s.precision for s in report.per_class),
    ):
        assert not stat.is_defined and stat.undefined_reason
    assert "absent" in report.per_class[0].f1.undefined_reason
    assert not accuracy(np.zeros((3, 3))).is_defined
    assert np.isnan(accuracy_values(np.zeros((2, 2, 2)))).all()
    p, r, f = precision_recall_f1(0, 0, 0)
    assert not (p.is_defined or r.is_defined or f.is_defined)


def test_vectorised_values_shape():
    tables = np.random.default_rng(1).integers(0, 10, size=(7, 3, 3))
    assert macro_f1_values(tables).shape == (7,)
    np.testing.assert_allclose(
        accuracy_values(tables), np.trace(tables, axis1=1, axis2=2) / tables.sum((1, 2))
    )
    with pytest.raises(ValueError):
        classification_report(np.ones((2, 2)), ["only-one"])
