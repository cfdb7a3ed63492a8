"""pass@k: the chance that at least one of k samples of a case passes.

Per case with n samples of which c pass, Chen et al. (2021)'s unbiased estimator
``1 - C(n - c, k) / C(n, k)``: the share of the k-subsets of the n samples that hold at least
one pass (exact integer binomials, no sampling). Averaged over cases, with a percentile
bootstrap CI over cases. Beside it the idealised ``1 - (1 - p)^k`` with p the mean per-case
pass rate (pass@1): what k independent attempts of equal difficulty would give. Real cases are
not equally hard, so the idealised figure overstates pass@k whenever pass rates vary by case.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .resample import mean_ci
from .stat import Stat


def pass_at_k(n: int, c: int, k: int) -> float:
    """1 - C(n - c, k) / C(n, k) for n samples, c passing, 1 <= k <= n."""
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0  # every k-subset holds a pass
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_at_k_figures(
    cases: Sequence[tuple[int, int]],
    ks: Sequence[int],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
) -> dict[str, Any]:
    """`cases`: (n samples, c passing) per case. Every k is averaged over the same cases, those
    with at least max(ks) samples; the others are left out and counted.

    ``{"cases", "excluded_cases", "pass_at_k": {"K": stat}, "idealised": {"K": {"value", "p"}},
    "per_case": [{"K": value}]}`` (statistics as ``Stat.as_dict()``)."""
    ks = sorted(set(ks))
    if not ks or ks[0] < 1:
        raise ValueError("k must be a whole number of at least 1")
    used = [(n, c) for n, c in cases if n >= ks[-1]]
    per_case = [{str(k): pass_at_k(n, c, k) for k in ks} for n, c in used]
    no_cases = Stat.undefined(f"no case has at least {ks[-1]} labelled samples")
    figures, idealised = {}, {}
    p = float(np.mean([c / n for n, c in used])) if used else None
    for k in ks:
        values = [row[str(k)] for row in per_case]
        stat = mean_ci(values, seed=seed, n_resamples=n_resamples) if used else no_cases
        figures[str(k)] = stat.as_dict()
        idealised[str(k)] = {"value": None if p is None else 1 - (1 - p) ** k, "p": p}
    return {
        "cases": len(used),
        "excluded_cases": len(cases) - len(used),
        "pass_at_k": figures,
        "idealised": idealised,
        "per_case": per_case,
    }
