"""Who is calling: an API token (``Authorization: Bearer evs_…``) or the browser session.

A token request needs no CSRF token (nothing ambient: the browser never sends the header on its
own); a session request does for unsafe methods, exactly as the rest of the site. A header
that is present but wrong (unknown, revoked, inactive user) is refused with 401 even when a
session cookie rides along, so a script never silently acts as whoever is logged in.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from ninja.errors import AuthenticationError, HttpError
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from reviews.services.projects.tokens import token_user


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        user = token_user(token.strip())
        if user is None:
            raise AuthenticationError(message="Invalid, revoked or expired API token.")
        return user


class SessionAuth(APIKeyCookie):
    """The signed-in user; unsafe methods must carry the CSRF token (X-CSRFToken header)."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request: HttpRequest) -> str | None:
        # ninja checks CSRF here, before knowing whether anyone is signed in; an anonymous
        # POST must read 401, not 403, so the check moves to authenticate() below.
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None):
        if not request.user.is_authenticated:
            return None
        if check_csrf(request) is not None:
            raise HttpError(
                403, "CSRF check failed: send the csrftoken cookie's value as X-CSRFToken."
            )
        return request.user
