"""Ordinal cut points and label distributions for the agreement report (pure, no Django).

A cut point `at` LABEL splits an ordinal criterion's labels in two: those before LABEL in the
criterion's order are negative, LABEL and those after positive (TREC-style "0 vs 1–3",
"0–1 vs 2–3", "0–2 vs 3"). `thresholds` gives agreement at every cut point; `collapse` turns a
whole criterion into its two groups for `agreement_report --collapse-at LABEL`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from judging.metrics import cohen_kappa_ci, confusion_matrix, observed_agreement
from judging.reports.agreement.inputs import CriterionInput


class CollapseError(ValueError):
    """A cut point that does not split the criterion (a clear, user-facing reason)."""


def group_names(labels: Sequence[str], at: str) -> tuple[str, str]:
    """`(["0","1","2","3"], "2")` -> `("0–1", "2–3")`; a one-label side is just that label."""
    cut = list(labels).index(at)

    def name(side: Sequence[str]) -> str:
        return side[0] if len(side) == 1 else f"{side[0]}–{side[-1]}"

    return name(labels[:cut]), name(labels[cut:])


def binarise(values: Sequence[str], labels: Sequence[str], at: str) -> list[str]:
    """Each label replaced by its group's name."""
    negative, positive = group_names(labels, at)
    cut = list(labels).index(at)
    rank = {label: i for i, label in enumerate(labels)}
    return [positive if rank[v] >= cut else negative for v in values]


def thresholds(
    humans: Sequence[str],
    judged: Sequence[str],
    labels: Sequence[str],
    *,
    bootstrap: dict[str, Any],
) -> list[dict[str, Any]]:
    """One entry per cut point (every label but the first) over the paired items."""
    entries = []
    for at in labels[1:]:
        groups = list(group_names(labels, at))
        table = confusion_matrix(binarise(humans, labels, at), binarise(judged, labels, at), groups)
        kappa = cohen_kappa_ci(table, **bootstrap).estimate
        entries.append(
            {
                "at": at,
                "n": len(humans),
                "cohen_kappa": kappa.as_dict(),
                "observed_agreement": observed_agreement(table).as_dict(),
                "confusion_matrix": {"labels": groups, "counts": table.tolist()},
            }
        )
    return entries


def label_counts(values: Sequence[str], labels: Sequence[str]) -> dict[str, int]:
    """`{label: n}` in the criterion's order, zeros included."""
    counts = Counter(values)
    return {label: counts[label] for label in labels}


def collapse(criterion: CriterionInput, at: str) -> CriterionInput:
    """The criterion with every label (final, rater and judge) replaced by its group's name.

    Judge samples outside the label set stay as they are (they abstain, as before)."""
    labels = list(criterion.labels)
    if not criterion.ordinal:
        raise CollapseError(f"{criterion.name} is not ordinal: cut points need ordered labels")
    if at not in labels:
        raise CollapseError(f"{at!r} is not a label of {criterion.name} ({', '.join(labels)})")
    if at == labels[0]:
        raise CollapseError(
            f"{at!r} is the first label of {criterion.name}: nothing would be negative"
        )
    groups = group_names(labels, at)
    cut = labels.index(at)
    mapping = {label: groups[i >= cut] for i, label in enumerate(labels)}

    def relabel(items):
        return {item: mapping.get(label, label) for item, label in items.items()}

    judges = [
        replace(
            judge,
            samples={
                item: [mapping.get(s, s) for s in samples]
                for item, samples in judge.samples.items()
            },
        )
        for judge in criterion.judges
    ]
    return replace(
        criterion,
        labels=list(groups),
        positive_label=groups[1],
        final_labels=relabel(criterion.final_labels),
        rater_labels={rater: relabel(items) for rater, items in criterion.rater_labels.items()},
        judges=judges,
        collapsed_at=at,
    )
