"""Two judges (or two versions of one) compared item by item: a pure function of plain labels.

Each side's label on an item is its samples' vote, as in the agreement report. The paired items
are those both sides labelled that have a final human label; a flip is a paired item whose two
labels differ. Cohen's kappa and observed agreement of each side against the humans, and their
difference B − A, get intervals from one paired bootstrap: every resample draws the same items
for both sides (`judging.metrics.bootstrap_paired`). Keys: docs/agreement-report.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from judging.metrics import (
    Stat,
    bootstrap_paired,
    cohen_kappa,
    cohen_kappa_values,
    confusion_matrix,
    observed_agreement,
    observed_agreement_values,
)
from judging.reports.agreement.build import CI_LEVEL, CI_METHOD, judge_votes
from judging.reports.agreement.cuts import label_counts
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples

NO_PAIRS = "no item has labels from both judges and a final human label (n = 0)"


def paired_table(humans, a, b, labels) -> np.ndarray:
    """k x k x k counts: [human, A, B] in the criterion's label order."""
    index = {label: i for i, label in enumerate(labels)}
    table = np.zeros((len(labels),) * 3, dtype=np.int64)
    for h, x, y in zip(humans, a, b, strict=True):
        table[index[h], index[x], index[y]] += 1
    return table


def _stats(table, humans, a, b, labels, *, seed, n_resamples) -> dict[str, Any]:
    """{statistic: (A's, B's, B − A) BootstrapResults} for kappa and observed agreement."""
    estimates = {
        "cohen_kappa": (cohen_kappa, cohen_kappa_values),
        "observed_agreement": (observed_agreement, observed_agreement_values),
    }
    found = {}
    for key, (point, values) in estimates.items():
        sides = tuple(
            point(confusion_matrix(humans, side, labels)) if humans else Stat.undefined(NO_PAIRS)
            for side in (a, b)
        )
        found[key] = bootstrap_paired(
            table,
            values,
            n_resamples=n_resamples,
            level=CI_LEVEL,
            method=CI_METHOD,
            rng=seed,
            estimates=sides,
        )
    return found


def side_entry(judge: JudgeSamples, votes, paired, stats, which: str, labels) -> dict[str, Any]:
    return {
        "judge": judge.judge_name or judge.name,
        "version": judge.judge_version,
        "ref": judge.ref,
        "model": judge.name,
        "configuration": judge.configuration,
        "n_judged": votes.judged,
        "cohen_kappa": getattr(stats["cohen_kappa"], which).estimate.as_dict(),
        "observed_agreement": getattr(stats["observed_agreement"], which).estimate.as_dict(),
        "label_counts": label_counts([votes.labels[item] for item in paired], labels),
    }


def judges_compare_build(
    criterion: CriterionInput, a: JudgeSamples, b: JudgeSamples, *, seed: int, n_resamples: int
) -> dict[str, Any]:
    labels = list(criterion.labels)
    votes_a, votes_b = judge_votes(a, labels), judge_votes(b, labels)
    final = criterion.final_labels
    both = sorted(votes_a.labels.keys() & votes_b.labels.keys())
    paired = [item for item in both if item in final]
    humans = [final[item] for item in paired]
    side_a = [votes_a.labels[item] for item in paired]
    side_b = [votes_b.labels[item] for item in paired]
    table = paired_table(humans, side_a, side_b, labels)
    stats = _stats(table, humans, side_a, side_b, labels, seed=seed, n_resamples=n_resamples)
    flips = [
        {"item_id": item, "a": x, "b": y, "human": h}
        for item, x, y, h in zip(paired, side_a, side_b, humans, strict=True)
        if x != y
    ]
    kappa = stats["cohen_kappa"]
    return {
        "criterion": criterion.name,
        "criterion_version": criterion.version,
        "labels": labels,
        "n_both_judged": len(both),
        "n_paired": len(paired),
        "flipped": len(flips),
        "flips": flips,
        "a": side_entry(a, votes_a, paired, stats, "a", labels),
        "b": side_entry(b, votes_b, paired, stats, "b", labels),
        "difference": {
            key: stats[key].difference.estimate.as_dict()
            for key in ("cohen_kappa", "observed_agreement")
        },
        "human_label_counts": label_counts(humans, labels),
        "bootstrap": {
            "method": CI_METHOD,
            "level": CI_LEVEL,
            "n_resamples": n_resamples,
            "seed": seed,
            "paired": True,
            "resamples_undefined": {
                "a": kappa.a.resamples_undefined,
                "b": kappa.b.resamples_undefined,
                "difference": kappa.difference.resamples_undefined,
            },
        },
    }
