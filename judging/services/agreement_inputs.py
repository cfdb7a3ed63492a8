"""What the agreement report is computed from: plain labels per criterion and judge.

Its own module so that the report builder (`agreement_build`) and the human-human part
(`agreement_human`) both depend on it, and not on each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class JudgeSamples:
    """One judge's verdicts on one criterion: item -> its samples' labels (and display orders)."""

    name: str  # "provider/model", as reports name judges
    model_group: str
    configuration: str
    samples: Mapping[str, Sequence[str]]
    orders: Mapping[str, Sequence[str]] = field(default_factory=dict)  # pairwise: "AB" / "BA"
    stale_items: frozenset[str] = frozenset()  # items with its verdicts on earlier content


@dataclass(frozen=True)
class CriterionInput:
    name: str
    version: str
    labels: Sequence[str]
    positive_label: str = ""
    ordinal: bool = False
    critical: bool = False
    pairwise: bool = False
    final_labels: Mapping[str, str] = field(default_factory=dict)  # item -> final human label
    human_ties: Sequence[str] = ()  # items whose human labels tie (no final label)
    rater_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    judges: Sequence[JudgeSamples] = ()
    stale_label_items: frozenset[str] = frozenset()  # items with labels on earlier content
    collapsed_at: str | None = None  # set by `agreement_cuts.collapse`
