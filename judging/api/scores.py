"""Score runs over the API: score a batch of prediction records, read a run's report.

Mounted with reviews' API under /api/projects by `evalsite/api_urls.py` (reviews never imports
judging). Same rules as the command and the page: a bad record is refused with its position and
field (422) and nothing is stored; the report is the JSON of docs/scoring.md.
"""

from __future__ import annotations

from typing import Any, Literal

from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Field, Router, Schema, Status
from ninja.errors import HttpError

from evalsite.api_errors import ErrorOut
from judging.models import ScoreRun
from judging.services.scoring.claim_judge import ClaimJudgeError
from judging.services.scoring.score import predictions_score
from reviews.access import OVERSEERS, project_for_user
from reviews.models import Role

router = Router(tags=["scores"])

_ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 413: ErrorOut, 422: ErrorOut}


class ScoreRunIn(Schema):
    records: list[Any] = Field(
        ..., description="Prediction records as in a predictions JSONL file (docs/scoring.md)."
    )
    allow_generated: bool = Field(
        False, description="Score cases without ground truth against the generated reference."
    )
    source_name: str = Field("API request", max_length=255)
    seed: int = Field(0, ge=0, lt=2**63, description="Bootstrap seed: 0 to 2**63 - 1.")
    comparison: Literal["auto", "semantic", "exact"] = Field(
        "auto", description="How reference rows compare (docs/scoring.md, Semantic comparison)."
    )
    claim_judge: str | None = Field(
        None,
        max_length=120,
        description="The judge configuration (NAME or NAME@V, no criterion) that decides claims.",
    )


class ScoreRunOut(Schema):
    id: int
    url: str
    report: dict[str, Any]


def _out(run: ScoreRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "url": reverse("score_run", args=[run.project.slug, run.pk]),
        "report": run.report,
    }


@router.post(
    "/{slug}/score-runs",
    response={201: ScoreRunOut, **_ERRORS},
    summary="Score prediction records against ground truth",
)
def score_run_create(request: HttpRequest, slug: str, payload: ScoreRunIn):
    """Errors name `record N` (1-based position in `records`) and the field."""
    access = project_for_user(request.auth, slug, roles=[Role.ADMIN])
    try:
        run = predictions_score(
            actor=request.auth,
            project=access.project,
            records=payload.records,
            source_name=payload.source_name,
            allow_generated=payload.allow_generated,
            seed=payload.seed,
            comparison=payload.comparison,
            claim_judge=payload.claim_judge,
        )
    except ClaimJudgeError as error:
        raise HttpError(422, str(error)) from None
    return Status(201, _out(run))


@router.get(
    "/{slug}/score-runs/{int:pk}",
    response={200: ScoreRunOut, **_ERRORS},
    summary="One score run's report",
)
def score_run_detail(request: HttpRequest, slug: str, pk: int):
    access = project_for_user(request.auth, slug, roles=OVERSEERS)
    return _out(get_object_or_404(ScoreRun, project=access.project, pk=pk))
