"""Bradley-Terry strengths of several systems from pairwise comparisons, with bootstrap intervals.

Model (Bradley & Terry 1952): P(i beats j) = p_i / (p_i + p_j). A tie counts as half a win
each way. The maximum-likelihood strengths are fitted with Hunter's MM iterations (Hunter 2004,
"MM algorithms for generalized Bradley-Terry models", Ann. Statist. 32(1)):
p_i <- W_i / sum_j n_ij / (p_i + p_j), which increase the likelihood at every step. Hand-written
on numpy (a few lines) rather than a run-time dependency; tests check it against `choix`.

Strengths are reported as log-strengths with mean 0 (only differences are identified):
exp(s_i - s_j) is the odds that i beats j. The maximum-likelihood fit exists only when every
split of the systems into two groups has each group winning (at least half) a comparison against
the other (Hunter 2004, assumption 1; "strongly connected"); otherwise `fit` raises.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TOLERANCE = 1e-12
MAX_ITERATIONS = 100_000


class NoFiniteFit(ValueError):
    """Some group of systems never beats the rest: its strength would be minus infinity."""


@dataclass(frozen=True)
class Comparisons:
    """`first[k]` vs `second[k]` (system indices) with `score[k]` = 1 (first won), 0.5 (tie) or
    0 (second won), over `n` systems."""

    n: int
    first: np.ndarray
    second: np.ndarray
    score: np.ndarray

    @classmethod
    def of(cls, n: int, rows: Sequence[tuple[int, int, float]]) -> Comparisons:
        data = np.asarray(rows, dtype=float).reshape(-1, 3)
        return cls(n, data[:, 0].astype(int), data[:, 1].astype(int), data[:, 2])

    def take(self, index: np.ndarray) -> Comparisons:
        return Comparisons(self.n, self.first[index], self.second[index], self.score[index])

    def wins_matrix(self) -> np.ndarray:
        """wins[i, j]: i's wins over j, ties split half and half."""
        wins = np.zeros((self.n, self.n))
        np.add.at(wins, (self.first, self.second), self.score)
        np.add.at(wins, (self.second, self.first), 1.0 - self.score)
        return wins


def _strongly_connected(wins: np.ndarray) -> bool:
    """Every system reaches every other along 'beat at least once' edges."""
    edges = wins > 0
    for graph in (edges, edges.T):  # reachable from system 0, and reaching it
        seen = np.zeros(len(wins), dtype=bool)
        seen[0] = True
        frontier = seen.copy()
        while frontier.any():
            frontier = graph[frontier].any(axis=0) & ~seen
            seen |= frontier
        if not seen.all():
            return False
    return True


def fit(comparisons: Comparisons) -> np.ndarray:
    """Maximum-likelihood log-strengths (mean 0), or NoFiniteFit."""
    wins = comparisons.wins_matrix()
    if comparisons.n < 2 or not _strongly_connected(wins):
        raise NoFiniteFit(
            "some systems never beat the others, so their strengths are not finite "
            "(need every group of systems to win at least one comparison against the rest)"
        )
    games = wins + wins.T
    total_wins = wins.sum(axis=1)
    p = np.ones(comparisons.n)
    for _ in range(MAX_ITERATIONS):
        updated = total_wins / (games / (p[:, None] + p[None, :])).sum(axis=1)
        updated /= np.exp(np.log(updated).mean())
        done = np.max(np.abs(np.log(updated) - np.log(p))) < TOLERANCE
        p = updated
        if done:
            break
    return np.log(p)


@dataclass(frozen=True)
class BootstrapFit:
    strengths: np.ndarray  # log-strengths, mean 0
    low: np.ndarray
    high: np.ndarray
    resamples: int  # resamples with a finite fit (the interval's basis)
    dropped: int  # resamples where some group never won: no finite fit, left out


def fit_with_intervals(
    comparisons: Comparisons, *, seed: int, n_resamples: int = 1000, alpha: float = 0.05
) -> BootstrapFit:
    """The fit and percentile bootstrap intervals, resampling whole comparisons (seeded)."""
    strengths = fit(comparisons)
    rng = np.random.default_rng(seed)
    size = len(comparisons.score)
    fits = []
    for _ in range(n_resamples):
        try:
            fits.append(fit(comparisons.take(rng.integers(0, size, size))))
        except NoFiniteFit:
            continue
    if not fits:
        nan = np.full(comparisons.n, np.nan)
        return BootstrapFit(strengths, nan, nan, 0, n_resamples)
    low, high = np.quantile(np.array(fits), [alpha / 2, 1 - alpha / 2], axis=0)
    return BootstrapFit(strengths, low, high, len(fits), n_resamples - len(fits))
