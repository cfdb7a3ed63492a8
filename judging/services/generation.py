"""Provisional ground truth from evidence: a panel of blind readers, reconciled field by field.

Each reader's claims are compared with the same normalisation the raters' answers use
(reviews.services.normalise). A field every reader found, with at least `min_agreement` of them
on one value, becomes a row of the `generated` reference; anything else (a disagreement, a field
omitted by some readers or by all) becomes a `field` question with each reader's candidate, page
and quote. `second_read` asks again, blind, for the disputed paths only (those and no others);
where every reader now agrees the field is settled as a generated row, still to be approved.

The result is a FORMATS §2 review file per case, written beside a copy of its evidence and
imported through reviews' own import service: the same rows, events and exports as an imported
file, and the readings, the reconciliation and each prompt's SHA-256 kept in its metadata.
"""

import json
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from django.utils import timezone

from judging.models import JudgeConfig, Run, RunStatus
from judging.services.generation_read import Evidence, Reading, case_id, evidence_of, read_all
from judging.services.judge_configs import version_get
from judging.services.runner import provider_for
from reviews.services.imports import ImportReport, import_file
from reviews.services.normalise import comparable


class GenerationError(ValueError):
    """Generation cannot start as asked; the message names the reader or file."""


@dataclass
class CaseResult:
    case: str
    agreed: dict[str, str] = field(default_factory=dict)  # path -> "first read"/"second read"
    disputed: dict[str, str] = field(default_factory=dict)  # path -> reason


@dataclass
class GenerationResult:
    cases: list[CaseResult]
    report: ImportReport
    runs: list[Run]


def _page_id(page) -> str:
    return f"page-{int(page or 1):03}"


def reconcile(
    paths: list[str], readings: dict[str, Reading], min_agreement: float, union: bool = False
) -> dict:
    """{path: ("agreed", claim row) | (reason, [candidates])} for one case. `union`: a field some
    readers omitted but the others agree on (no conflicting value) is accepted too."""
    outcome = {}
    readers = list(readings)
    for path in paths:
        found = {r: readings[r].claims[path] for r in readers if path in readings[r].claims}
        groups = defaultdict(list)
        for reader, claim in found.items():
            groups[comparable(claim.value)].append(reader)
        best = max(groups.values(), key=len, default=[])
        complete = len(found) == len(readers) and len(best) / len(readers) >= min_agreement
        one_sided = union and found and len(groups) == 1
        if complete or one_sided:
            first = found[best[0]]
            confidences = [found[r].confidence for r in best if found[r].confidence is not None]
            outcome[path] = (
                "agreed",
                {
                    "path": path,
                    "expected_value": first.value,
                    "reference_id": _page_id(first.page),
                    "evidence": first.quote or None,
                    "confidence": sum(confidences) / len(confidences) if confidences else None,
                    "providers": best,
                },
            )
            continue
        reason = (
            "omitted_by_all" if not found
            else "omitted_by_some" if len(found) < len(readers) else "disagreement"
        )  # fmt: skip
        outcome[path] = (
            reason,
            [
                {
                    "provider": reader,
                    "expected_value": claim.value,
                    "reference_id": _page_id(claim.page),
                    "evidence": claim.quote or None,
                    "confidence": claim.confidence,
                }
                for reader, claim in found.items()
            ],
        )
    return outcome


def independence(version, producer: str) -> str:
    """A reader against the prediction's producer (`provider/model`): `same_model`,
    `same_provider` or `independent` (`unknown` when no producer is given)."""
    if not producer:
        return "unknown"
    provider, _, model = producer.partition("/")
    if (version.provider, version.model) == (provider, model):
        return "same_model"
    return "same_provider" if version.provider == provider else "independent"


def flag_related(outcome: dict, labels: dict[str, str]) -> None:
    """A field agreed only by readers related to the producer goes to review all the same."""
    for path, (status, row) in list(outcome.items()):
        if status == "agreed" and all(
            labels[r] in ("same_model", "same_provider") for r in row["providers"]
        ):
            candidate = {
                k: row[k] for k in ("expected_value", "reference_id", "evidence", "confidence")
            }
            outcome[path] = (
                "low_confidence",
                [{"provider": r, **candidate} for r in row["providers"]],
                "settled only by models of the prediction's producer family",
            )


def _readers(project, names: list[str]) -> dict[str, tuple[Run, object]]:
    runs = {}
    for name in names:
        config = JudgeConfig.objects.filter(project=project, name=name).first()
        if config is None:
            raise GenerationError(f"--provider {name!r}: no judge configuration of that name")
        version = version_get(config, None)
        if version.criterion_id is not None:
            raise GenerationError(
                f"--provider {name!r} judges a criterion; a ground-truth reader has none"
            )
        run = Run.objects.create(
            project=project, version=version, split="all", status=RunStatus.RUNNING,
            started_at=timezone.now(), confirmed_held_out=False,
        )  # fmt: skip
        runs[name] = (run, provider_for(run))
    return runs


def _review(case, evidence: Evidence, folder: str, fields, outcome, readings, runs, second):
    claims = [rest[0] for status, *rest in outcome.values() if status == "agreed"]
    items = [
        {"path": path, "reason": status, "candidates": rest[0], "note": (rest[1:] or [None])[0]}
        for path, (status, *rest) in outcome.items()
        if status != "agreed"
    ]
    return {
        "case_id": case,
        "status": "pending",
        "approved_by": None,
        "expected_fields": fields,
        "sources": [
            {
                "artifact_id": _page_id(p),
                "path": f"{folder}/{evidence.path.name}",
                "authority": "evidence",
                "metadata": {"page": p},
            }
            for p in range(1, evidence.pages + 1)
        ],  # fmt: skip
        "claims": claims,
        "review_items": items,
        "generation": {
            "readers": {
                name: {
                    "version": run.version.number,
                    "model": f"{run.version.provider}/{run.version.model}",
                    "prompt_sha256": run.version.prompt_sha256,
                    "claims": {p: c.model_dump() for p, c in readings[name].claims.items()},
                    "error": readings[name].error,
                }
                for name, (run, _) in runs.items()
            },
            "reconciliation": {path: status for path, (status, *_) in outcome.items()},
            "second_read": second,
        },
    }


def generate_ground_truth(
    *,
    project,
    paths: list[Path],
    fields: list[str],
    instruction: str,
    readers: list[str],
    min_agreement: float = 1.0,
    second_read: bool = False,
    union: bool = False,
    producer: str = "",
    actor=None,
) -> GenerationResult:
    if not fields or not instruction.strip() or not readers:
        raise GenerationError("give the expected fields, an instruction and at least one reader")
    if not 0 < min_agreement <= 1:
        raise GenerationError("--min-agreement: between 0 (exclusive) and 1")
    evidence = {}
    for path in paths:
        found = evidence_of(Path(path))
        evidence[case_id(found)] = found
    runs = _readers(project, readers)
    jobs = [(case, ev, instruction) for case, ev in evidence.items()]
    first = read_all(runs, jobs, lambda case: fields)
    outcomes, seconds = {}, {}
    for case in evidence:
        readings = {name: first[(case, name)] for name in runs}
        outcomes[case] = reconcile(fields, readings, min_agreement, union)
    if second_read:
        disputed = {
            c: [p for p, (s, *_) in o.items() if s != "agreed"] for c, o in outcomes.items()
        }
        again = read_all(runs, jobs, lambda case: disputed[case])
        for case, paths_again in disputed.items():
            if not paths_again:
                continue
            readings = {name: again[(case, name)] for name in runs}
            settled = reconcile(paths_again, readings, 1.0)
            seconds[case] = [p for p, (s, *_) in settled.items() if s == "agreed"]
            outcomes[case].update({p: settled[p] for p in seconds[case]})
    labels = {name: independence(run.version, producer) for name, (run, _) in runs.items()}
    for outcome in outcomes.values():
        if producer:
            flag_related(outcome, labels)
    report = _import(project, evidence, fields, outcomes, first, runs, seconds, actor, labels)
    for run, provider in runs.values():
        provider.close()
        Run.objects.filter(pk=run.pk).update(status=RunStatus.DONE, finished_at=timezone.now())
    cases = [
        CaseResult(
            case,
            {
                p: ("second read" if p in seconds.get(case, []) else "first read")
                for p, (s, *_) in o.items()
                if s == "agreed"
            },
            {p: s for p, (s, *_) in o.items() if s != "agreed"},
        )  # fmt: skip
        for case, o in outcomes.items()
    ]
    return GenerationResult(cases, report, [run for run, _ in runs.values()])


def _import(project, evidence, fields, outcomes, first, runs, seconds, actor, labels):
    with tempfile.TemporaryDirectory(prefix="generated-") as tmp:
        lines = []
        for case, ev in evidence.items():
            (Path(tmp) / case).mkdir()
            shutil.copyfile(ev.path, Path(tmp) / case / ev.path.name)
            readings = {name: first[(case, name)] for name in runs}
            review = _review(
                case, ev, case, fields, outcomes[case], readings, runs, seconds.get(case, [])
            )
            for name, label in labels.items():
                review["generation"]["readers"][name]["independence"] = label
            lines.append(json.dumps(review, ensure_ascii=False))
        target = Path(tmp) / "generated.jsonl"
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return import_file(actor=actor, project=project, path=target, format="review")
