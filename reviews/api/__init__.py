"""The HTTP API (django-ninja): batch item import, file import, item status, approved references.

Mounted at /api/ by `evalsite/urls.py` (through `evalsite/api_urls.py`, which adds judging's
routers); docs at /api/docs, schema at /api/openapi.json (both for signed-in users). Every endpoint authorises through
`reviews.access` (outsider 404, wrong role 403) and writes only through services.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest
from ninja import NinjaAPI
from ninja.parser import Parser

from evalsite.api_errors import install_error_handlers
from reviews.api import files, items, projects, references, rows
from reviews.api.auth import SessionAuth, TokenAuth
from reviews.formats.errors import loads_json

# Ninja's own views: they stay behind the site's login like any other page.
_DOCS_URL_NAMES = {"openapi-json", "openapi-view", "api-root"}


class StrictParser(Parser):
    """Request bodies are read like import files: UTF-8, no duplicate keys, no NaN."""

    def parse_body(self, request: HttpRequest) -> Any:
        return loads_json(request.body)


class EvalsiteAPI(NinjaAPI):
    @property
    def urls(self):
        patterns, app_name, namespace = super().urls
        for pattern in patterns:
            if pattern.name not in _DOCS_URL_NAMES:
                # Operations answer 401 JSON themselves (token or session); the site's
                # LoginRequiredMiddleware must not redirect them to the login page.
                login_not_required(pattern.callback)
        return patterns, app_name, namespace


api = EvalsiteAPI(
    title="Evalsite API",
    version="1",
    description=(
        "Import items, read their review status and fetch approved ground truth. "
        "Authenticate with `Authorization: Bearer <token>` (create one at /account/tokens/) "
        "or a signed-in browser session (unsafe methods then need the CSRF token)."
    ),
    auth=[TokenAuth(), SessionAuth()],
    parser=StrictParser(),
    urls_namespace="api",
)
install_error_handlers(api)
api.add_router("/projects", projects.router)
api.add_router("/projects", items.router)
api.add_router("/projects", files.router)
api.add_router("/projects", references.router)
api.add_router("/projects", rows.router)

__all__ = ["api"]
