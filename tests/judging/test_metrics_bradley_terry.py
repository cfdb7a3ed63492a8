"""Bradley-Terry maximum likelihood against `choix` (an independent fit) on seeded tournaments."""

import choix
import numpy as np
import pytest

from judging.metrics.bradley_terry import Comparisons, NoFiniteFit, fit, fit_with_intervals


def tournament(seed: int, n: int = 6, games: int = 400, tie_rate: float = 0.0):
    """Random pairs; i beats j with the Bradley-Terry odds of seeded true strengths."""
    rng = np.random.default_rng(seed)
    truth = rng.normal(0, 1, n)
    rows = []
    for _ in range(games):
        i, j = rng.choice(n, size=2, replace=False)
        if rng.random() < tie_rate:
            rows.append((i, j, 0.5))
        else:
            won = rng.random() < 1 / (1 + np.exp(truth[j] - truth[i]))
            rows.append((i, j, 1.0 if won else 0.0))
    return Comparisons.of(n, rows), truth


def choix_fit(comparisons: Comparisons) -> np.ndarray:
    """choix takes (winner, loser) pairs: with every comparison counted twice, a tie is one win
    each way, which has the same maximum-likelihood strengths as half a win each way."""
    pairs = []
    for i, j, s in zip(comparisons.first, comparisons.second, comparisons.score, strict=True):
        pairs += {1.0: [(i, j)] * 2, 0.0: [(j, i)] * 2, 0.5: [(i, j), (j, i)]}[float(s)]
    params = choix.opt_pairwise(comparisons.n, pairs, alpha=0, tol=1e-12)
    return params - params.mean()


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("tie_rate", [0.0, 0.2])
def test_strengths_match_choix_up_to_a_constant(seed, tie_rate):
    comparisons, _ = tournament(seed, tie_rate=tie_rate)
    ours = fit(comparisons)
    assert ours.mean() == pytest.approx(0, abs=1e-12)
    np.testing.assert_allclose(ours, choix_fit(comparisons), atol=1e-6)


def test_a_system_that_never_wins_has_no_finite_strength():
    comparisons = Comparisons.of(3, [(0, 1, 1.0), (1, 0, 1.0), (0, 2, 1.0), (1, 2, 1.0)])
    with pytest.raises(NoFiniteFit, match="never beat"):
        fit(comparisons)
    # one tie is half a win: now the fit exists, and the tied system is the weakest
    strengths = fit(Comparisons.of(3, [(0, 1, 1.0), (1, 0, 1.0), (0, 2, 1.0), (1, 2, 0.5)]))
    assert strengths.argmin() == 2


def test_bootstrap_intervals_are_seeded_and_cover_the_fit():
    comparisons, truth = tournament(7, n=4, games=600, tie_rate=0.1)
    first = fit_with_intervals(comparisons, seed=3, n_resamples=200)
    again = fit_with_intervals(comparisons, seed=3, n_resamples=200)
    np.testing.assert_array_equal(first.low, again.low)
    assert (first.low < first.strengths).all() and (first.strengths < first.high).all()
    assert first.resamples + first.dropped == 200
    # the strongest true system is the strongest fitted one
    assert first.strengths.argmax() == truth.argmax()
