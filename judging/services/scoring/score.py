"""Score predictions against a project's references and keep the report (a `ScoreRun`).

The numbers come from `judging.reports.scoring.build.score_report_build` (pure); this module reads the file,
checks every case id against the project's items, gathers each item's newest `ground_truth`
and `generated` references and stores the run. A bad file changes nothing: the error names the
file, the line and the field, and no run is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.utils import timezone

from judging.formats.predictions import Prediction, parse_prediction_records, parse_predictions
from judging.models import ScoreRun
from judging.reports.scoring.build import (
    GENERATED,
    GROUND_TRUTH,
    CaseReferences,
    ReferenceInput,
    score_report_build,
)
from judging.reports.scoring.claims import COMPARISONS
from judging.services.scoring.claim_judge import ClaimJudgeError, claim_judge_version, claims_judge
from reviews.formats.errors import FormatError
from reviews.models import Item, ItemSource, Project, Reference


def _references(project: Project, predictions: list[Prediction], file: str) -> dict:
    """Case id -> its newest references; an unknown case id is an error naming its line."""
    wanted = {p.case_id for p in predictions}
    items = dict(
        Item.objects.filter(project=project, external_id__in=wanted).values_list(
            "external_id", "pk"
        )
    )
    for p in predictions:
        if p.case_id not in items:
            raise FormatError(
                f"no item {p.case_id!r} in project {project.slug!r}",
                file=file,
                record=p.record,
                path="$.case_id",
            )
    newest: dict[tuple[int, str], Reference] = {}
    rows = Reference.objects.filter(
        item_id__in=items.values(), authority__in=[GROUND_TRUTH, GENERATED]
    ).order_by("version")
    for reference in rows.only("item_id", "authority", "version", "rows"):
        newest[(reference.item_id, reference.authority)] = reference  # later versions win

    def plain(item_pk: int, authority: str) -> ReferenceInput | None:
        found = newest.get((item_pk, authority))
        return found and ReferenceInput(authority, found.version, found.rows)

    unreferenced = [pk for pk in items.values() if (pk, GROUND_TRUTH) not in newest
                    and (pk, GENERATED) not in newest]  # fmt: skip
    pages = _evidence_pages(unreferenced)
    return {
        case_id: CaseReferences(
            plain(pk, GROUND_TRUTH), plain(pk, GENERATED), tuple(pages.get(pk, ()))
        )
        for case_id, pk in items.items()
    }


def _evidence_pages(item_pks: list[int]) -> dict[int, list[tuple[int, int]]]:
    """Item pk -> (document id, page) of its evidence in order: a source naming a page is that
    page, one naming none is every page of its document."""
    pages: dict[int, list[tuple[int, int]]] = {}
    sources = ItemSource.objects.filter(item_id__in=item_pks, authority="evidence").order_by(
        "item_id", "position", "pk"
    )
    for item_id, document, page, count in sources.values_list(
        "item_id", "document_id", "page", "document__page_count"
    ):
        found = pages.setdefault(item_id, [])
        for number in [page] if page else range(1, count + 1):
            if (document, number) not in found:
                found.append((document, number))
    return pages


def predictions_score(
    *,
    actor,
    project: Project,
    source_name: str,
    stream: Any = None,
    records: Iterable[Any] | None = None,
    allow_generated: bool = False,
    seed: int = 0,
    comparison: str = "auto",
    claim_judge: str | None = None,
) -> ScoreRun:
    """Score a predictions JSONL `stream` (binary), or already-parsed `records` (the API: errors
    then name `record N`, 1-based). Raises FormatError and stores nothing if the input is bad.
    `comparison`: `auto`, `semantic` or `exact` (reports/scoring/claims.py); `claim_judge` (`NAME` or
    `NAME@V`) decides the claims of semantically compared rows (claim_judge.py)."""
    if comparison not in COMPARISONS:
        raise ClaimJudgeError(f"--comparison {comparison!r}: one of {', '.join(COMPARISONS)}")
    if records is None:
        predictions = parse_predictions(stream, file=source_name)
    else:
        predictions = parse_prediction_records(
            enumerate(records, start=1), file=source_name, unit="record"
        )
    references = _references(project, predictions, source_name)
    decider = None
    if claim_judge:
        version = claim_judge_version(project, claim_judge)

        def decider(tasks):
            return claims_judge(project=project, version=version, tasks=tasks, actor=actor)

    report = score_report_build(
        project=project.slug,
        computed_at=timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        source=source_name,
        predictions=predictions,
        references=references,
        allow_generated=allow_generated,
        seed=seed,
        comparison=comparison,
        claim_decider=decider,
    )
    return ScoreRun.objects.create(
        project=project,
        source_name=source_name[:255],
        allow_generated=allow_generated,
        n_records=len(predictions),
        report=report,
        created_by=actor if actor and actor.is_authenticated else None,
    )
