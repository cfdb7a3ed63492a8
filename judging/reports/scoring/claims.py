"""Semantic comparison, as pure functions: which reference rows compare exactly and which by
claims, the claims of a prediction and of its reference, and each case's claim scores from a
claim judge's decisions (docs/scoring.md, "Semantic comparison").

- `auto`: a row compares exactly when its value is a scalar, a short string or JSON; by claims
  when it is free text (a string of more than FREE_TEXT_WORDS words, or with a line break), a
  table (a list whose members are all objects or lists) or a note (its last key is a NOTE_KEYS
  word).
- `semantic`: every row by claims, and the prediction's extra leaves are claims too.
- `exact`: every exact-compatible row exactly; the others are skipped, each named with why,
  never scored as a missing or wrong field.

A claim is one sentence of a text, one row of a table, or one `path = value` otherwise.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from judging.formats.json_paths import ABSENT, Path, lookup, show_path
from judging.formats.replies import UNDECIDABLE
from judging.metrics.claims import COUNTS, case_scores, pooled_scores

COMPARISONS = ("auto", "semantic", "exact")
FREE_TEXT_WORDS = 8
NOTE_KEYS = {"note", "notes", "comment", "comments", "remarks"}
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def semantic_kind(path: Path, value: Any) -> str:
    """`free text`, `table` or `note` for a row that compares by claims; "" when exact."""
    if path and isinstance(path[-1], str) and path[-1].casefold() in NOTE_KEYS:
        return "note"
    if isinstance(value, str) and (len(value.split()) > FREE_TEXT_WORDS or "\n" in value):
        return "free text"
    if isinstance(value, list) and value and all(isinstance(v, dict | list) for v in value):
        return "table"
    return ""


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(", ", ": "))


def claim_texts(path: Path, value: Any, kind: str | None = None) -> list[str]:
    """The claims a value makes: sentences of a text or note, rows of a table, else
    `path = value`. `kind`: the reference row's (a prediction's text at a free-text row is
    split into sentences however short it is); by default the value's own."""
    kind = semantic_kind(path, value) if kind is None else kind
    if isinstance(value, str) and kind in ("free text", "note"):
        return [s.strip() for s in _SENTENCE.split(value) if s.strip()]
    if isinstance(value, list) and value and all(isinstance(v, dict | list) for v in value):
        return [f"{show_path(path)} row {i + 1}: {_compact(v)}" for i, v in enumerate(value)]
    return [f"{show_path(path)} = {_compact(value)}"]


@dataclass
class ClaimTask:
    """What the claim judge is asked about one record: its claims and the reference's."""

    key: tuple[str, str, str]  # case id, producer, stage id
    predicted: list[dict] = field(default_factory=list)  # {"id", "path", "text"}
    reference: list[dict] = field(default_factory=list)
    evidence: tuple = ()  # no reference: (document id, page) the judge reads instead

    def ids(self) -> tuple[list[str], list[str]]:
        return [c["id"] for c in self.predicted], [c["id"] for c in self.reference]


def claim_task(
    key, prediction: Any, semantic_rows, extra: Sequence[Path], evidence: tuple = ()
) -> ClaimTask:
    """The claims of the prediction at the semantically compared rows (and its `extra` leaves)
    and of those rows' expected values; with `evidence` (no reference) the judge reads the
    reference claims from those pages itself."""
    task = ClaimTask(key, evidence=tuple(evidence))
    for path, expected in semantic_rows:
        kind = semantic_kind(path, expected)
        for text in claim_texts(path, expected, kind):
            task.reference.append({"id": f"r{len(task.reference) + 1}", "path": show_path(path),
                                   "text": text})  # fmt: skip
        predicted = lookup(prediction, path)
        if predicted is not ABSENT:
            for text in claim_texts(path, predicted, kind):
                task.predicted.append({"id": f"p{len(task.predicted) + 1}",
                                       "path": show_path(path), "text": text})  # fmt: skip
    for path in extra:
        for text in claim_texts(path, lookup(prediction, path)):
            task.predicted.append({"id": f"p{len(task.predicted) + 1}", "path": show_path(path),
                                   "text": text})  # fmt: skip
    return task


@dataclass(frozen=True)
class ClaimOutcome:
    """A claim judge's decisions on one task: {claim id: (decision, explanation)}."""

    judge: str  # NAME@VERSION
    decisions: Mapping[str, tuple[str, str]]
    fingerprint: str = ""
    error: str = ""  # the reply did not validate, or the call failed
    evidence_claims: tuple = ()  # EVIDENCE: the reference claims the judge read ({"id","text"})


def claims_entry(task: ClaimTask, outcome: ClaimOutcome | None, reason: str = "") -> dict:
    """The record's `claims` block: every claim with its decision, the counts and the four
    measures. Without an outcome (no claim judge) every claim is undecidable, with `reason`."""
    decisions = outcome.decisions if outcome else {}
    missing = (UNDECIDABLE, reason or "not judged")

    def rows(claims):
        return [
            {**c, "decision": decisions.get(c["id"], missing)[0],
             "explanation": decisions.get(c["id"], missing)[1]}
            for c in claims
        ]  # fmt: skip

    reference_claims = task.reference
    if task.evidence:  # no reference: the claims are those the judge read in the evidence
        reference_claims = [
            {**c, "path": None} for c in (outcome.evidence_claims if outcome else ())
        ]
    predicted, reference = rows(task.predicted), rows(reference_claims)
    counts = {
        "supported": sum(c["decision"] == "supported" for c in predicted),
        "contradicted": sum(c["decision"] == "contradicted" for c in predicted),
        "predicted_undecidable": sum(c["decision"] == UNDECIDABLE for c in predicted),
        "matched": sum(c["decision"] == "matched" for c in reference),
        "missed": sum(c["decision"] == "missed" for c in reference),
        "reference_undecidable": sum(c["decision"] == UNDECIDABLE for c in reference),
    }
    return {
        "reference_source": "evidence" if task.evidence else "reference",
        # from the evidence, the reference claims are the judge's own reading of it
        "reference_recall_label": "estimated by a judge" if task.evidence else None,
        "judge": outcome.judge if outcome else None,
        "fingerprint": outcome.fingerprint if outcome else None,
        "error": (outcome.error if outcome else reason) or None,
        "predicted": predicted,
        "reference": reference,
        "counts": counts,
        **case_scores(counts),
    }


def claims_verdict(entry: dict | None) -> str | None:
    """`fail` on a contradicted or missed claim, `pass` when something was decided and nothing
    failed, None when the judge decided nothing (or there were no claims)."""
    if not entry:
        return None
    counts = entry["counts"]
    if counts["contradicted"] or counts["missed"]:
        return "fail"
    if counts["supported"] or counts["matched"]:
        return "pass"
    return None


def claim_rows(cases: list[dict], seed: int, n_resamples: int) -> list[dict]:
    """Per producer and stage: the claim measures pooled over its semantically compared cases,
    each with a bootstrap CI over those cases."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for case in cases:
        if case["claims"] is not None:
            groups[(case["producer"], case["stage_id"])].append(case["claims"]["counts"])
    return [
        {
            "producer": producer,
            "stage_id": stage_id,
            "n_cases": len(counts),
            "counts": {k: sum(c[k] for c in counts) for k in COUNTS},
            **pooled_scores(counts, seed=seed, n_resamples=n_resamples),
        }
        for (producer, stage_id), counts in sorted(groups.items())
    ]


def claims_judged(scored: dict, claim_decider, no_judge: str) -> dict:
    """{record key: claims block} for every record with semantically compared rows: the claim
    judge's decisions, or (no judge) every claim undecidable with the reason `no_judge`.
    `scored`: {section: [(prediction, reference, compare()'s result)]}."""
    tasks = {
        p.key: claim_task(
            p.key, p.prediction, compared["_semantic"], compared["_extra"], ref.evidence
        )
        for pairs in scored.values()
        for p, ref, compared in pairs
        if compared["_semantic"] or compared["_extra"] or ref.evidence
    }
    outcomes = claim_decider(list(tasks.values())) if tasks and claim_decider else {}
    return {
        key: claims_entry(task, outcomes.get(key), "" if claim_decider else no_judge)
        for key, task in tasks.items()
    }
