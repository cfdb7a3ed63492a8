"""Panels: several judges vote on each item (model-balanced), and what they cannot settle goes
to people through the same send-to-humans service as every other selection.

Each judge votes with its latest version's verdicts; samples vote inside their model group
(provider/model) first, then each group once. `majority`: a tie is sent; `unanimous`: any
disagreement is sent. With `send_dissent`, decided items where some group voted otherwise (or
abstained) are sent too."""

from collections import defaultdict
from dataclasses import dataclass, field

from judging.formats.replies import UNPARSED
from judging.metrics import panel_vote
from judging.models import Panel, Verdict
from judging.services.send_to_humans import CHOSEN, items_send_to_humans
from judging.services.splits import items_in_split


class PanelError(ValueError):
    """A panel that cannot vote; the message says why."""


@dataclass
class PanelResult:
    decided: dict[int, str] = field(default_factory=dict)
    ties: list[int] = field(default_factory=list)
    dissent: list[int] = field(default_factory=list)
    sent: int = 0


def _versions(panel: Panel):
    versions = [c.versions.order_by("-number").first() for c in panel.judges.all()]
    if not versions or None in versions:
        raise PanelError(f"panel {panel.name!r}: every judge needs a version")
    criteria = {v.criterion_id for v in versions}
    if len(criteria) != 1 or None in criteria:
        raise PanelError(f"panel {panel.name!r}: its judges must share one criterion")
    return versions


def panel_votes(panel: Panel, split: str = "all") -> tuple[PanelResult, object]:
    versions = _versions(panel)
    criterion = versions[0].criterion
    groups = {v.judge_id: f"{v.provider}/{v.model}" for v in versions}
    votes: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    rows = (
        Verdict.objects.current()
        .filter(
            criterion=criterion,
            judge_id__in=groups,
            item__in=items_in_split(project=panel.project, split=split),
        )
        .values_list("item_id", "judge_id", "label")
    )
    for item_id, judge_id, label in rows:
        votes[item_id][groups[judge_id]].append(None if label == UNPARSED else label)
    result = PanelResult()
    for item_id, by_group in sorted(votes.items()):
        vote = panel_vote(by_group, rule=panel.rule)
        if not vote.is_decided:
            result.ties.append(item_id)
            continue
        result.decided[item_id] = vote.label
        if any(label != vote.label for label in vote.group_votes.values()):
            result.dissent.append(item_id)
    return result, criterion


def panel_decide(*, panel: Panel, split: str = "all", actor=None) -> PanelResult:
    """Vote, then send the ties (and the dissent, if the panel says so) to human review."""
    result, criterion = panel_votes(panel, split)
    chosen = result.ties + (result.dissent if panel.send_dissent else [])
    if chosen:
        sent = items_send_to_humans(
            actor=actor,
            project=panel.project,
            criterion=criterion,
            selection=CHOSEN,
            item_ids=chosen,
        )
        result.sent = sent.questions_created
    return result
