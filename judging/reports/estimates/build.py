"""A criterion's true score from one judge's labels on every item and people's on a random few.

Pure: `report.py` gathers the labels and how each labelled item came to be labelled; this
module decides which labels may be used and computes the three figures (docs/estimates.md):

- `ppi`: PPI++ (judging/metrics/ppi.py) over the labelled items (the judge's and the people's
  labels) and the unlabelled ones (the judge's only), with the power-tuned `lambda`;
- `human_only`: the mean of the people's labels on the labelled items (CLT interval);
- `judge_only`: the mean of the judge's labels on every item (CLT interval: it measures the
  judge, biased as it is, and covers the true score only if the judge is unbiased).

Which labels count: PPI is valid only if the labelled items are a random sample of the items.
A label counts when its item was drawn at random (`held_out`, `calibration_sample`); an item
labelled only because a selection chose it (`split_votes`, `inconsistent_pairs`, `chosen`) is
left out of the labelled set (its judge label still counts, as unlabelled) and counted; a label
of unknown selection (imported, or asked outside send_to_humans) is refused unless the caller
assumes it random, and the report then says so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from judging.metrics.planning import classical_labels_needed, ppi_labels_needed
from judging.metrics.ppi import classical_mean, ppi_mean

RANDOM = ("held_out", "calibration_sample")
SELECTED = ("split_votes", "inconsistent_pairs", "chosen")
UNKNOWN = "unknown"
MIN_LABELLED = 2


class EstimateRefused(Exception):
    """The estimate cannot be made as asked (a clear, user-facing reason)."""


@dataclass(frozen=True)
class Measure:
    """What Y and Yhat are: 1/0 for the positive label, or an ordinal label's number."""

    description: str
    values: Mapping[str, float]


@dataclass(frozen=True)
class EstimateData:
    """One criterion × judge over the chosen items (item keys are the caller's)."""

    criterion: str
    criterion_version: str
    judge: str
    split: str
    slice: str | None
    measure: Measure
    judge_labels: Mapping  # item -> the judge's label (every item it decided)
    human_labels: Mapping  # item -> the final human label (items the judge decided)
    selections: Mapping  # item -> the selections that put it before people (may be empty)
    judge_undecided: int = 0  # judged items with no label (samples tied, or none parsed)
    humans_without_judge: int = 0  # labelled items the judge gave no label


def origin(selections) -> str:
    """How a labelled item came to be labelled: a random draw wins over a selection."""
    for name in (*RANDOM, *SELECTED):
        if name in selections:
            return name
    return UNKNOWN


@dataclass(frozen=True)
class LabelUse:
    used: list  # items whose human label counts
    origins: Counter  # origin -> labelled items of that origin
    awaiting: int  # items drawn at random that nobody has labelled yet


def label_use(data: EstimateData, *, assume_random: bool) -> LabelUse:
    """Which labels count (module doc); refuses labels of unknown selection unless assumed."""
    origins = {item: origin(data.selections.get(item, ())) for item in data.human_labels}
    counts = Counter(origins.values())
    if counts[UNKNOWN] and not assume_random:
        raise EstimateRefused(
            f"{counts[UNKNOWN]} human label(s) on {data.criterion!r} have no known selection "
            "(imported, or asked outside send_to_humans), and prediction-powered inference is "
            "valid only on a random sample: pass --assume-random-labels if they were placed at "
            "random (the report will say the assumption was made), or send a random sample "
            "(send_to_humans --calibration-sample N or --held-out)"
        )
    allowed = (*RANDOM, UNKNOWN)
    used = [item for item, how in origins.items() if how in allowed]
    awaiting = sum(
        1
        for item, names in data.selections.items()
        if item in data.judge_labels and item not in data.human_labels and set(names) & set(RANDOM)
    )
    return LabelUse(used, counts, awaiting)


def selection_report(use: LabelUse, *, assume_random: bool) -> dict:
    used = {name: use.origins[name] for name in RANDOM}
    left_out = {name: use.origins[name] for name in SELECTED}
    if assume_random:
        used[UNKNOWN] = use.origins[UNKNOWN]
    rule = "random labels only" + (
        ", and labels of unknown selection assumed random" if assume_random else ""
    )
    note = (
        f"uses the labels of items drawn at random ({used['held_out']} held-out, "
        f"{used['calibration_sample']} from a calibration sample)"
    )
    if assume_random:
        note += (
            f" and {used[UNKNOWN]} label(s) of unknown selection (imported), ASSUMED to be a "
            "random sample (--assume-random-labels): if they were chosen, the figures are biased"
        )
    if sum(left_out.values()):
        note += (
            f"; {sum(left_out.values())} item(s) labelled because a selection chose them were "
            "left out of the labelled set (their judge labels count as unlabelled)"
        )
    if use.awaiting:
        note += f"; {use.awaiting} item(s) drawn at random still await a human label"
    return {
        "rule": rule,
        "assumed_random_labels": assume_random,
        "used": used,
        "left_out": left_out,
        "awaiting_labels": use.awaiting,
        "note": note,
    }


def figures(y, yhat, unlabelled, *, alpha: float) -> dict:
    """`n_labeled`, `n_unlabeled`, `ppi`, `judge_only`, `human_only` and `lambda` of one mean:
    `y`, `yhat` on the labelled items, `unlabelled` the judge's values on the others."""
    human = classical_mean(y, alpha=alpha)
    judge = classical_mean(np.concatenate([yhat, unlabelled]), alpha=alpha)
    if unlabelled.size:
        result = ppi_mean(y, yhat, unlabelled, alpha=alpha)
        ppi, lam = result.ppi, result.lam
    else:  # every item is labelled: nothing for the judge to add
        ppi, lam = human, 0.0
    return {
        "n_labeled": int(y.size),
        "n_unlabeled": int(unlabelled.size),
        "ppi": ppi.as_dict(),
        "judge_only": judge.as_dict(),
        "human_only": human.as_dict(),
        "lambda": lam,
    }


def _labels_needed(y, yhat, unlabelled, *, half_width: float, alpha: float) -> dict:
    total = y.size + unlabelled.size
    if unlabelled.size:
        ppi = ppi_labels_needed(y, yhat, unlabelled, half_width=half_width, alpha=alpha)
    else:
        ppi = classical_labels_needed(y, total=total, half_width=half_width, alpha=alpha)
    human = classical_labels_needed(y, total=total, half_width=half_width, alpha=alpha)
    return {"half_width": half_width, "ppi": ppi.as_dict(), "human_only": human.as_dict()}


def estimate_entry(
    data: EstimateData, *, alpha: float, assume_random: bool, half_width: float | None = None
) -> dict:
    """The report's entry for one criterion × judge (keys in docs/estimates.md); with
    `half_width`, how many random labels each interval needs to reach it."""
    use = label_use(data, assume_random=assume_random)
    if len(use.used) < MIN_LABELLED:
        raise EstimateRefused(
            f"{len(use.used)} usable human label(s) on {data.criterion!r} judged by "
            f"{data.judge}: an estimate needs at least {MIN_LABELLED} labels of items drawn "
            "at random"
        )
    value = data.measure.values
    labelled = set(use.used)
    y = np.array([value[data.human_labels[item]] for item in use.used])
    yhat = np.array([value[data.judge_labels[item]] for item in use.used])
    unlabelled = np.array(
        [value[label] for item, label in data.judge_labels.items() if item not in labelled]
    )
    entry = {
        "criterion": data.criterion,
        "criterion_version": data.criterion_version,
        "judge": data.judge,
        "measure": data.measure.description,
        "split": data.split,
        "slice": data.slice,
        "alpha": alpha,
        **figures(y, yhat, unlabelled, alpha=alpha),
        "label_selection": selection_report(use, assume_random=assume_random),
        "judge_undecided": data.judge_undecided,
        "humans_without_judge_label": data.humans_without_judge,
    }
    if half_width is not None:
        entry["labels_needed"] = _labels_needed(
            y, yhat, unlabelled, half_width=half_width, alpha=alpha
        )
    return entry


def measure_of(*, name: str, labels, positive_label: str, ordinal: bool, pairwise: bool):
    """Y for a criterion: pass/fail → 1 for the positive label; ordinal → the label's number
    (or its rank 1..k when the labels are words). Pairwise and nominal criteria have no mean."""
    if pairwise:
        raise EstimateRefused(
            f"{name!r} is pairwise: a mean of A/B/tie means nothing (see the leaderboard)"
        )
    if positive_label and not ordinal:
        values = {label: float(label == positive_label) for label in labels}
        return Measure(f"share of items labelled {positive_label!r}", values)
    if not ordinal:
        raise EstimateRefused(
            f"criterion {name!r} has no positive label and is not ordinal: its labels have no mean"
        )
    try:
        values = {label: float(label) for label in labels}
        return Measure("mean label (the labels' own numbers)", values)
    except ValueError:
        values = {label: float(rank) for rank, label in enumerate(labels, start=1)}
        return Measure(f"mean rank of the label, 1 ({labels[0]}) to {len(labels)}", values)
