"""A configured panel's votes over plain data, and what each pinned member left out.

Pure (no Django). Samples vote inside their model group (`provider/model`), then each group
once, by the panel's rule (`judging.metrics.panel_vote`). An item counts for the panel when any
member judged it; a member that did not is named per item in `members[].missing_items`, never
folded silently into "undecided".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from judging.metrics import panel_vote
from judging.reports.agreement.inputs import JudgeSamples, PanelInput

MISSING_SHOWN = 20  # item ids listed per member; `missing` counts them all


@dataclass
class Votes:
    """Item -> the judge's label, plus what was left out and why."""

    labels: dict[str, str] = field(default_factory=dict)
    ties: set[str] = field(default_factory=set)
    unparsed_only: set[str] = field(default_factory=set)
    unparsed_samples: int = 0

    @property
    def judged(self) -> int:
        return len(self.labels) + len(self.ties) + len(self.unparsed_only)


def panel_item_votes(panel: PanelInput, labels: Sequence[str]) -> Votes:
    """Model-balanced vote by the panel's rule over the items any member judged."""
    allowed = set(labels)
    by_item: dict[str, dict[str, list[str | None]]] = {}
    for member in panel.members:
        for item, samples in member.samples.items():
            group = by_item.setdefault(item, {}).setdefault(member.model_group, [])
            group.extend(s if s in allowed else None for s in samples)
    votes = Votes()
    for item, groups in by_item.items():
        votes.unparsed_samples += sum(s is None for g in groups.values() for s in g)
        outcome = panel_vote(groups, rule=panel.rule)
        if outcome.is_decided:
            votes.labels[item] = outcome.label
        elif any(s is not None for g in groups.values() for s in g):
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
