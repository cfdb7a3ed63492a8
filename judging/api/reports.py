"""The agreement report and judge comparisons over the API: the same documents as
`manage.py agreement_report --format json` and `compare_judges --format json`.

Asking the API for held-out figures is explicit, as on the command line: the look is recorded
(`HeldOutAccess`) under the caller's name, as the page's *Show held-out figures* records it.
"""

from __future__ import annotations

from django.http import HttpRequest
from evalsite_client.models import AgreementReport, Comparison
from ninja import Query, Router
from ninja.errors import HttpError

from evalsite.api_errors import ErrorOut
from judging.forms import CompareForm
from judging.reports.agreement.cuts import CollapseError
from judging.reports.agreement.report import AgreementReportError, agreement_report
from judging.reports.compare.report import CompareError, judges_compare
from judging.selectors import criterion_names
from judging.services.calibration.splits import SplitError
from judging.services.judges.refs import judge_ref_choices
from reviews.access import OVERSEERS, project_for_user
from reviews.models import Role

router = Router(tags=["reports"])
_ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}
_SEED = Query(0, ge=0, lt=2**63, description="Bootstrap seed: 0 to 2**63 - 1.")


@router.get(
    "/{slug}/agreement",
    response={200: AgreementReport, **_ERRORS},
    summary="The agreement report (judge–human and human–human, per criterion)",
)
def agreement(
    request: HttpRequest,
    slug: str,
    criterion: str | None = None,
    split: str | None = Query(None, description="held_out (default), calibration or all"),
    seed: int = _SEED,
    collapse_at: str | None = None,
):
    """docs/agreement-report.md. Held-out (and all) figures are a recorded look."""
    access = project_for_user(request.auth, slug, roles=OVERSEERS)
    try:
        return agreement_report(
            actor=request.auth, project=access.project, split=split, criterion=criterion,
            seed=seed, collapse_at=collapse_at,
        )  # fmt: skip
    except (SplitError, AgreementReportError, CollapseError) as exc:
        raise HttpError(422, str(exc)) from None


@router.get(
    "/{slug}/compare",
    response={200: Comparison, **_ERRORS},
    summary="Compare two judges (NAME@VERSION or provider/model) item by item",
)
def compare(
    request: HttpRequest, slug: str, criterion: str, a: str, b: str, split: str = "all",
    seed: int = _SEED,
):  # fmt: skip
    """The compare page's document (docs/agreement-report.md, "Comparing two judges")."""
    project = project_for_user(request.auth, slug, roles=[Role.ADMIN]).project
    form = CompareForm(
        {"criterion": criterion, "a": a, "b": b, "split": split},
        criteria=criterion_names(project),
        refs=judge_ref_choices(project),
    )
    if not form.is_valid():
        reasons = [f"{k}: {' '.join(v)}" if k != "__all__" else " ".join(v)
                   for k, v in form.errors.items()]  # fmt: skip
        raise HttpError(422, "; ".join(reasons))
    try:
        return judges_compare(actor=request.auth, project=project, seed=seed, **form.cleaned_data)
    except CompareError as exc:
        raise HttpError(422, str(exc)) from None
