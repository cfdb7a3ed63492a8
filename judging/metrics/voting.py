"""Pairwise-verdict position-swap consistency and model-balanced panel voting.

Ties are reported as ties, never broken (no first-seen or alphabetical winner).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .stat import Stat

Rule = Literal["majority", "unanimous"]
Status = Literal["decided", "tie", "no_consensus", "no_votes"]


def position_swap_consistency(
    original_order: Sequence[Hashable | None],
    swapped_order: Sequence[Hashable | None],
    *,
    swapped_in_display_terms: bool = False,
    a: Hashable = "A",
    b: Hashable = "B",
) -> Stat:
    """Share of pairs whose winner is the same when the two answers are shown in both orders.

    ``original_order[i]`` / ``swapped_order[i]``: the verdict on pair i shown as (A, B) / (B, A),
    naming the ORIGINAL answer (``a``, ``b`` or e.g. ``"tie"``); ``None`` = not judged in that
    order. If ``swapped_in_display_terms`` the swapped verdicts name display slots and ``a``/``b``
    are exchanged first. consistency = #(both orders, same winner) / #(both orders).
    Undefined: no pair was judged in both orders.
    """
    if len(original_order) != len(swapped_order):
        raise ValueError(
            f"{len(original_order)} original verdicts but {len(swapped_order)} swapped"
        )
    flip = {a: b, b: a} if swapped_in_display_terms else {}
    both = same = 0
    for first, second in zip(original_order, swapped_order, strict=True):
        if first is None or second is None:
            continue
        both += 1
        same += first == flip.get(second, second)
    if both == 0:
        return Stat.undefined("no pair was judged in both display orders")
    return Stat(same / both)


@dataclass(frozen=True, slots=True)
class PanelVote:
    """Outcome of a panel vote. ``label`` is set only when ``status == "decided"``.

    status: ``decided``; ``tie`` (majority: top labels tied, listed in ``tied``);
    ``no_consensus`` (unanimous: groups disagree or a group abstained); ``no_votes``.
    ``group_votes`` maps each voting group to its label, or None when it abstained (tie inside).
    """

    label: Hashable | None
    status: Status
    reason: str | None = None
    group_votes: dict[Hashable, Hashable | None] = field(default_factory=dict)
    tied: tuple[Hashable, ...] = ()

    @property
    def is_decided(self) -> bool:
        return self.status == "decided"


def _top(labels: Iterable[Hashable]) -> tuple[Hashable, ...]:
    """Labels with the highest count, in first-seen order (several = a tie)."""
    counts = Counter(labels)
    if not counts:
        return ()
    best = max(counts.values())
    return tuple(label for label, count in counts.items() if count == best)


def group_vote(samples: Iterable[Hashable | None]) -> Hashable | None:
    """A model group's vote: its samples' most common label; None (abstain) on a tie or none."""
    top = _top(s for s in samples if s is not None)
    return top[0] if len(top) == 1 else None


def _grouped(votes: Mapping[Hashable, Sequence[Hashable | None]] | Iterable[tuple[Hashable, Any]]):
    if isinstance(votes, Mapping):
        return {group: list(samples) for group, samples in votes.items()}
    grouped: dict[Hashable, list[Any]] = {}
    for group, label in votes:
        grouped.setdefault(group, []).append(label)
    return grouped


def panel_vote(
    votes: Mapping[Hashable, Sequence[Hashable | None]]
    | Iterable[tuple[Hashable, Hashable | None]],
    *,
    rule: Rule = "majority",
) -> PanelVote:
    """Model-balanced panel vote: samples vote inside their model group, then each group once.

    ``votes``: ``{group: [label, ...]}`` or ``[(group, label), ...]``; None = missing sample.
    Inside a group: the most common label; a tie -> the group abstains. Groups whose samples
    are all missing do not vote. ``majority``: the label with the most group votes among
    non-abstaining groups (plurality); equal top counts -> ``tie``. ``unanimous``: every voting
    group, abstainers included, must cast the same label, else ``no_consensus``.
    No voting group -> ``no_votes``.
    """
    if rule not in ("majority", "unanimous"):
        raise ValueError(f"rule must be 'majority' or 'unanimous', got {rule!r}")
    group_votes = {
        group: group_vote(samples)
        for group, samples in _grouped(votes).items()
        if any(s is not None for s in samples)
    }
    if not group_votes:
        return PanelVote(None, "no_votes", "no group cast a vote (no non-missing samples)")
    cast = [label for label in group_votes.values() if label is not None]
    if rule == "unanimous":
        abstained = [g for g, label in group_votes.items() if label is None]
        if abstained:
            reason = f"group(s) {abstained!r} abstained (tie among their samples)"
            return PanelVote(None, "no_consensus", reason, group_votes)
        distinct = list(dict.fromkeys(cast))
        if len(distinct) > 1:
            return PanelVote(None, "no_consensus", f"groups disagree: {distinct!r}", group_votes)
        return PanelVote(distinct[0], "decided", None, group_votes)
    if not cast:
        return PanelVote(
            None, "no_votes", "every group abstained (ties inside groups)", group_votes
        )
    top = _top(cast)
    if len(top) > 1:
        return PanelVote(None, "tie", f"tie between {list(top)!r}", group_votes, top)
    return PanelVote(top[0], "decided", None, group_votes)


def majority_vote(votes: Any) -> PanelVote:
    """``panel_vote(votes, rule="majority")``."""
    return panel_vote(votes, rule="majority")


def unanimous_vote(votes: Any) -> PanelVote:
    """``panel_vote(votes, rule="unanimous")``."""
    return panel_vote(votes, rule="unanimous")


def first_position_win_rate(
    verdicts: Iterable[tuple[Hashable, str]], *, z: float = 1.959963984540054
) -> Stat:
    """Share of decided pairwise verdicts won by the answer shown first, with a Wilson interval
    (95% by default). ``verdicts``: ``(winner, display order)``, the winner naming the ORIGINAL
    answer ("A"/"B"; anything else, such as "tie", is left out) and the order "AB" or "BA".
    0.5 = no position bias. Wilson, hand-written (three lines), because the normal interval
    leaves [0, 1] at the small counts a calibration set has."""
    wins = n = 0
    for winner, order in verdicts:
        if winner not in ("A", "B") or order not in ("AB", "BA"):
            continue
        n += 1
        wins += winner == order[0]
    if n == 0:
        return Stat.undefined("no decided verdict with a known display order")
    share = wins / n
    centre = (share + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (share * (1 - share) / n + z * z / (4 * n * n)) ** 0.5
    return Stat(share, (max(0.0, centre - half), min(1.0, centre + half)))
