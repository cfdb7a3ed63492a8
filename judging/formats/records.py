"""FORMATS §4: judging's record kinds (criteria, verdicts, human labels, pairwise verdicts).

They are read by reviews' JSONL/CSV reader (``reviews.formats.records``), which knows only the
schemas it is handed: ``SCHEMAS`` below reaches it through the import pipeline's registry
(``judging.services.imports.records``), so reviews knows nothing of verdicts.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from reviews.formats.errors import PathValueError
from reviews.formats.records import Record

__all__ = ["SCHEMAS", "Criterion", "HumanLabel", "Judge", "PairwiseVerdict", "Record", "Verdict"]

Label = Annotated[str, Field(min_length=1)]


class Judge(Record):
    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0)
    prompt_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")

    @property
    def name(self) -> str:
        """How reports name a judge: ``provider/model``."""
        return f"{self.provider}/{self.model}"


class Criterion(Record):
    type: Literal["criterion"] = "criterion"
    name: str = Field(min_length=1)
    labels: list[Label] = Field(min_length=1)
    positive: Label | None = None
    ordinal: bool = False
    critical: bool = False
    version: Label | None = None
    text: str | None = None

    @model_validator(mode="after")
    def _positive_is_a_label(self) -> Criterion:
        if len(set(self.labels)) != len(self.labels):
            raise PathValueError(("labels",), f"duplicate labels in {self.labels}")
        if self.positive is not None and self.positive not in self.labels:
            raise PathValueError(
                ("positive",), f"{self.positive!r} is not one of the labels {self.labels}"
            )
        return self


class Verdict(Record):
    type: Literal["verdict"] = "verdict"
    item_id: str = Field(min_length=1)
    criterion: str = Field(min_length=1)
    label: Label
    judge: Judge
    sample: int = Field(default=0, ge=0, le=32767)  # Verdict.sample's column (small integer)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    explanation: str | None = None
    raw: str | None = None


class HumanLabel(Record):
    type: Literal["human_label"] = "human_label"
    item_id: str = Field(min_length=1)
    criterion: str = Field(min_length=1)
    rater: str = Field(min_length=1)
    label: Label
    note: str | None = None


class PairwiseVerdict(Record):
    type: Literal["pairwise_verdict"] = "pairwise_verdict"
    item_id: str = Field(min_length=1)
    criterion: str | None = None
    answer_a: str = Field(min_length=1)
    answer_b: str = Field(min_length=1)
    display_order: list[Literal["A", "B"]] = Field(default_factory=lambda: ["A", "B"])
    winner: Literal["A", "B", "tie"]  # names the ORIGINAL answer, not the displayed position
    judge: Judge

    @field_validator("display_order")
    @classmethod
    def _permutation(cls, value: list[str]) -> list[str]:
        if sorted(value) != ["A", "B"]:
            raise ValueError('display_order must be ["A", "B"] or ["B", "A"]')
        return value


SCHEMAS = {
    "criterion": Criterion,
    "verdict": Verdict,
    "human_label": HumanLabel,
    "pairwise_verdict": PairwiseVerdict,
}
