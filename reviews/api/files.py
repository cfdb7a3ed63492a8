"""Files: import one file as it is on disk, or several images and PDFs (project admins), the
API's twin of the upload form.

A pipeline that has a `.zip` bundle (review files with their evidence), a JSONL, CSV or review
JSON file posts it here as multipart form data instead of re-encoding it as JSON. The file goes
through the same importer, limits and errors as `manage.py import_items`, in one transaction,
and the answer comes when it is done.
"""

from __future__ import annotations

import tempfile
from pathlib import Path, PurePath

from django.http import HttpRequest
from ninja import File, Form, Router, Status, UploadedFile

from evalsite.api_errors import ErrorOut
from reviews.access import project_for_user
from reviews.api.schemas import ImportReportOut
from reviews.formats import limits
from reviews.formats.errors import FormatError
from reviews.models import Role
from reviews.services.imports.pipeline import file_import, import_formats, import_options

router = Router(tags=["items"])
_ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


@router.post(
    "/{slug}/imports",
    response={201: ImportReportOut, **_ERRORS},
    summary="Import a file (a .zip bundle, JSONL, CSV, review JSON, an image or PDF), or "
    "several images and PDFs (one transaction)",
)
def file_upload_import(
    request: HttpRequest,
    slug: str,
    file: File[list[UploadedFile]],
    format: Form[str] = "",
    questions: Form[list[str]] = None,
    label_config: Form[str] = "",
):
    """The file is read like `import_items FILE`: its format detected from its name and content
    unless `format` names one; a bundle's review files cite only evidence inside the bundle.
    Several `file` parts are images and PDFs (or .zips of them), an item each, like
    `import_items a.jpg b.pdf`. A refused file answers 422 naming the file, record, path and
    reason; nothing is kept. `label_config`: a Label Studio export's label config (its XML),
    as `import_items --label-config`."""
    access = project_for_user(request.auth, slug, roles=[Role.ADMIN])
    names = [PurePath(one.name or "upload").name or "upload" for one in file]
    if format and format not in import_formats():
        raise FormatError(f"unknown format {format!r} (one of: {', '.join(import_formats())})",
                          file=names[0], path="format")  # fmt: skip
    for name, one in zip(names, file, strict=True):
        if one.size > limits.current().file_bytes:
            raise FormatError(limits.message("file_bytes", "its size", one.size), file=name)
    if len(set(names)) < len(names):
        repeated = next(name for name in names if names.count(name) > 1)
        raise FormatError(
            "two files with this name: an item's id is its file's name", file=repeated
        )
    with tempfile.TemporaryDirectory(prefix="evalsite-api-") as folder:
        paths = []
        for name, one in zip(names, file, strict=True):
            path = Path(folder) / name
            with path.open("wb") as handle:
                for chunk in one.chunks():
                    handle.write(chunk)
            paths.append(path)
        report = file_import(
            actor=request.auth,
            project=access.project,
            path=paths[0] if len(paths) == 1 else paths,
            name=names[0] if len(names) == 1 else None,
            format=format or None,
            options=import_options(questions=questions, label_config=label_config),
        )
    return Status(201, report.as_dict())
