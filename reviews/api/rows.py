"""Row exports over the API: every row of one kind, streamed (project admins, as the page)."""

from __future__ import annotations

from typing import Literal

from django.http import HttpRequest
from ninja import Query, Router
from ninja.errors import HttpError

from evalsite.api_errors import ErrorOut
from reviews.access import project_for_user
from reviews.formats.rows import CONTENT_TYPES
from reviews.models import Role
from reviews.selectors_rows import RowExportError, row_kinds, rows_export

router = Router(tags=["exports"])


@router.get(
    "/{slug}/rows",
    response={200: None, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut},
    summary="Every row of one kind, streamed as JSONL, CSV or Parquet",
    openapi_extra={
        "responses": {
            200: {
                "description": "The rows (columns: docs/formats.md, 'Row exports').",
                "content": {t.split(";")[0]: {} for t in CONTENT_TYPES.values()},
            }
        }
    },
)
def rows_download(
    request: HttpRequest,
    slug: str,
    kind: str = Query(
        ..., description="items, answers, resolutions, approvals, audit, calls, verdicts or labels"
    ),  # fmt: skip
    format: Literal["jsonl", "csv", "parquet"] = "jsonl",
):
    """Streamed as it is read: memory stays flat at any size. Parquet needs the server's
    optional extra (`evalsite[parquet]`); without it the answer is 422 saying so."""
    access = project_for_user(request.auth, slug, roles=[Role.ADMIN])
    if kind not in row_kinds():
        raise HttpError(422, f"kind: {kind!r} is not one of {', '.join(row_kinds())}")
    try:
        export = rows_export(actor=request.auth, project=access.project, kind=kind, format=format)
    except RowExportError as error:
        raise HttpError(422, str(error)) from None
    return export.response(access.project.slug)
