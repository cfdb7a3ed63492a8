"""The projects the caller is a member of, with their roles (one query)."""

from __future__ import annotations

from django.http import HttpRequest
from evalsite_client.models import Project as ProjectOut
from ninja import Router

from evalsite.api_errors import ErrorOut
from reviews.selectors import memberships_of

router = Router(tags=["projects"])


@router.get("", response={200: list[ProjectOut], 401: ErrorOut}, summary="Your projects")
def project_list(request: HttpRequest):
    return memberships_of(request.auth)
