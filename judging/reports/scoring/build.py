"""Scoring predictions against references, as a pure function (no ORM): docs/scoring.md.

Each prediction is compared field by field with its case's reference rows, using the review
workflow's normalisation (`reviews.services.rating.normalise.same_value`: `"1,200.00"` = `1200`, case and
inner whitespace folded), so a value people would call the same scores as correct.

- A field is one reference row in the record's scope: `correct` (same value), `wrong` (present,
  different) or `missing` (the prediction has no value at that path). `field_accuracy` =
  correct / annotated fields in scope (undefined with the reason when there are none).
- `extra`: leaf paths of the prediction no reference row covers (at, under or above it).
- Per field across cases: the share correct with a seeded percentile bootstrap CI.
- Per producer, the headline: every annotated field of its records pooled (correct / fields),
  with a percentile bootstrap CI that resamples whole cases (a case's fields and stages go
  together: they are not independent), and how many records were wholly correct.
- A stage passes when every field in its scope is correct, fails otherwise, and is undecidable
  with no field in scope or no reference; `attribution` then gives each stage its
  `failure_context`.

Free text, tables and notes compare by claims a claim judge decides (reports/scoring/claims.py). Ground
truth, the provisional (`generated`) reference and evidence only are never mixed: each has its
own section; the provisional one says `agreement` wherever the other says `accuracy`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from judging.formats.json_paths import ABSENT, Path, is_under, leaves, lookup, parse_path, show_path
from judging.formats.predictions import Prediction
from judging.metrics import Stat, bootstrap_items, bootstrap_table
from judging.reports.attribution import (
    CONTEXTS,
    FAIL,
    PASS,
    UNDECIDABLE,
    Stage,
    attribute,
)
from judging.reports.scoring.claims import (
    ClaimOutcome,
    ClaimTask,
    claim_rows,
    claims_judged,
    claims_verdict,
    semantic_kind,
)
from reviews.services.rating.normalise import same_value

N_RESAMPLES = 2000
CI_LEVEL = 0.95
GROUND_TRUTH = "ground_truth"
GENERATED = "generated"
EVIDENCE = "evidence"  # no reference: the claim judge reads the item's evidence pages
BY_EVIDENCE = "claims checked against the evidence by a claim judge (no reference)"
SECTIONS = {
    GROUND_TRUTH: {"measure": "accuracy", "label": "accuracy against approved ground truth"},
    GENERATED: {"measure": "agreement", "label": "agreement with a provisional AI reference"},
    EVIDENCE: {"measure": "agreement", "label": BY_EVIDENCE},
}
NO_FIELDS = "no annotated field in this record's scope"
NO_GROUND_TRUTH = "no approved ground truth"
NO_REFERENCE = "no reference at all (neither approved ground truth nor a generated one)"
GENERATED_HINT = " (--allow-generated scores it against the provisional AI reference)"
EVIDENCE_HINT = (
    "; its evidence can be checked by a claim judge (--claim-judge, not --comparison exact)"
)
NO_CLAIM_JUDGE = "semantic comparison needs a claim judge (--claim-judge NAME)"
NO_CONTEXT = "none"  # the counts' column for stages with nothing to attribute


@dataclass(frozen=True)
class ReferenceInput:
    authority: str  # GROUND_TRUTH, GENERATED or EVIDENCE
    version: int
    rows: Sequence[Mapping[str, Any]]  # {"path": JSON path, "expected_value": value}
    evidence: tuple = ()  # EVIDENCE: (document id, page) of the pages the claim judge reads


@dataclass(frozen=True)
class CaseReferences:
    ground_truth: ReferenceInput | None = None
    generated: ReferenceInput | None = None
    evidence: tuple = ()  # (document id, page) of the item's evidence, for EVIDENCE scoring


DECLARED_FIELDS = "declared_fields"
EVERY_REFERENCE_PATH = "every_reference_path"


def _scope(prediction: Prediction) -> list[Path] | None:
    """Reference paths the record answers for: its declared `fields`; None = every row. A stage
    without `fields` answers for every reference path, so leaving a field out counts as missing
    (scoring it only on its own keys let an incomplete extraction pass)."""
    if prediction.fields is not None:
        return [parse_path(f) for f in prediction.fields]
    return None


def scope_entry(prediction: Prediction) -> dict[str, Any]:
    """What the report says it scored the record on."""
    if prediction.fields is None:
        return {"scope": EVERY_REFERENCE_PATH, "scope_fields": None}
    return {"scope": DECLARED_FIELDS, "scope_fields": list(prediction.fields)}


def compare(
    prediction: Prediction, rows: Sequence[Mapping[str, Any]], comparison: str = "auto"
) -> dict[str, Any]:
    """Field outcomes, missing, extra and skipped paths of one record against one reference's
    rows; `_semantic`: the rows compared by claims instead (reports/scoring/claims.py), `(path, expected)`."""
    annotated = [(parse_path(row["path"]), row["expected_value"]) for row in rows]
    scope = _scope(prediction)
    fields, skipped, semantic = [], [], []
    for path, expected in annotated:
        if scope is not None and not any(is_under(path, prefix) for prefix in scope):
            continue
        kind = "all" if comparison == "semantic" else semantic_kind(path, expected)
        if kind and comparison == "exact":
            skipped.append({"path": show_path(path), "reason": f"{kind}: not exact-compatible"})
            continue
        if kind:
            semantic.append((path, expected))
            continue
        predicted = lookup(prediction.prediction, path)
        if predicted is ABSENT:
            outcome, predicted = "missing", None
        else:
            outcome = "correct" if same_value(predicted, expected) else "wrong"
        fields.append(
            {
                "path": show_path(path),
                "expected": expected,
                "predicted": predicted,
                "outcome": outcome,
            }
        )
    extra = [
        leaf
        for leaf in leaves(prediction.prediction)
        if leaf and not any(is_under(leaf, p) or is_under(p, leaf) for p, _ in annotated)
    ]
    return {
        "fields": fields,
        "missing": [f["path"] for f in fields if f["outcome"] == "missing"],
        "extra": [show_path(leaf) for leaf in extra],
        "skipped": skipped,
        "_semantic": semantic,
        "_extra": extra if comparison == "semantic" else [],
    }


def _share(correct: int, total: int, reason: str) -> Stat:
    return Stat(correct / total) if total else Stat.undefined(reason)


def _share_values(tables: np.ndarray) -> np.ndarray:
    """Share of the first cell in tables `[[correct, wrong], [0, 0]]`: resampling the table's
    cells (multinomial) is resampling the items, so `bootstrap_table` does it vectorised."""
    total = tables.sum(axis=(-2, -1))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, tables[..., 0, 0] / total, np.nan)


def share_ci(correct: int, total: int, *, seed: int, n_resamples: int) -> Stat:
    """The share correct with a percentile bootstrap CI over the items."""
    point = _share(correct, total, "no case annotates this field")
    if not total:
        return point
    table = np.array([[correct, total - correct], [0, 0]])
    result = bootstrap_table(
        table,
        _share_values,
        n_resamples=n_resamples,
        level=CI_LEVEL,
        method="percentile",
        rng=seed,
        estimate=point,
    )
    return result.estimate


def _verdict(n_fields: int, n_correct: int, claims: dict | None) -> str:
    """Fail on a wrong or missing field or a contradicted or missed claim; pass when something
    was decided and nothing failed; undecidable when nothing was."""
    by_claims = claims_verdict(claims)
    if (n_fields and n_correct < n_fields) or by_claims == FAIL:
        return FAIL
    return PASS if n_fields or by_claims == PASS else UNDECIDABLE


def _case_row(
    prediction: Prediction, reference: ReferenceInput, measure: str, compared: dict, claims
) -> dict[str, Any]:
    n_fields = len(compared["fields"])
    n_correct = sum(f["outcome"] == "correct" for f in compared["fields"])
    return {
        "case_id": prediction.case_id,
        "producer": prediction.producer,
        "stage_id": prediction.stage_id,
        "operation": prediction.operation,
        "record": prediction.record,
        "reference_version": reference.version,
        **scope_entry(prediction),
        "n_fields": n_fields,
        "n_correct": n_correct,
        f"field_{measure}": _share(n_correct, n_fields, NO_FIELDS).as_dict(),
        "verdict": _verdict(n_fields, n_correct, claims),
        **{key: value for key, value in compared.items() if not key.startswith("_")},
        "claims": claims,
    }


def _field_rows(cases: list[dict], measure: str, seed: int, n_resamples: int) -> list[dict]:
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for case in cases:
        for field in case["fields"]:
            groups[(case["producer"], case["stage_id"], field["path"])].append(field["outcome"])
    rows = []
    for (producer, stage_id, path), outcomes in sorted(groups.items()):
        correct = outcomes.count("correct")
        stat = share_ci(correct, len(outcomes), seed=seed, n_resamples=n_resamples)
        rows.append(
            {
                "producer": producer,
                "stage_id": stage_id,
                "path": path,
                "n": len(outcomes),
                "correct": correct,
                "wrong": outcomes.count("wrong"),
                "missing": outcomes.count("missing"),
                measure: stat.as_dict(),
            }
        )
    return rows


def _producer_rows(cases: list[dict], measure: str, seed: int, n_resamples: int) -> list[dict]:
    by_producer: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    passed: dict[str, int] = defaultdict(int)
    records: dict[str, int] = defaultdict(int)
    for case in cases:
        tally = by_producer[case["producer"]][case["case_id"]]
        tally[0] += case["n_correct"]
        tally[1] += case["n_fields"]
        passed[case["producer"]] += case["verdict"] == PASS
        records[case["producer"]] += 1
    rows = []
    for producer, per_case in sorted(by_producer.items()):
        correct, fields = np.array(list(per_case.values())).T

        def pooled(index, correct=correct, fields=fields):
            total = fields[index].sum()
            return correct[index].sum() / total if total else None

        stat = bootstrap_items(
            len(per_case), pooled, n_resamples=n_resamples, level=CI_LEVEL,
            method="percentile", rng=seed,
        ).estimate  # fmt: skip
        rows.append(
            {
                "producer": producer,
                "n_cases": len(per_case),
                "n_records": records[producer],
                "records_correct": passed[producer],
                "n_fields": int(fields.sum()),
                "correct": int(correct.sum()),
                measure: stat.as_dict(),
            }
        )
    return rows


def _pipelines(cases: list[dict], depends: Mapping[tuple, tuple[str, ...]]) -> list[dict]:
    by_pipeline: dict[tuple[str, str], dict[str, dict]] = defaultdict(dict)
    for case in cases:
        by_pipeline[(case["case_id"], case["producer"])][case["stage_id"]] = case
    pipelines = []
    for (case_id, producer), stages in sorted(by_pipeline.items()):
        plain = {s: Stage(c["verdict"], depends[(case_id, producer, s)]) for s, c in stages.items()}
        attributions = attribute(plain)
        rows = []
        for stage_id, case in stages.items():
            found = attributions[stage_id]
            case["failure_context"] = found.failure_context
            case["upstream"] = [{"stage_id": s, "verdict": v} for s, v in found.upstream]
            rows.append(
                {
                    "stage_id": stage_id,
                    "operation": case["operation"],
                    "depends_on": list(plain[stage_id].depends_on),
                    "verdict": found.verdict,
                    "upstream": case["upstream"],
                    "failure_context": found.failure_context,
                }
            )
        pipelines.append({"case_id": case_id, "producer": producer, "stages": rows})
    return pipelines


def _stage_counts(cases: list[dict]) -> list[dict]:
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for case in cases:
        row = counts.setdefault(
            (case["producer"], case["stage_id"]), dict.fromkeys((*CONTEXTS, NO_CONTEXT), 0)
        )
        row[case["failure_context"] or NO_CONTEXT] += 1
    return [
        {"producer": producer, "stage_id": stage_id, "contexts": row}
        for (producer, stage_id), row in sorted(counts.items())
    ]


def _section(authority, scored, judged, seed, n_resamples) -> dict[str, Any]:
    measure = SECTIONS[authority]["measure"]
    cases = [
        _case_row(p, reference, measure, compared, judged.get(p.key))
        for p, reference, compared in scored
    ]
    depends = {p.key: p.depends_on for p, _, _ in scored}
    pipelines = _pipelines(cases, depends)
    return {
        "reference": authority,
        **SECTIONS[authority],
        "n_cases": len({c["case_id"] for c in cases}),
        "n_records": len(cases),
        "cases": cases,
        "producers": _producer_rows(cases, measure, seed, n_resamples),
        "fields": _field_rows(cases, measure, seed, n_resamples),
        "claim_scores": claim_rows(cases, seed, n_resamples),
        "pipelines": pipelines,
        "stage_counts": _stage_counts(cases),
        "bootstrap": {
            "method": "percentile",
            "level": CI_LEVEL,
            "n_resamples": n_resamples,
            "seed": seed,
        },
    }


def score_report_build(
    *,
    project: str,
    computed_at: str,
    source: str,
    predictions: Sequence[Prediction],
    references: Mapping[str, CaseReferences],
    allow_generated: bool = False,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    comparison: str = "auto",
    claim_decider: Callable[[list[ClaimTask]], Mapping[tuple, ClaimOutcome]] | None = None,
) -> dict[str, Any]:
    """The whole report (JSON-ready). `references`: case id -> its newest references.
    `claim_decider(tasks)`: the claim judge's decisions per record key (reports/scoring/claims.py)."""
    scored: dict[str, list] = {GROUND_TRUTH: [], GENERATED: [], EVIDENCE: []}
    unscored = []
    for p in predictions:
        refs = references.get(p.case_id, CaseReferences())
        if refs.ground_truth is not None:
            ref = refs.ground_truth
            scored[GROUND_TRUTH].append((p, ref, compare(p, ref.rows, comparison)))
        elif allow_generated and refs.generated is not None:
            ref = refs.generated
            scored[GENERATED].append((p, ref, compare(p, ref.rows, comparison)))
        elif refs.evidence and claim_decider and comparison != "exact":
            ref = ReferenceInput(EVIDENCE, 0, (), refs.evidence)
            scored[EVIDENCE].append((p, ref, compare(p, (), "semantic")))
        else:
            reason = NO_GROUND_TRUTH + GENERATED_HINT if refs.generated else NO_REFERENCE
            if refs.evidence and not refs.generated:
                reason += EVIDENCE_HINT
            unscored.append(
                {
                    "case_id": p.case_id,
                    "producer": p.producer,
                    "stage_id": p.stage_id,
                    "record": p.record,
                    "reason": reason,
                }
            )
    authorities = (GROUND_TRUTH, GENERATED) if allow_generated else (GROUND_TRUTH,)
    authorities += (EVIDENCE,) if scored[EVIDENCE] else ()
    judged = claims_judged(scored, claim_decider, NO_CLAIM_JUDGE)
    return {
        "project": project,
        "computed_at": computed_at,
        "source": source,
        "allow_generated": allow_generated,
        "comparison": comparison,
        "n_records": len(predictions),
        "sections": [_section(a, scored[a], judged, seed, n_resamples) for a in authorities],
        "unscored": unscored,
    }
