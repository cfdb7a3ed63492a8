"""A configured panel's votes over plain data, and what each pinned member left out.

Pure (no Django). Samples vote inside their model group (`provider/model`), then each group
once, by the panel's rule (`judging.metrics.panel_vote`). An item counts for the panel when any
member judged it; a member that did not is named per item in `members[].missing_items`, never
folded silently into "undecided".
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judging.metrics import panel_vote
from judging.reports.agreement.inputs import JudgeSamples, PanelInput

MISSING_SHOWN = 20  # item ids listed per member; `missing` counts them all


@dataclass
class Votes:
    """Item -> the judge's label, plus what was left out and why."""

    labels: dict[Hashable, str] = field(default_factory=dict)
    ties: set[Hashable] = field(default_factory=set)
    unparsed_only: set[Hashable] = field(default_factory=set)
    unparsed_samples: int = 0
    dissent: set[Hashable] = field(default_factory=set)  # decided, some group voted otherwise

    @property
    def judged(self) -> int:
        return len(self.labels) + len(self.ties) + len(self.unparsed_only)


def panel_samples(panel: PanelInput) -> dict[str, dict[str, list[str]]]:
    """item -> model group -> the samples the panel's members gave it."""
    by_item: dict[str, dict[str, list[str]]] = {}
    for member in panel.members:
        for item, samples in member.samples.items():
            by_item.setdefault(item, {}).setdefault(member.model_group, []).extend(samples)
    return by_item


def panel_item_votes(
    by_item: Mapping[Hashable, Mapping[str, Sequence[str]]], labels: Sequence[str], rule: str
) -> Votes:
    """The one panel rule: the agreement report's panel rows and `panel_decide` (which sends
    what it cannot settle to people) both vote through here.

    `by_item`: item -> model group -> samples. A sample whose label is not one of the
    criterion's `labels` (unparsed, or a label the criterion does not have) abstains and is
    counted in `unparsed_samples` (this rule, the report's, won over the service's, which let an
    unknown label vote); an item whose samples all abstain is `unparsed_only`, not a tie. Then
    the model-balanced vote by `rule` (`judging.metrics.panel_vote`); a decided item where a
    voting group cast another label or abstained (a tie among its samples) is also `dissent`."""
    allowed = set(labels)
    votes = Votes()
    for item, groups in by_item.items():
        parsed = {
            g: [s if s in allowed else None for s in samples] for g, samples in groups.items()
        }
        votes.unparsed_samples += sum(s is None for g in parsed.values() for s in g)
        outcome = panel_vote(parsed, rule=rule)
        if outcome.is_decided:
            votes.labels[item] = outcome.label
            if any(label != outcome.label for label in outcome.group_votes.values()):
                votes.dissent.add(item)
        elif any(s is not None for g in parsed.values() for s in g):
            votes.ties.add(item)
        else:
            votes.unparsed_only.add(item)
    return votes


def member_entry(member: JudgeSamples, items: set[str]) -> dict[str, Any]:
    missing = sorted(items - member.samples.keys())
    return {
        "ref": member.ref,
        "judge": member.name,
        "judge_name": member.judge_name,
        "judge_version": member.judge_version,
        "n_judged": len(member.samples),
        "missing": len(missing),
        "missing_items": missing[:MISSING_SHOWN],
    }


def panel_entry(panel: PanelInput) -> dict[str, Any]:
    """The `panel` key of a panel's report row: rule and members, each with what it missed."""
    items = {item for member in panel.members for item in member.samples}
    return {
        "name": panel.name,
        "rule": panel.rule,
        "members": [member_entry(m, items) for m in panel.members],
    }
