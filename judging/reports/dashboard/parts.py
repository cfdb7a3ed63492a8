"""Pure pieces of the calibration dashboard, computed from the agreement report's plain data.

No queries here: everything works on `CriterionInput` (items named by external id), so the
dashboard can slice, compare and list disagreements without going back to the database.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import combinations
from typing import Any

from judging.metrics import (
    cohen_kappa,
    confusion_matrix,
    expected_calibration_error,
    observed_agreement,
)
from judging.reports.agreement.build import disagreeing_label
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples


def restrict(criterion: CriterionInput, items: set[str]) -> CriterionInput:
    """The same criterion over a subset of items (e.g. one slice)."""
    return replace(
        criterion,
        final_labels={k: v for k, v in criterion.final_labels.items() if k in items},
        human_ties=[k for k in criterion.human_ties if k in items],
        rater_labels={
            rater: {k: v for k, v in labels.items() if k in items}
            for rater, labels in criterion.rater_labels.items()
        },
        judges=[_restrict_judge(judge, items) for judge in criterion.judges],
        panels=[
            replace(panel, members=[_restrict_judge(m, items) for m in panel.members])
            for panel in criterion.panels
        ],
    )


def _restrict_judge(judge: JudgeSamples, items: set[str]) -> JudgeSamples:
    return replace(
        judge,
        samples={k: v for k, v in judge.samples.items() if k in items},
        orders={k: v for k, v in judge.orders.items() if k in items},
        confidences={k: v for k, v in judge.confidences.items() if k in items},
    )


def disagreements(criterion: CriterionInput) -> list[dict[str, Any]]:
    """Every item where a judge version's (majority) label differs from the final human label;
    `judge` names the version (`NAME@VERSION`, or `provider/model` for imported verdicts)."""
    rows = []
    for judge in criterion.judges:
        for item, samples in sorted(judge.samples.items()):
            label = disagreeing_label(criterion.final_labels.get(item), samples, criterion.labels)
            if label is not None:
                rows.append(
                    {
                        "item": item,
                        "criterion": criterion.name,
                        "version": criterion.version,
                        "judge": judge.ref,
                        "human": criterion.final_labels[item],
                        "judged": label,
                    }
                )
    return rows


def _pair_stats(a: dict[str, str], b: dict[str, str], labels) -> tuple[int, dict, dict]:
    shared = sorted(set(a) & set(b))
    table = confusion_matrix([a[k] for k in shared], [b[k] for k in shared], labels)
    return len(shared), observed_agreement(table).as_dict(), cohen_kappa(table).as_dict()


def rater_agreement(criterion: CriterionInput) -> list[dict[str, Any]]:
    """Per rater on one criterion: agreement and kappa with the final label, and mean kappa with
    each other rater (the snapshot's `rater_quality` key; reviews' `rater_accuracy` is the
    project's gold checks)."""
    rows = []
    raters = criterion.rater_labels
    peers: dict[str, list[float]] = {r: [] for r in raters}
    for a, b in combinations(sorted(raters), 2):
        n, _, kappa = _pair_stats(raters[a], raters[b], criterion.labels)
        if n and kappa["value"] is not None:
            peers[a].append(kappa["value"])
            peers[b].append(kappa["value"])
    for rater in sorted(raters):
        n, agreement, kappa = _pair_stats(raters[rater], criterion.final_labels, criterion.labels)
        values = peers[rater]
        rows.append(
            {
                "criterion": criterion.name,
                "rater": rater,
                "n": n,
                "agreement_with_final": agreement,
                "kappa_with_final": kappa,
                "mean_kappa_with_raters": sum(values) / len(values) if values else None,
            }
        )
    return rows


def reliability(criterion: CriterionInput, judge: JudgeSamples) -> dict[str, Any] | None:
    """Expected calibration error of one judge's samples (with their `confidences`) against
    the final human label. None when the judge gave no confidences."""
    conf, correct = [], []
    confidences = judge.confidences
    for item, samples in judge.samples.items():
        human = criterion.final_labels.get(item)
        if human is None:
            continue
        for label, value in zip(samples, confidences.get(item, ()), strict=False):
            if value is not None:
                conf.append(value)
                correct.append(label == human)
    if not conf:
        return None
    report = expected_calibration_error(conf, correct)
    return {
        "ece": report.ece.as_dict(),
        "n": report.n,
        "bins": [
            {
                "low": b.low,
                "high": b.high,
                "count": b.count,
                "mean_confidence": b.mean_confidence,
                "accuracy": b.accuracy,
            }
            for b in report.bins
        ],
    }
