"""Approved ground truth (FORMATS §3): a paged list and one reference with an ETag."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.utils.cache import get_conditional_response
from ninja import Query, Router

from evalsite.api_errors import ErrorOut
from reviews.access import project_for_user
from reviews.api.schemas import ReferencePage
from reviews.formats.reference import ApprovedReference
from reviews.models import Approval, Role
from reviews.reports.exports import ApprovedItem, reference_document
from reviews.selectors import current_approvals

router = Router(tags=["references"])

_ROLES = [Role.ADMIN, Role.APPROVER]
_ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut}


def _etag(approval: Approval) -> str:
    reference = approval.reference
    return f'"v{reference.version}-{reference.sha256}"'


@router.get(
    "/{slug}/references",
    response={200: ReferencePage, **_ERRORS},
    summary="Approved references (current ground truth)",
)
def reference_list(
    request: HttpRequest,
    slug: str,
    limit: int = Query(100, ge=1, le=1000),
    after: str | None = Query(None, description="`next_after` of the previous page."),
):
    """Ordered by case id; page with `limit` and `after` (stable while approvals happen)."""
    access = project_for_user(request.auth, slug, roles=_ROLES)
    approvals = current_approvals(access.project, after=after)
    page = list(approvals[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return {
        "items": [
            {
                "case_id": a.item.external_id,
                "version": a.reference.version,
                "sha256": a.reference.sha256,
                "approved_at": a.approved_at,
                "approved_by": a.approver_name,
                "etag": _etag(a),
            }
            for a in page
        ],
        "next_after": page[-1].item.external_id if more else None,
    }


@router.get(
    "/{slug}/references/{path:external_id}",
    response={200: ApprovedReference, 304: None, **_ERRORS},
    summary="One approved reference (FORMATS §3)",
)
def reference_detail(request: HttpRequest, slug: str, external_id: str, response: HttpResponse):
    """The §3 JSON of the item's current ground truth. Send the `ETag` back as
    `If-None-Match` to get 304 while it is unchanged."""
    access = project_for_user(request.auth, slug, roles=_ROLES)
    approval = current_approvals(access.project, external_id=external_id).first()
    if approval is None:
        raise Http404("No approved reference for this item.")
    conditional = get_conditional_response(request, etag=_etag(approval))
    for answer in (response, conditional):  # 304 Not Modified (or 412 for a failed If-Match)
        if answer is not None:
            answer["ETag"] = _etag(approval)
            answer["Cache-Control"] = "private, no-cache"
    if conditional is not None:
        return conditional
    return reference_document(ApprovedItem(approval.item, approval))
