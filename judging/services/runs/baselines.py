"""Deterministic baseline judges (pure, no ORM): compare an item's output with its reference.

The cheapest judges there are, to put beside an LLM judge on the same held-out items:

- `exact`: the two JSON values are equal (strings character for character);
- `normalised`: equal under the review workflow's normalisation
  (`reviews.services.rating.normalise.same_value`: whitespace, case, `"1,200.00"` = `1200`);
- `numeric`: both read as numbers (the same rules) and differ by at most `rel_tol` relative to the
  larger magnitude (`math.isclose`), exactly equal when `rel_tol` is 0;
- `bleu`: sentence BLEU (sacrebleu's defaults, 0-1) of the output against the reference;
- `rouge`: ROUGE F-measure (rouge-score; `rouge1`, `rouge2` or `rougeL`, 0-1).

Each gives the criterion's positive label when it passes (for BLEU and ROUGE: score >=
`threshold`) and its other label otherwise; BLEU and ROUGE keep the score as the verdict's
confidence. Objects and lists are compared as canonical JSON text by BLEU and ROUGE.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any

from judging.metrics.text import as_text
from reviews.services.rating.normalise import comparable, same_value

KINDS = ("exact", "normalised", "numeric", "bleu", "rouge")
ROUGE_TYPES = ("rouge1", "rouge2", "rougeL")


class BaselineError(ValueError):
    """A baseline that cannot be set up as asked (a clear, user-facing reason)."""


@dataclass(frozen=True)
class Baseline:
    kind: str
    threshold: float = 0.5  # bleu / rouge: the passing score
    rel_tol: float = 0.0  # numeric
    rouge_type: str = "rougeL"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise BaselineError(
                f"unknown baseline {self.kind!r} (choose one of {', '.join(KINDS)})"
            )
        if not 0.0 <= self.threshold <= 1.0:
            raise BaselineError(f"threshold must be between 0 and 1, got {self.threshold}")
        if not 0.0 <= self.rel_tol < 1.0:
            raise BaselineError(f"relative tolerance must be in [0, 1), got {self.rel_tol}")
        if self.rouge_type not in ROUGE_TYPES:
            raise BaselineError(f"unknown ROUGE type {self.rouge_type!r}")

    @property
    def model(self) -> str:
        """How reports name it (`baseline/<model>`): the settings that change its labels."""
        if self.kind == "numeric":
            return f"numeric(rel_tol={self.rel_tol:g})"
        if self.kind == "bleu":
            return f"bleu>={self.threshold:g}"
        if self.kind == "rouge":
            return f"{self.rouge_type}>={self.threshold:g}"
        return self.kind

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the settings, stored as the judge's prompt fingerprint."""
        return hashlib.sha256(self.model.encode()).hexdigest()


@dataclass(frozen=True)
class Outcome:
    passed: bool
    score: float | None  # bleu / rouge only
    explanation: str


def _numeric(output: Any, reference: Any, rel_tol: float) -> Outcome:
    a, b = comparable(output), comparable(reference)
    if a[0] != "number" or b[0] != "number":
        which = "output" if a[0] != "number" else "reference"
        return Outcome(False, None, f"the {which} is not a number")
    passed = math.isclose(float(a[1]), float(b[1]), rel_tol=rel_tol) or a[1] == b[1]
    return Outcome(passed, None, f"{a[1]:f} vs {b[1]:f} (relative tolerance {rel_tol:g})")


def _bleu(output: str, reference: str) -> float:
    import sacrebleu  # imported here: only BLEU baselines need it

    return sacrebleu.sentence_bleu(output, [reference]).score / 100.0


def _rouge(output: str, reference: str, rouge_type: str) -> float:
    from rouge_score import rouge_scorer  # imported here: only ROUGE baselines need it

    scorer = rouge_scorer.RougeScorer([rouge_type])
    return scorer.score(reference, output)[rouge_type].fmeasure


def judge(baseline: Baseline, output: Any, reference: Any) -> Outcome:
    """Whether `output` passes against `reference` under `baseline`."""
    if baseline.kind == "exact":
        passed = output == reference and type(output) is type(reference)
        return Outcome(passed, None, "identical" if passed else "not identical")
    if baseline.kind == "normalised":
        passed = same_value(output, reference)
        return Outcome(passed, None, "same after normalisation" if passed else "different")
    if baseline.kind == "numeric":
        return _numeric(output, reference, baseline.rel_tol)
    if baseline.kind == "bleu":
        score = _bleu(as_text(output), as_text(reference))
    else:
        score = _rouge(as_text(output), as_text(reference), baseline.rouge_type)
    score = min(1.0, max(0.0, score))
    return Outcome(
        score >= baseline.threshold,
        score,
        f"{baseline.model.split('>=')[0]} {score:.3f} (passes at {baseline.threshold:g})",
    )
