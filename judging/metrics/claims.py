"""Claim-level scores of a semantic comparison (docs/scoring.md, "Semantic comparison").

From a judge's decisions on one case, or pooled over cases:

- ``claim_precision`` = supported / (supported + contradicted): of the predicted claims the judge
  could decide, the share the reference supports;
- ``reference_recall`` = matched / (matched + missed): of the reference claims the judge could
  decide, the share the prediction states;
- ``claim_verification_coverage`` = decided / all claims, predicted and reference together:
  how much of the comparison the judge could decide at all;
- ``f1`` = 2PR / (P + R) of the two.

Over cases, counts are pooled (sums of the six counts) and the percentile bootstrap resamples
the cases: a case with many claims weighs more, as in micro averaging.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .resample import summed_ci
from .stat import Stat

# Column order of a case's counts.
COUNTS = ("supported", "contradicted", "predicted_undecidable", "matched", "missed",
          "reference_undecidable")  # fmt: skip
MEASURES = ("claim_precision", "reference_recall", "claim_verification_coverage", "f1")
REASONS = {
    "claim_precision": "no predicted claim could be decided (supported + contradicted = 0)",
    "reference_recall": "no reference claim could be decided (matched + missed = 0)",
    "claim_verification_coverage": "no claim to decide",
    "f1": "precision or recall is undefined, or both are 0",
}


def _ratio(top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1), np.nan)


def measure_values(sums: np.ndarray, measure: str) -> np.ndarray:
    """Vectorised: rows of summed COUNTS -> the measure, NaN where undefined."""
    s, c, pu, m, mi, ru = (sums[..., i] for i in range(len(COUNTS)))
    precision, recall = _ratio(s, s + c), _ratio(m, m + mi)
    if measure == "claim_precision":
        return precision
    if measure == "reference_recall":
        return recall
    if measure == "claim_verification_coverage":
        return _ratio(s + c + m + mi, s + c + pu + m + mi + ru)
    with np.errstate(invalid="ignore"):
        return _ratio(2 * precision * recall, precision + recall)


def case_scores(counts: Mapping[str, int]) -> dict[str, dict[str, Any]]:
    """One case's four measures (no interval: one case), each ``Stat.as_dict()``."""
    row = np.array([[counts[name] for name in COUNTS]], dtype=np.float64)
    out = {}
    for measure in MEASURES:
        value = float(measure_values(row, measure)[0])
        stat = Stat.undefined(REASONS[measure]) if np.isnan(value) else Stat(value)
        out[measure] = stat.as_dict()
    return out


def pooled_scores(
    cases: Sequence[Mapping[str, int]], *, seed: int = 0, n_resamples: int = 2000
) -> dict[str, dict[str, Any]]:
    """The four measures over cases (pooled counts), each with a bootstrap CI over cases."""
    rows = np.array([[case[name] for name in COUNTS] for case in cases], dtype=np.float64)
    out = {}
    for measure in MEASURES:
        if not len(cases):
            out[measure] = Stat.undefined("no case was compared semantically").as_dict()
            continue
        stat = summed_ci(
            rows,
            lambda sums, _n, m=measure: measure_values(sums, m),
            seed=seed,
            n_resamples=n_resamples,
        )
        if not stat.is_defined:
            stat = Stat.undefined(REASONS[measure])
        out[measure] = stat.as_dict()
    return out
