"""Provisional ground truth from evidence: a panel of blind readers, reconciled field by field.

Each reader's claims are compared with the same normalisation the raters' answers use
(reviews.services.rating.normalise). A field every reader found, with at least `min_agreement` of them
on one value, becomes a row of the `generated` reference; anything else (a disagreement, a field
omitted by some readers or by all) becomes a `field` question with each reader's candidate, page
and quote. `second_read` asks again, blind, for the disputed paths only (those and no others);
where every reader now agrees the field is settled as a generated row, still to be approved.

The result is a FORMATS §2 review file per case, written beside a copy of its evidence and
imported through reviews' own import service: the same rows, events and exports as an imported
file. Every reader's claims, the reconciliation, each prompt's SHA-256 and each reader's
independence from the prediction's producer go to the item's timeline (generation_record).
"""

import json
import shutil
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from django.utils import timezone

from judging.models import JudgeConfig, Run, RunStatus
from judging.providers import ProviderError
from judging.services.generation.read import Evidence, Reading, case_id, evidence_of, read_all
from judging.services.generation.record import (
    flag_related,
    generation_data,
    generation_record,
    independence,
    known_case,
)
from judging.services.judges.configs import version_get
from judging.services.runs.budgets import BudgetError, budget_amount, budget_needs_price
from judging.services.runs.runner import provider_for
from reviews.services.imports.pipeline import ImportReport, file_import
from reviews.services.rating.normalise import comparable


class GenerationError(ValueError):
    """Generation cannot start as asked; the message names the reader or file."""


@dataclass
class CaseResult:
    case: str
    agreed: dict[str, str] = field(default_factory=dict)  # path -> "first read"/"second read"
    disputed: dict[str, str] = field(default_factory=dict)  # path -> reason
    failed: list[str] = field(default_factory=list)  # readers whose call failed: not imported


@dataclass
class GenerationResult:
    cases: list[CaseResult]
    report: ImportReport | None  # None when no case could be imported
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


def reader_runs_create(
    *, project, readers: list[str], actor=None, budget_usd=None
) -> dict[str, Run]:
    """One queued run per reader (a judge configuration without a criterion), by name. The
    upload page makes them before it queues the work, so their progress shows at once.
    `budget_usd`: the most each reader's run may cost."""
    runs = {}
    for name in readers:
        config = JudgeConfig.objects.filter(project=project, name=name).first()
        if config is None:
            raise GenerationError(f"--provider {name!r}: no judge configuration of that name")
        version = version_get(config, None)
        if version.criterion_id is not None:
            raise GenerationError(
                f"--provider {name!r} judges a criterion; a ground-truth reader has none"
            )
        runs[name] = Run.objects.create(
            project=project, version=version, split="all", confirmed_held_out=False,
            budget_usd=_budget(name, version, budget_usd),
            created_by=actor if getattr(actor, "pk", None) else None,
        )  # fmt: skip
    return runs


def _budget(name: str, version, budget_usd):
    try:
        budget = budget_amount("--budget-usd", budget_usd)
        if budget is not None:
            budget_needs_price("--budget-usd", version.provider, version.model)
    except BudgetError as exc:
        raise GenerationError(f"--provider {name!r}: {exc}") from None
    return budget


def _start(runs: dict[str, Run]) -> dict[str, tuple[Run, object]]:
    """Each run with its provider (its endpoint checked again now), marked running."""
    started = {}
    for name, run in runs.items():
        try:
            started[name] = (run, provider_for(run))
        except ProviderError as exc:
            for _, provider in started.values():
                provider.close()
            raise GenerationError(f"--provider {name!r}: {exc}") from None
    Run.objects.filter(pk__in=[run.pk for run in runs.values()]).update(
        status=RunStatus.RUNNING, started_at=timezone.now()
    )
    return started


def _review(case, folder: str, evidence: Evidence, fields, outcome, producer: str) -> dict:
    """The FORMATS §2 file of one case (with the producer, a key §2 imports keep), its evidence
    in `folder` beside it: it imports and exports like any."""
    claims = [rest[0] for status, *rest in outcome.values() if status == "agreed"]
    items = [
        {"path": path, "reason": status, "candidates": rest[0], "decision": None, "value": None}
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
        **({"producer": producer} if producer else {}),
    }


@dataclass
class _Case:
    evidence: Evidence
    producer: str  # "provider/model" of the prediction checked, "" when unknown
    first: dict = field(default_factory=dict)  # reader -> Reading
    outcome: dict = field(default_factory=dict)
    second: dict = field(default_factory=dict)  # reader -> second Reading
    settled_again: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)  # reader -> independence
    failed: list[str] = field(default_factory=list)  # readers whose call failed


def _cases(project, paths: list[Path], producer: str) -> dict[str, _Case]:
    """case id -> its evidence: the id of the one item already holding that evidence (its
    prediction's producer then known), else the file's stem and content hash."""
    cases = {}
    for path in paths:
        found = evidence_of(Path(path))
        known, known_producer = known_case(project, found.sha256)
        cases[known or case_id(found)] = _Case(found, producer or known_producer)
    return cases


def ground_truth_generate(
    *,
    project,
    paths: list[Path],
    fields: list[str],
    instruction: str,
    readers: list[str],
    min_agreement: float = 1.0,
    second_read: bool = False,
    producer: str = "",
    actor=None,
    run_ids: dict[str, int] | None = None,
    budget_usd=None,
) -> GenerationResult:
    """Union is the project's choice (`generation_union`); `producer` overrides the producer
    known from an item that already holds the evidence; `run_ids` (reader -> queued run) are
    the runs the upload page made, else this makes them."""
    if not fields or not instruction.strip() or not readers:
        raise GenerationError("give the expected fields, an instruction and at least one reader")
    if not 0 < min_agreement <= 1:
        raise GenerationError("--min-agreement: between 0 (exclusive) and 1")
    if producer and not all(producer.partition("/")[::2]):
        raise GenerationError(f"--producer {producer!r}: write it as provider/model")
    if run_ids:  # made by the upload page (reader_runs_create)
        queued = {name: Run.objects.select_related("version__config").get(pk=pk)
                  for name, pk in run_ids.items()}  # fmt: skip
    else:
        queued = reader_runs_create(
            project=project, readers=readers, actor=actor, budget_usd=budget_usd
        )
    cases, started, status, error = {}, {}, RunStatus.FAILED, ""  # unless all below goes well
    try:
        cases = _cases(project, paths, producer)
        started = _start(queued)
        _read_and_reconcile(
            started, cases, fields, instruction, min_agreement, second_read, project
        )
        report = _import_and_record(project, started, cases, fields, actor)
        status = RunStatus.DONE
    except Exception as exc:  # shown on the readers' runs, then raised as it was
        error = f"generation stopped: {exc}"[:2000]
        raise
    finally:
        for _, provider in started.values():
            provider.close()
        ended = Run.objects.filter(pk__in=[run.pk for run in queued.values()])
        ended.filter(status=RunStatus.BUDGET_REACHED).update(finished_at=timezone.now())
        ended.exclude(status=RunStatus.BUDGET_REACHED).update(
            status=status, error=error, finished_at=timezone.now()
        )
    return GenerationResult(
        [_result(name, case) for name, case in cases.items()], report, list(queued.values())
    )


def _import_and_record(project, runs, cases, fields, actor) -> ImportReport | None:
    # A failed call is no reading: questions made from it would outlive the retry. Such a case
    # waits for the next generation, which makes only the reads still missing.
    imported = {name: case for name, case in cases.items() if not case.failed}
    for case in imported.values():
        case.labels = {r: independence(run.version, case.producer) for r, (run, _) in runs.items()}
        case.flagged = flag_related(case.outcome, case.labels) if case.producer else []
    report = _import(project, imported, fields, actor)
    for name, case in imported.items():
        data = generation_data(runs=runs, case=case)
        generation_record(project=project, case=name, data=data, actor=actor)
    return report


def _read_and_reconcile(runs, cases, fields, instruction, min_agreement, second_read, project):
    jobs = [(name, case.evidence, instruction) for name, case in cases.items()]
    first = read_all(runs, jobs, lambda case: fields)
    for name, case in cases.items():
        case.first = {reader: first[(name, reader)] for reader in runs}
        case.failed = [reader for reader, reading in case.first.items() if reading.failed]
        case.outcome = reconcile(fields, case.first, min_agreement, project.generation_union)
    if second_read:
        _second_read(runs, jobs, cases)


def _second_read(runs, jobs, cases: dict[str, _Case]) -> None:
    """The disputed paths only, blind again (no first-pass value is sent); where every reader
    now agrees, the field is settled as a generated row."""
    disputed = {
        name: [p for p, (s, *_) in case.outcome.items() if s != "agreed"]
        for name, case in cases.items()
    }
    again = read_all(runs, jobs, lambda name: disputed[name])
    for name, paths in disputed.items():
        if not paths:
            continue
        case = cases[name]
        case.second = {reader: again[(name, reader)] for reader in runs}
        case.failed += [r for r, reading in case.second.items() if reading.failed]
        settled = reconcile(paths, case.second, 1.0)
        case.settled_again = [p for p, (s, *_) in settled.items() if s == "agreed"]
        case.outcome.update({p: settled[p] for p in case.settled_again})


def _result(name: str, case: _Case) -> CaseResult:
    agreed = {
        p: ("second read" if p in case.settled_again else "first read")
        for p, (s, *_) in case.outcome.items()
        if s == "agreed"
    }
    disputed = {p: s for p, (s, *_) in case.outcome.items() if s != "agreed"}
    return CaseResult(name, agreed, disputed, sorted(set(case.failed)))


def _import(project, cases: dict[str, _Case], fields, actor) -> ImportReport | None:
    """The cases' review files written beside a copy of their evidence, imported by reviews'
    own import service (the same rules, rows, questions and events as any review file). Each
    case's folder is numbered: a case id is an item's, any text (`../x`, `/x`), never a path."""
    if not cases:
        return None
    with tempfile.TemporaryDirectory(prefix="generated-") as tmp:
        lines = []
        for number, (name, case) in enumerate(cases.items(), start=1):
            folder = f"case-{number}"
            (Path(tmp) / folder).mkdir()
            shutil.copyfile(case.evidence.path, Path(tmp) / folder / case.evidence.path.name)
            review = _review(name, folder, case.evidence, fields, case.outcome, case.producer)
            lines.append(json.dumps(review, ensure_ascii=False))
        target = Path(tmp) / "generated.jsonl"
        target.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return file_import(actor=actor, project=project, path=target, format="review")
