"""A criterion's true score over the API: `GET /api/projects/{slug}/estimates`.

The same figures and refusals as `manage.py estimate` (docs/estimates.md), for the readers of the
dashboard (admin, adjudicator, approver). A refusal (no such criterion or judge, labels of
unknown selection without `assume_random_labels`, too few random labels) is a 422 naming it.
Each call that reads held-out labels (split `held_out` or `all`) is a recorded look.
"""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest
from evalsite_client.models import Estimates
from ninja import Field, Query, Router, Schema
from ninja.errors import HttpError

from evalsite.api_errors import ErrorOut
from judging.reports.estimates.report import DEFAULT_ALPHA, ESTIMATE_ERRORS, estimate_report
from reviews.access import OVERSEERS, project_for_user

router = Router(tags=["estimates"])


class EstimateQuery(Schema):
    criterion: str = Field(..., max_length=100)
    judge: str = Field(..., max_length=300, description="provider/model (imported) or NAME@VERSION")
    split: Literal["all", "held_out", "calibration"] = "all"
    slice: str | None = Field(None, max_length=100)
    assume_random_labels: bool = Field(
        False, description="use labels of unknown selection (imported) as a random sample"
    )
    alpha: float = Field(DEFAULT_ALPHA, gt=0, lt=0.5)
    half_width: float | None = Field(
        None, gt=0, lt=1, description="also plan the labels each interval needs to reach ±H"
    )


@router.get(
    "/{slug}/estimates",
    response={200: Estimates, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut},
    summary="A criterion's true score: PPI++, human-only and judge-only",
)
def estimate_read(request: HttpRequest, slug: str, query: Query[EstimateQuery]):
    access = project_for_user(request.auth, slug, roles=OVERSEERS)
    try:
        return estimate_report(
            actor=request.auth,
            project=access.project,
            criterion=query.criterion,
            judge=query.judge,
            split=query.split,
            slice_name=query.slice,
            assume_random=query.assume_random_labels,
            alpha=query.alpha,
            half_width=query.half_width,
        )
    except ESTIMATE_ERRORS as error:
        raise HttpError(422, str(error)) from None
