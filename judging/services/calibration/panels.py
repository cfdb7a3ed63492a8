"""Panels: several pinned judge versions vote on each item (model-balanced), and what they cannot
settle goes to people through the same send-to-humans service as every other selection.

A panel's members are pinned (`NAME@VERSION`, or an imported judge): a judge's new version
votes only once it is made a member, so a new experimental judge changes no panel and no gate.
Each member votes with its own verdicts (its version's samples); samples vote inside their model
group (provider/model) first, then each group once. `majority`: a tie is sent; `unanimous`: any
disagreement is sent. With `send_dissent`, decided items where some group voted otherwise (or
abstained) are sent too. Items a member did not judge are counted per member (`missing`)."""

from collections import defaultdict
from dataclasses import dataclass, field

from django.db import transaction

from judging.models import Panel, PanelMember, PanelRule, Verdict
from judging.reports.agreement.panels import panel_item_votes
from judging.services.audit import panel_configured
from judging.services.calibration.send_to_humans import CHOSEN, items_send_to_humans
from judging.services.calibration.splits import items_in_split
from judging.services.judges.refs import JudgeRefError, judge_ref_resolve
from reviews.models import Project


class PanelError(ValueError):
    """A panel that cannot vote or be saved; the message says why."""


@dataclass
class PanelResult:
    decided: dict[int, str] = field(default_factory=dict)
    ties: list[int] = field(default_factory=list)
    dissent: list[int] = field(default_factory=list)
    missing: dict[str, list[int]] = field(default_factory=dict)  # member ref -> item pks
    sent: int = 0


def member_ref(member: PanelMember) -> str:
    return member.version.ref if member.version_id else member.judge.name


def _members(panel: Panel) -> list[PanelMember]:
    members = list(panel.members.select_related("judge", "version__config", "version__criterion"))
    if not members:
        raise PanelError(f"panel {panel.name!r}: it has no members")
    criteria = {m.version.criterion for m in members if m.version_id}
    if len(criteria) != 1:
        raise PanelError(
            f"panel {panel.name!r}: only panels with a judge version among their members vote "
            "here (its criterion is the one they vote on); a panel of imported judges is "
            "reported on every criterion they judged, in the agreement report and dashboard"
        )
    return members


def _counts(member: PanelMember, sample: int) -> bool:
    """A version votes with the samples it asks for (see `agreement._samples`)."""
    return member.version_id is None or sample < member.version.samples


def panel_result(panel: Panel, split: str = "all") -> tuple[PanelResult, object]:
    """The panel's current verdicts on the split's items, voted by the one panel rule
    (`panel_item_votes`, the agreement report's too): an item no sample settles (a tie, or
    only unparsed or unknown labels) is a tie here, for people to decide."""
    members = _members(panel)
    criterion = next(m.version.criterion for m in members if m.version_id)
    by_judge = defaultdict(list)
    for member in members:
        by_judge[member.judge_id].append(member)
    by_item: dict[int, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    judged: dict[int, set[int]] = defaultdict(set)  # member pk -> items
    rows = (
        Verdict.objects.current()
        .filter(
            criterion=criterion,
            judge_id__in=list(by_judge),
            item__in=items_in_split(project=panel.project, split=split),
        )
        .values_list("item_id", "judge_id", "sample", "label")
    )
    for item_id, judge_id, sample, label in rows:
        for member in by_judge[judge_id]:
            if _counts(member, sample):
                by_item[item_id][member.judge.model_group].append(label)
                judged[member.pk].add(item_id)
    result = PanelResult()
    for member in members:
        result.missing[member_ref(member)] = sorted(by_item.keys() - judged[member.pk])
    votes = panel_item_votes(by_item, criterion.labels, panel.rule)
    result.decided = dict(sorted(votes.labels.items()))
    result.ties = sorted(votes.ties | votes.unparsed_only)
    result.dissent = sorted(votes.dissent)
    return result, criterion


def panel_decide(*, panel: Panel, split: str = "all", actor=None) -> PanelResult:
    """Vote, then send the ties (and the dissent, if the panel says so) to human review."""
    result, criterion = panel_result(panel, split)
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


@transaction.atomic
def panel_configure(
    *,
    project: Project,
    name: str,
    rule: str,
    members: list[str],
    send_dissent: bool = False,
    actor=None,
) -> Panel:
    """Create a panel with its rule and members, each pinned as `NAME@VERSION` (or
    `provider/model` for an imported judge). Saying the same again changes nothing; a different
    rule or membership under an existing name, an unknown member or versions of different
    criteria are refused, changing nothing."""
    if rule not in PanelRule.values:
        raise PanelError(f"rule: {rule!r} is not one of {', '.join(PanelRule.values)}")
    if not members:
        raise PanelError("members: name at least one, as NAME@VERSION")
    try:
        resolved = [judge_ref_resolve(project=project, ref=ref) for ref in members]
    except JudgeRefError as exc:
        raise PanelError(f"members: {exc}") from None
    criteria = {r.version.criterion_id for r in resolved if r.version}
    if len(criteria) > 1:
        raise PanelError("members: every judge version must judge the same criterion")
    if len({(r.judge.pk, r.version) for r in resolved}) != len(resolved):
        raise PanelError("members: a member is named twice")
    wanted = sorted(r.ref for r in resolved)
    panel = Panel.objects.filter(project=project, name=name).first()
    if panel is not None:
        pinned = sorted(member_ref(m) for m in panel.members.select_related("judge", "version"))
        if (pinned, panel.rule, panel.send_dissent) != (wanted, rule, send_dissent):
            raise PanelError(
                f"panel {name!r} exists with {panel.rule} of {', '.join(pinned) or 'no members'}"
                ": its figures are pinned to those, so give the new panel a new name"
            )
        return panel
    panel = Panel.objects.create(project=project, name=name, rule=rule, send_dissent=send_dissent)
    PanelMember.objects.bulk_create(
        PanelMember(panel=panel, judge=r.judge, version=r.version) for r in resolved
    )
    panel_configured(panel, actor, members=wanted)
    return panel
