"""Human–human agreement: how far the people behind the final labels agree with each other.

Pure (no Django). Per rater pair: Cohen's kappa over the items both labelled (with a seeded
bootstrap CI). Per criterion, over items with two or more raters: Fleiss' kappa (undefined with
its reason when items have different numbers of raters) and Krippendorff's alpha (raters as
coders, missing labels allowed; ordinal level for ordinal criteria).
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from judging.metrics import (
    cohen_kappa_ci,
    confusion_matrix,
    fleiss_kappa_from_ratings,
    krippendorff_alpha,
)
from judging.reports.agreement.cuts import label_counts
from judging.reports.agreement.inputs import CriterionInput


def _known(criterion: CriterionInput) -> dict[str, dict[str, str]]:
    """Rater labels inside the label set (others cannot be compared and are left out)."""
    allowed = set(criterion.labels)
    return {
        rater: {item: label for item, label in labels.items() if label in allowed}
        for rater, labels in criterion.rater_labels.items()
    }


def rater_pair_entries(criterion: CriterionInput, *, seed: int, n_resamples: int) -> list[dict]:
    raters = _known(criterion)
    entries = []
    for first, second in combinations(sorted(raters), 2):
        shared = sorted(raters[first].keys() & raters[second].keys())
        if not shared:
            continue
        table = confusion_matrix(
            [raters[first][i] for i in shared],
            [raters[second][i] for i in shared],
            list(criterion.labels),
        )
        kappa = cohen_kappa_ci(
            table, n_resamples=n_resamples, method="percentile", rng=seed
        ).estimate
        entries.append(
            {
                "kind": "rater_pair",
                "criterion": criterion.name,
                "criterion_version": criterion.version,
                "raters": [first, second],
                "n": len(shared),
                "cohen_kappa": kappa.as_dict(),
            }
        )
    return entries


def all_raters_entry(criterion: CriterionInput) -> dict[str, Any] | None:
    """None when no item has two raters (nothing to compare)."""
    raters = _known(criterion)
    names = sorted(raters)
    counts: dict[str, int] = {}
    for labels in raters.values():
        for item in labels:
            counts[item] = counts.get(item, 0) + 1
    items = sorted(item for item, n in counts.items() if n >= 2)
    if not items:
        return None
    ratings = [[raters[r][i] for r in names if i in raters[r]] for i in items]
    coders = [[raters[r].get(i) for i in items] for r in names]
    level = "ordinal" if criterion.ordinal else "nominal"
    return {
        "kind": "all_raters",
        "criterion": criterion.name,
        "criterion_version": criterion.version,
        "raters": names,
        "n_items": len(items),
        "fleiss_kappa": fleiss_kappa_from_ratings(ratings, list(criterion.labels)).as_dict(),
        "krippendorff_alpha": krippendorff_alpha(
            coders, level=level, values=list(criterion.labels)
        ).as_dict(),
        "krippendorff_level": level,
        "final_label_counts": label_counts(
            list(criterion.final_labels.values()), list(criterion.labels)
        ),
    }


def human_human_entries(criterion: CriterionInput, *, seed: int, n_resamples: int) -> list[dict]:
    entries = rater_pair_entries(criterion, seed=seed, n_resamples=n_resamples)
    overall = all_raters_entry(criterion)
    return entries if overall is None else [*entries, overall]
