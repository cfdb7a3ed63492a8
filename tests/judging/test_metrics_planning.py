"""How many labels: each plan checked by drawing that many labels and measuring the interval."""

import numpy as np
import pytest

from judging.metrics.planning import (
    classical_labels_needed,
    kappa_labels_needed,
    ppi_labels_needed,
)
from judging.metrics.ppi import classical_mean, ppi_mean
from tests.judging.test_metrics_ppi import judged


def _labelled(truth, judge, n, seed):
    order = np.random.default_rng(seed).permutation(truth.size)
    chosen, rest = order[:n], order[n:]
    return truth[chosen], judge[chosen], judge[rest]


@pytest.mark.parametrize("first_draw", [0, 1, 2])
def test_the_planned_labels_give_about_the_half_width_asked(first_draw):
    """Plan from 600 labels of 20,000 items, draw as many as planned, measure: within 10%
    (the plan carries the first draw's sampling noise in Var and Cov)."""
    _, _, _, truth = judged(21, 0, 20_000)
    rng = np.random.default_rng(21)
    judge = np.where(truth == 1, rng.random(truth.size) < 0.9, rng.random(truth.size) < 0.2)
    judge = judge.astype(float)
    y, yhat, yhat_u = _labelled(truth, judge, 600, seed=first_draw)
    plan = ppi_labels_needed(y, yhat, yhat_u, half_width=0.02, alpha=0.05)
    assert plan.total > 600 and plan.more == plan.total - 600
    widths = [
        ppi_mean(*_labelled(truth, judge, plan.total, seed=s), alpha=0.05).ppi.half_width
        for s in range(10)
    ]
    assert np.mean(widths) == pytest.approx(0.02, rel=0.1)
    human = classical_labels_needed(y, total=truth.size, half_width=0.02, alpha=0.05)
    assert human.total > 2 * plan.total  # what the judge saves
    human_widths = [
        classical_mean(_labelled(truth, judge, human.total, seed=s)[0]).half_width
        for s in range(10)
    ]
    assert np.mean(human_widths) == pytest.approx(0.02, rel=0.05)


def test_the_current_labels_already_enough():
    y, yhat, yhat_u, _ = judged(22, 400, 2600)
    current = ppi_mean(y, yhat, yhat_u).ppi.half_width
    plan = ppi_labels_needed(y, yhat, yhat_u, half_width=current * 1.05, alpha=0.05)
    assert (plan.total, plan.more) == (400, 0)


def test_more_than_there_are_items_is_none():
    y, yhat, yhat_u, _ = judged(23, 20, 80, sensitivity=0.5, false_pass=0.5)
    assert ppi_labels_needed(y, yhat, yhat_u, half_width=0.001, alpha=0.05).total is None
    assert classical_labels_needed(y, total=100, half_width=0.001, alpha=0.05).more is None
    with pytest.raises(ValueError, match="positive"):
        classical_labels_needed(y, total=100, half_width=0, alpha=0.05)


def test_kappa_lower_bound_reaches_the_gate_as_the_interval_shrinks():
    # kappa 0.70 [0.58, 0.82] on 100 items, gate 0.60: half-width 0.12 must shrink to 0.10
    plan = kappa_labels_needed(kappa=0.70, ci_low=0.58, n=100, gate=0.60)
    assert (plan.total, plan.more) == (144, 44)
    assert "1/sqrt(n)" in plan.method
    assert kappa_labels_needed(kappa=0.70, ci_low=0.65, n=30, gate=0.6, min_n=50).more == 20
    assert kappa_labels_needed(kappa=0.55, ci_low=0.40, n=100, gate=0.60).total is None
