"""One error shape for every API failure: ``{"error": {"reason": …, "file", "record", "path"}}``.

`file`, `record` and `path` are filled in for input errors (the same FormatError the file
importers raise, so a bad record reads the same over the API as in an upload); other errors
carry only `reason`. Outsiders get 404 and members without the role 403, from `reviews.access`.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError

from reviews.formats.errors import FormatError, join_path
from reviews.services.imports.pipeline import ImportFailed

REQUEST_BODY = "request body"


class RecordError(FormatError):
    """A FormatError that also knows the bad record's position in the request's list."""

    def __init__(self, reason: str, *, index: int | None = None, **where) -> None:
        super().__init__(reason, **where)
        self.index = index


class ErrorDetail(Schema):
    reason: str
    file: str | None = None
    record: str | None = None
    path: str | None = None
    index: int | None = None  # batch imports: the position of the bad record in the list


class ErrorOut(Schema):
    error: ErrorDetail


def error_response(
    api: NinjaAPI, request: HttpRequest, status: int, reason: str, **where
) -> HttpResponse:
    detail = {"reason": reason, **{k: v for k, v in where.items() if v is not None}}
    return api.create_response(request, {"error": detail}, status=status)


def _format_error(api, request, exc: FormatError | ImportFailed) -> HttpResponse:
    error = exc.error if isinstance(exc, ImportFailed) else exc
    extra = {"index": getattr(error, "index", None)}
    return error_response(api, request, 422, **error.as_dict(), **extra)


def _unauthorised(api, request, exc: AuthenticationError) -> HttpResponse:
    given = request.headers.get("Authorization", "").lower().startswith("bearer ")
    reason = (
        str(exc)
        if given and str(exc) != "Unauthorized"
        else "Authentication required: send 'Authorization: Bearer <token>' (create a token "
        "at /account/tokens/) or sign in."
    )
    response = error_response(api, request, 401, reason)
    challenge = 'Bearer realm="evalsite"'
    response["WWW-Authenticate"] = challenge + (', error="invalid_token"' if given else "")
    return response


def _http_error(api, request, exc: HttpError) -> HttpResponse:
    cause = exc.__cause__
    if exc.status_code == 400 and isinstance(cause, FormatError):
        # The body is read with the importers' strict JSON reader (see StrictParser).
        return error_response(api, request, 400, cause.reason, file=REQUEST_BODY, path=cause.path)
    return error_response(api, request, exc.status_code, str(exc))


def _invalid_request(api, request, exc: ValidationError) -> HttpResponse:
    first = exc.errors[0]
    loc = list(first.get("loc", ()))
    if loc[:1] == ["body"]:
        # ninja nests the body under the parameter's name: body -> payload -> field.
        source, loc = REQUEST_BODY, loc[2:]
    else:
        source, loc = (loc[0] if loc else None), loc[1:]
    reason = first.get("msg", "invalid request")
    if reason.startswith("Value error, "):
        reason = reason[len("Value error, ") :]
    return error_response(api, request, 422, reason, file=source, path=join_path(loc))


def install_error_handlers(api: NinjaAPI) -> None:
    def handler(function):
        return lambda request, exc: function(api, request, exc)

    api.add_exception_handler(FormatError, handler(_format_error))
    api.add_exception_handler(ImportFailed, handler(_format_error))
    api.add_exception_handler(AuthenticationError, handler(_unauthorised))
    api.add_exception_handler(HttpError, handler(_http_error))
    api.add_exception_handler(ValidationError, handler(_invalid_request))
    api.add_exception_handler(
        Http404, handler(lambda a, r, e: error_response(a, r, 404, str(e) or "Not found."))
    )
    api.add_exception_handler(
        PermissionDenied,
        handler(lambda a, r, e: error_response(a, r, 403, str(e) or "Permission denied.")),
    )
    api.add_exception_handler(
        RequestDataTooBig,
        handler(
            lambda a, r, e: error_response(
                a,
                r,
                413,
                "Request body too large for a JSON batch (DATA_UPLOAD_MAX_MEMORY_SIZE): send "
                "smaller batches, or the records as one JSONL body to "
                "/api/projects/{slug}/items.jsonl (streamed, up to IMPORT_MAX_FILE_BYTES).",
            )
        ),
    )
