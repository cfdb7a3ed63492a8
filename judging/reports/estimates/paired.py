"""Two systems on the same inputs: each one's true score and the paired difference A − B.

Pure, over an `EstimateData` of both systems' items and the pairs (A's item, B's item) that
share an input. Which labels count is `build.label_use`'s rule (random draws only; unknown
selection only when assumed random). Each system's figures are over its paired items. The
difference is PPI++ on D = Y_A − Y_B (Angelopoulos et al. 2023: any mean, here of a paired
difference): a pair is labelled when both its items carry a usable human label, the others
count by the judge's D̂ = Ŷ_A − Ŷ_B alone; human-only is the mean D over the labelled pairs,
judge-only the mean D̂ over every pair. The pairs driving the difference are those whose two
items the judge labelled differently, labelled pairs where people disagree with the judge first.
"""

from __future__ import annotations

import numpy as np

from judging.reports.estimates.build import (
    MIN_LABELLED,
    EstimateData,
    EstimateRefused,
    figures,
    label_use,
    selection_report,
)

MAX_DRIVERS = 20


def _values(data: EstimateData, items, used: set, *, human: bool) -> np.ndarray:
    value = data.measure.values
    labels = data.human_labels if human else data.judge_labels
    return np.array([value[labels[item]] for item in items if not human or item in used])


def _system(data: EstimateData, items: list, used: set, alpha: float, name: str) -> dict:
    labelled = [item for item in items if item in used]
    if len(labelled) < MIN_LABELLED:
        raise EstimateRefused(
            f"system {name!r}: {len(labelled)} usable human label(s) on its paired items; an "
            f"estimate needs at least {MIN_LABELLED} labels of items drawn at random"
        )
    y = _values(data, labelled, used, human=True)
    yhat = _values(data, labelled, used, human=False)
    rest = _values(data, [i for i in items if i not in used], used, human=False)
    return {"system": name, "n_items": len(items), **figures(y, yhat, rest, alpha=alpha)}


def _drivers(data: EstimateData, pairs, used: set, names: dict) -> list[dict]:
    value, rows = data.measure.values, []
    for key, a, b in pairs:
        judged = value[data.judge_labels[a]] - value[data.judge_labels[b]]
        if judged == 0:
            continue
        both = a in used and b in used
        human = value[data.human_labels[a]] - value[data.human_labels[b]] if both else None
        rows.append(
            {
                "pair": key,
                "a": names[a],
                "b": names[b],
                "judge": [data.judge_labels[a], data.judge_labels[b]],
                "human": [data.human_labels[a], data.human_labels[b]] if both else None,
                "judge_difference": judged,
                "human_difference": human,
            }
        )
    rows.sort(key=lambda r: r["human"] is None or r["human_difference"] == r["judge_difference"])
    return rows[:MAX_DRIVERS]


def paired_report(
    data: EstimateData,
    pairs: list[tuple[str, object, object]],
    *,
    names: dict,
    systems: tuple[str, str],
    alpha: float,
    assume_random: bool,
) -> dict:
    """`pairs`: (pair key, A's item, B's item), both judged. Keys in docs/estimates.md."""
    if len(pairs) < MIN_LABELLED:
        raise EstimateRefused(f"{len(pairs)} pair(s) of items judged on both sides: too few")
    use = label_use(data, assume_random=assume_random)
    used = set(use.used)
    value = data.measure.values
    both = [(a, b) for _, a, b in pairs if a in used and b in used]
    if len(both) < MIN_LABELLED:
        raise EstimateRefused(
            f"{len(both)} pair(s) have a usable human label on both items: the paired "
            f"difference needs at least {MIN_LABELLED}"
        )
    d = np.array([value[data.human_labels[a]] - value[data.human_labels[b]] for a, b in both])
    dhat = np.array([value[data.judge_labels[a]] - value[data.judge_labels[b]] for a, b in both])
    rest = np.array(
        [
            value[data.judge_labels[a]] - value[data.judge_labels[b]]
            for _, a, b in pairs
            if not (a in used and b in used)
        ]
    )
    return {
        "criterion": data.criterion,
        "criterion_version": data.criterion_version,
        "judge": data.judge,
        "measure": data.measure.description,
        "alpha": alpha,
        "n_pairs": len(pairs),
        "a": _system(data, [a for _, a, _ in pairs], used, alpha, systems[0]),
        "b": _system(data, [b for _, _, b in pairs], used, alpha, systems[1]),
        "difference": {"what": "A − B", **figures(d, dhat, rest, alpha=alpha)},
        "label_selection": selection_report(use, assume_random=assume_random),
        "drivers": _drivers(data, pairs, used, names),
    }
