"""Judge bias checks for one agreement-report row (pure): length bias on pass/fail criteria,
first-position win rate on pairwise ones. Keys in docs/agreement-report.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from judging.metrics import Stat
from judging.metrics.length_bias import length_bias
from judging.metrics.voting import first_position_win_rate
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples

NOT_TWO_LABEL = "length bias applies to pass/fail criteria (with a positive label) only"
NO_LENGTH = "no paired item has an output to measure"


def length_bias_entry(
    criterion: CriterionInput, paired: Sequence[str], judged: Mapping[str, str]
) -> dict:
    """`length_bias`: the judge's pass on output length at equal human verdict (paired items
    with a known output length), or `{"undefined_reason"}`."""
    positive = criterion.positive_label
    if criterion.pairwise or not positive:
        return {"undefined_reason": NOT_TWO_LABEL}
    items = [item for item in paired if item in criterion.output_chars]
    if not items:
        return {"undefined_reason": NO_LENGTH}
    return length_bias(
        [criterion.output_chars[item] for item in items],
        [judged[item] == positive for item in items],
        [criterion.final_labels[item] == positive for item in items],
    )


def first_position_entry(criterion: CriterionInput, judges: Sequence[JudgeSamples]) -> dict:
    """`first_position_win_rate` over every sample of the row's judges (a panel: its members)."""
    if not criterion.pairwise:
        return Stat.undefined("first-position win rate applies to pairwise criteria only").as_dict()
    return first_position_win_rate(
        (label, order)
        for judge in judges
        for item, samples in judge.samples.items()
        for label, order in zip(samples, judge.orders.get(item, ()), strict=False)
    ).as_dict()
