"""Dependency-aware failure attribution (the `visual_evals` rule), pure.

A pipeline is a set of stages; each stage has a verdict (`pass`, `fail` or `undecidable`) and
the stages it depends on. A stage's upstream is every stage it depends on, directly or through
others. Its `failure_context`:

- `indeterminate`: an upstream stage's result is missing (no record for it) or undecidable:
  whatever happened here cannot be pinned on anyone;
- `current_stage`: it failed and every upstream stage passed: the fault is its own;
- `upstream_or_combined`: it failed and an upstream stage failed too: the bad input may explain
  it, or both are wrong;
- `upstream`: it passed on the input it got, but an upstream stage failed (its output may still
  be unusable downstream);
- `None`: it passed and so did everything upstream, or its own result is undecidable with
  nothing wrong upstream.

Example (`tests/judging/test_attribution.py`): "invoice extraction" -> "total". Extraction wrong
and total wrong: extraction `current_stage`, total `upstream_or_combined`. Extraction right and
total wrong: total `current_stage`. Extraction wrong, total right: total `upstream`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

PASS = "pass"  # noqa: S105 (a verdict, not a password)
FAIL = "fail"
UNDECIDABLE = "undecidable"
MISSING = "missing"  # an upstream stage with no record

CURRENT_STAGE = "current_stage"
UPSTREAM = "upstream"
UPSTREAM_OR_COMBINED = "upstream_or_combined"
INDETERMINATE = "indeterminate"
CONTEXTS = (CURRENT_STAGE, UPSTREAM, UPSTREAM_OR_COMBINED, INDETERMINATE)


@dataclass(frozen=True)
class Stage:
    verdict: str  # PASS, FAIL or UNDECIDABLE
    depends_on: Sequence[str] = ()


@dataclass(frozen=True)
class Attribution:
    verdict: str
    upstream: tuple[tuple[str, str], ...]  # (stage id, verdict), nearest first
    failure_context: str | None


def upstream_of(stages: Mapping[str, Stage], stage_id: str) -> list[str]:
    """Every stage `stage_id` depends on, directly or not, nearest first (breadth-first)."""
    seen: list[str] = []
    frontier = list(stages[stage_id].depends_on)
    while frontier:
        current = frontier.pop(0)
        if current in seen or current == stage_id:
            continue
        seen.append(current)
        if current in stages:
            frontier.extend(stages[current].depends_on)
    return seen


def failure_context(verdict: str, upstream_verdicts: Sequence[str]) -> str | None:
    if any(v in (MISSING, UNDECIDABLE) for v in upstream_verdicts):
        return INDETERMINATE
    upstream_failed = FAIL in upstream_verdicts
    if verdict == FAIL:
        return UPSTREAM_OR_COMBINED if upstream_failed else CURRENT_STAGE
    if verdict == PASS and upstream_failed:
        return UPSTREAM
    return None


def attribute(stages: Mapping[str, Stage]) -> dict[str, Attribution]:
    """The attribution of every stage of one pipeline (one case, one producer)."""
    out = {}
    for stage_id, stage in stages.items():
        upstream = tuple(
            (other, stages[other].verdict if other in stages else MISSING)
            for other in upstream_of(stages, stage_id)
        )
        context = failure_context(stage.verdict, [v for _, v in upstream])
        out[stage_id] = Attribution(stage.verdict, upstream, context)
    return out
