"""What the agreement report is computed from: plain labels per criterion and judge.

Its own module so that the report builder (`agreement_build`) and the human-human part
(`agreement_human`) both depend on it, and not on each other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class JudgeSamples:
    """One judge version's verdicts on one criterion: item -> its samples' labels (and display
    orders). A judge run from Evalsite is one entry per version (`judge_name`, `judge_version`);
    imported verdicts have neither."""

    name: str  # "provider/model", as reports name judges
    model_group: str
    configuration: str
    samples: Mapping[str, Sequence[str]]
    orders: Mapping[str, Sequence[str]] = field(default_factory=dict)  # pairwise: "AB" / "BA"
    # item -> each sample's confidence (None: not given), in the order of its labels
    confidences: Mapping[str, Sequence[float | None]] = field(default_factory=dict)
    stale_items: frozenset[str] = frozenset()  # items with its verdicts on earlier content
    judge_name: str | None = None  # the JudgeConfig's name
    judge_version: int | None = None

    @property
    def ref(self) -> str:
        """`NAME@VERSION` for a configured judge, `provider/model` for imported verdicts."""
        return self.name if self.judge_name is None else f"{self.judge_name}@{self.judge_version}"

    @property
    def key(self) -> tuple:
        """Unique within a criterion (two imported judges may share `provider/model`)."""
        return (self.ref, self.configuration)


@dataclass(frozen=True)
class PanelInput:
    """A configured panel: its rule and pinned members (a member with no verdict has none)."""

    name: str
    rule: str
    members: Sequence[JudgeSamples]

    @property
    def ref(self) -> str:
        return f"panel:{self.name}"


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
    panels: Sequence[PanelInput] = ()
    output_chars: Mapping[str, int] = field(default_factory=dict)  # item -> its output's length
    collapsed_at: str | None = None  # set by `agreement_cuts.collapse`
