"""Single sign-on through OpenID Connect (mozilla-django-oidc), off unless configured.

What this module adds to the library's code flow (settings: OIDC_*, SSO_REAUTH_MINUTES):
- a user is matched by e-mail only when the provider says it verified it (`email_verified`
  true, in the id_token or from the userinfo endpoint); one who matches no account gets a new
  one with no usable password and no project role (an admin gives roles, as to anyone);
- a superuser's account is never signed in through it, whatever the provider says: anyone who
  can get an address verified at the provider (a renamed mailbox, a self-service profile)
  would otherwise become the site's operator; superusers sign in with their password;
- the id_token's `auth_time` (when the provider last made the person sign in) is kept in the
  session: approving signs ground truth, so an SSO-only account (no site password to re-enter)
  may approve only within SSO_REAUTH_MINUTES of a sign-in at the provider. `sso_reauth` asks
  the provider for one (`prompt=login`, `max_age=0`); a provider that answers with an older
  `auth_time`, or none, does not make the session fresh. Password users keep the password
  prompt (reviews/reauth.py).
"""

from __future__ import annotations

import time

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import SuspiciousOperation
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_safe
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from evalsite.auth import UserBackend

AUTH_TIME = "sso_auth_time"  # session key: the provider's `auth_time` of this session's login
REAUTH = "sso_reauth"  # session key: the next authorization request asks for a fresh sign-in
FAILED = (
    "Single sign-on did not sign you in. Your identity provider must confirm your e-mail "
    "address (email_verified), and the address must belong to at most one account here, "
    "not a superuser's (a superuser signs in with a password) nor a closed account's."
)


def sso_enabled() -> bool:
    return bool(settings.SSO_ENABLED)


def username_for(email: str, claims=None) -> str:
    """The new account's username: the e-mail address, numbered if that name is taken."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    base = email[:140]
    name, n = base, 1
    while users.filter(username__iexact=name).exists():
        n += 1
        name = f"{base}-{n}"
    return name


class SsoBackend(OIDCAuthenticationBackend):
    get_user = UserBackend.get_user  # the site's hand-written look-up (evalsite/auth.py)

    def authenticate(self, request, **kwargs):
        if not sso_enabled():
            return None
        return super().authenticate(request, **kwargs)

    def get_userinfo(self, access_token, id_token, payload):
        """The id_token's claims, completed by the userinfo endpoint (same subject only)."""
        info = super().get_userinfo(access_token, id_token, payload)
        if info.get("sub") != payload.get("sub"):
            raise SuspiciousOperation("userinfo is about another subject than the id_token")
        return {**payload, **info}

    def verify_claims(self, claims):
        return bool(claims.get("email")) and claims.get("email_verified") is True

    def filter_users_by_claims(self, claims):
        # Closed (inactive) accounts match too, so the callback refuses them: otherwise a
        # person whose account was closed would come back as a new one.
        return self.UserModel.objects.filter(email__iexact=claims["email"])

    def update_user(self, user, claims):
        if user.is_superuser:  # the operator's accounts: see the module's docstring
            raise SuspiciousOperation("single sign-on never signs in a superuser")
        return user

    def create_user(self, claims):
        user = self.UserModel(username=username_for(claims["email"]), email=claims["email"])
        user.set_unusable_password()  # no site password: approval asks for a fresh SSO sign-in
        user.save()
        return user

    def get_or_create_user(self, access_token, id_token, payload):
        user = super().get_or_create_user(access_token, id_token, payload)
        if user is not None:
            auth_time = payload.get("auth_time")
            self.request.session[AUTH_TIME] = auth_time if isinstance(auth_time, int) else None
        return user


class _Enabled:
    def dispatch(self, request, *args, **kwargs):
        if not sso_enabled():
            raise Http404("Single sign-on is not configured on this server.")
        return super().dispatch(request, *args, **kwargs)


class SsoLoginView(_Enabled, OIDCAuthenticationRequestView):
    def get_extra_params(self, request):
        params = dict(super().get_extra_params(request))
        if request.session.pop(REAUTH, False):
            params.update(prompt="login", max_age="0")
        return params


class SsoCallbackView(_Enabled, OIDCAuthenticationCallbackView):
    def login_failure(self):
        messages.error(self.request, FAILED)
        return redirect(settings.LOGIN_URL)


sso_login = login_not_required(SsoLoginView.as_view())
sso_callback = login_not_required(SsoCallbackView.as_view())


def sso_fresh_until(request) -> float | None:
    """Until when (unix time) this session's SSO sign-in lets its user approve; None: never."""
    auth_time = request.session.get(AUTH_TIME)
    if not sso_enabled() or not isinstance(auth_time, int):
        return None
    return auth_time + settings.SSO_REAUTH_MINUTES * 60


def sso_fresh(request) -> bool:
    until = sso_fresh_until(request)
    return until is not None and time.time() <= until


class NextForm(forms.Form):
    next = forms.CharField(required=False, max_length=2000)


@require_safe
def sso_reauth(request):
    """Sign in again at the identity provider (it is asked to make the person log in anew),
    then come back to `next` (a page of this site)."""
    if not sso_enabled():
        raise Http404("Single sign-on is not configured on this server.")
    form = NextForm(request.GET)
    back = form.cleaned_data["next"] if form.is_valid() else ""
    if not url_has_allowed_host_and_scheme(back, {request.get_host()}, request.is_secure()):
        back = ""
    request.session[REAUTH] = True
    query = f"?{urlencode({'next': back})}" if back else ""
    return redirect(reverse("oidc_authentication_init") + query)
