"""Items: batch import (project admins) and one item's review status (overseers)."""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import tempfile
from pathlib import Path

from django.http import Http404, HttpRequest
from ninja import Query, Router, Status
from ninja.errors import HttpError

from evalsite.api_errors import ErrorOut, RecordError
from reviews.access import project_for_user
from reviews.api.schemas import ImportReportOut, ItemOut, ItemsBatchIn
from reviews.formats import limits
from reviews.formats.canonical import resolve_evidence_path
from reviews.formats.errors import FormatError, join_path
from reviews.models import Role
from reviews.selectors_status import item_status
from reviews.services.imports.pipeline import (
    ImportFailed,
    file_import,
    import_options,
    stream_import,
)

router = Router(tags=["items"])

SOURCE_NAME = "API request"  # what errors, the import report and the item timeline call it
_BATCH_FILE = "request.jsonl"
_LINE = re.compile(r"^line (\d+)$")
_MISSING_EVIDENCE = re.compile(r"^evidence file .* not found$")
_ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 413: ErrorOut, 422: ErrorOut}


@router.post(
    "/{slug}/items",
    response={201: ImportReportOut, 400: ErrorOut, **_ERRORS},
    summary="Import items (one transaction)",
)
def items_import(request: HttpRequest, slug: str, payload: ItemsBatchIn):
    """Import `records` (format `jsonl`) or `reviews` (format `review`) through the same
    importer as a file upload: all or nothing. Re-posting the same batch changes nothing.
    A bad record answers 422 naming it (`record`, `index`), its JSON `path` and the reason."""
    access = project_for_user(request.auth, slug, roles=[Role.ADMIN])
    with tempfile.TemporaryDirectory(prefix="evalsite-api-") as folder:
        base = Path(folder)
        batch = base / _BATCH_FILE
        _write_evidence(base, payload.evidence, batch)
        with batch.open("w", encoding="utf-8") as handle:
            for obj in payload.objects:
                # One object per line (newlines inside strings are escaped); ASCII, so even
                # a lone surrogate the body escaped reaches the importer as written.
                handle.write(json.dumps(obj) + "\n")
        try:
            report = file_import(
                actor=request.auth,
                project=access.project,
                path=batch,
                name=SOURCE_NAME,
                format=payload.format,
                options=import_options(
                    as_generated=payload.as_generated, questions=payload.questions
                ),
            )
        except ImportFailed as failed:
            raise _for_api(failed.error, payload) from None
    return Status(201, report.as_dict())


@router.post(
    "/{slug}/items.jsonl",
    response={201: ImportReportOut, 400: ErrorOut, 411: ErrorOut, **_ERRORS},
    summary="Import a JSONL body, streamed (one transaction)",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    },
)
def items_import_jsonl(request: HttpRequest, slug: str, questions: Query[list[str]] = None):
    """Import a JSONL body (FORMATS §4 records, one per line) of any size up to
    `IMPORT_MAX_FILE_BYTES`: read and checked line by line as it arrives, then written in one
    transaction, all or nothing. `questions=criterion:NAME` (repeatable) as with a batch. A bad
    line answers 422 naming it (`record`: `line N`), its JSON `path` and the reason."""
    access = project_for_user(request.auth, slug, roles=[Role.ADMIN])
    _check_length(request)
    report = stream_import(
        actor=request.auth,
        project=access.project,
        # Read as a stream: request.body (and its memory limit) is never used.
        stream=io.BufferedReader(_Body(request), _BLOCK),
        name=SOURCE_NAME,
        options=import_options(questions=questions),
    )
    return Status(201, report.as_dict())


_BLOCK = 1 << 16


class _Body(io.RawIOBase):
    """The request body as a raw stream, so that `io.BufferedReader` reads it in large blocks
    and splits the lines in C: gunicorn's own readline copies its buffer for every line."""

    def __init__(self, request: HttpRequest):
        self.request = request

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.request.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _check_length(request: HttpRequest) -> None:
    """411 without a Content-Length, 413 over the import file limit (before reading a byte)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or "")
    except ValueError:
        raise HttpError(411, "Send the body with a Content-Length header.") from None
    if length > limits.current().file_bytes:
        raise HttpError(413, limits.message("file_bytes", "This request body's size", length))


def _write_evidence(base: Path, evidence: dict[str, str], batch: Path) -> None:
    for name, encoded in evidence.items():
        where = {"file": SOURCE_NAME, "path": join_path(("evidence", name))}
        try:
            target = resolve_evidence_path(base, name)
        except ValueError as error:
            raise FormatError(str(error), **where) from None
        if target == batch.resolve():
            raise FormatError(f"{name!r} is a reserved name; rename the file", **where)
        try:
            content = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise FormatError("not valid base64", **where) from None
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
        except OSError as error:  # e.g. "a" given as a file and as a folder
            raise FormatError(f"cannot store this file ({error.strerror})", **where) from None


def _for_api(error: FormatError, payload: ItemsBatchIn) -> RecordError:
    """The importer names JSONL lines; the caller sent a list, so name its index too."""
    key = "records" if payload.format == "jsonl" else "reviews"
    record, index = error.record, None
    if record and (match := _LINE.match(record)):
        index = int(match.group(1)) - 1
        record = f"{key}[{index}]"
    reason = error.reason
    if _MISSING_EVIDENCE.match(reason):
        reason += (
            " in this request: add it to `evidence` (base64, keyed by that path), or import "
            "the batch as a .zip bundle with its evidence files"
        )
    return RecordError(reason, file=error.file, record=record, path=error.path, index=index)


@router.get(
    "/{slug}/items/{path:external_id}",
    response={200: ItemOut, **_ERRORS},
    summary="One item's review status",
)
def item_detail(request: HttpRequest, slug: str, external_id: str):
    """Status and questions of one item, and its current ground-truth version once approved,
    for adjudicators, approvers and admins: never anyone's answers or judge verdicts. Raters
    are refused (403): a status would tell them which item they are served is a gold check."""
    access = project_for_user(
        request.auth, slug, roles=[Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER]
    )
    status = item_status(access, external_id)
    if status is None:
        raise Http404("No such item.")
    return status
