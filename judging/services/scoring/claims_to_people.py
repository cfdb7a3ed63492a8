"""Send a claim judge's decisions to people, like any judge's verdicts, so its agreement with
humans is measured on the dashboard (docs/scoring.md, "Claim decisions to people").

Each decided claim of a score run becomes an item (`claim-<run>-<n>`, the claim as its output,
what it is compared with as its input, where it came from in its metadata) with the judge's
decision as a verdict on one of two criteria, and a criterion question for the project's raters:

- `claim_supported` (a predicted claim: `supported`, `contradicted`, `undecidable`);
- `claim_matched` (a reference claim: `matched`, `missed`, `undecidable`).

The items, verdicts and questions are written by reviews' own import (docs/formats.md §4), so
they are the same rows as any import's, and sending the same run again changes nothing. The
judge's decision is not shown to the raters (it is a verdict, not content). Claims read from
evidence (no reference) are not sent: the raters would need the pages beside them.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from django.db import transaction

from judging.models import JudgeConfig, ScoreRun
from reviews.services.imports.pipeline import ImportReport, file_import

CRITERIA = {
    "predicted": {
        "type": "criterion", "name": "claim_supported", "version": "1",
        "labels": ["supported", "contradicted", "undecidable"], "positive": "supported",
        "text": "Does the reference (in the input) support this claim of the prediction? "
                "Undecidable when the reference does not say.",
    },
    "reference": {
        "type": "criterion", "name": "claim_matched", "version": "1",
        "labels": ["matched", "missed", "undecidable"], "positive": "matched",
        "text": "Does the prediction (in the input) state this claim of the reference?",
    },
}  # fmt: skip


class ClaimsToPeopleError(ValueError):
    """The run's claims cannot be sent; the message says why."""


def _judge(ref: str, project) -> dict:
    """The verdicts' judge: the claim judge version's own provider, model, temperature and
    prompt, so they sit under its judge row."""
    name, _, number = ref.rpartition("@")
    config = JudgeConfig.objects.filter(project=project, name=name).first()
    version = config and config.versions.filter(number=int(number)).first()
    if version is None:
        raise ClaimsToPeopleError(f"the claim judge {ref} is no longer in the project")
    return {"provider": version.provider, "model": version.model,
            "temperature": version.temperature, "prompt_sha256": version.prompt_sha256}  # fmt: skip


def claim_records(run: ScoreRun) -> dict[str, list[dict]]:
    """{side: [item and verdict records]} for every judged claim of the run, in order."""
    records: dict[str, list[dict]] = {"predicted": [], "reference": []}
    judges: dict[str, dict] = {}
    number = 0
    for section in run.report["sections"]:
        for case in section["cases"]:
            claims = case.get("claims")
            if not claims or not claims["judge"] or claims.get("reference_source") == "evidence":
                continue
            judge = judges.setdefault(claims["judge"], _judge(claims["judge"], run.project))
            for side, other in (("predicted", "reference"), ("reference", "predicted")):
                for claim in claims[side]:
                    number += 1
                    item_id = f"claim-{run.pk}-{number}"
                    records[side] += [
                        {"type": "item", "item_id": item_id, "output": claim["text"],
                         "input": {"compare_with": [c["text"] for c in claims[other]],
                                   "field": claim["path"]},
                         "metadata": {"score_run": run.pk, "case_id": case["case_id"],
                                      "producer": case["producer"], "stage_id": case["stage_id"],
                                      "claim_id": claim["id"], "side": side}},
                        {"type": "verdict", "item_id": item_id,
                         "criterion": CRITERIA[side]["name"], "label": claim["decision"],
                         "explanation": claim["explanation"], "judge": judge},
                    ]  # fmt: skip
    return records


@transaction.atomic
def claims_to_people(*, actor, project, run: ScoreRun) -> list[ImportReport]:
    """Import the run's judged claims as items with the judge's verdicts and a criterion
    question each; one report per file (criteria, predicted claims, reference claims)."""
    records = claim_records(run)
    if not any(records.values()):
        raise ClaimsToPeopleError(f"score run {run.pk} has no claim a claim judge decided")
    reports = []
    with tempfile.TemporaryDirectory(prefix="claims-") as folder:
        files = [("criteria", list(CRITERIA.values()), [])] + [
            (side, rows, [f"criterion:{CRITERIA[side]['name']}"])
            for side, rows in records.items()
            if rows
        ]
        for name, rows, questions in files:
            path = Path(folder) / f"score-run-{run.pk}-{name}.jsonl"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            reports.append(
                file_import(
                    actor=actor,
                    project=project,
                    path=path,
                    format="jsonl",
                    options={"questions": questions},
                )  # fmt: skip
            )
    return reports
