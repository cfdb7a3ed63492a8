"""Re-entering one's password to sign (approval): throttled like login, by django-axes.

An account signed in through single sign-on with no site password (evalsite/sso.py) has no
password to re-enter: it signs only within SSO_REAUTH_MINUTES of signing in at its identity
provider, and the page offers *Sign in again with SSO* otherwise. Any account with a password
keeps the password prompt, however it signed in.

The password rule (settings: AXES_*): after LOGIN_FAILURE_LIMIT wrong passwords for an account from one
client address, or from one address for any accounts, counted across login and approval
together, that account is locked from that address (or the address is) for
LOGIN_LOCKOUT_MINUTES; elsewhere the account still works, and a project admin clears it at once
on the members page. The lock is checked BEFORE the password, so a locked-out guesser
learns nothing; a wrong password is recorded through Django's `user_login_failed` signal.
"""

from __future__ import annotations

from datetime import UTC, datetime

from axes.handlers.proxy import AxesProxyHandler
from django.conf import settings
from django.contrib.auth import authenticate
from django.urls import reverse
from django.utils.http import urlencode

from evalsite.sso import sso_fresh, sso_fresh_until
from reviews.services.approval.approve import ApprovalRefused

LOCKED = (
    "Too many wrong passwords for this account from this address, or from this address: "
    "password entry is locked for a while. Try again later, or ask a project admin to clear it."
)
WRONG = "That password is not correct."


SSO_STALE = (
    "Signing needs a recent sign-in: sign in again with SSO (within {minutes} minutes of "
    "approving), then approve."
)


def password_checker(request, user):
    """A callable `check(password)` for `approval_record()`: raises ApprovalRefused when refused."""
    if not user.has_usable_password():
        return _sso_checker(request)

    def check(password: str) -> None:
        credentials = {"username": user.get_username()}
        if not AxesProxyHandler.is_allowed(request, credentials):
            raise ApprovalRefused(LOCKED)
        again = authenticate(request, username=user.get_username(), password=password)
        if again is None or again.pk != user.pk:
            raise ApprovalRefused(WRONG)

    return check


def _sso_checker(request):
    def check(password: str) -> None:
        if not sso_fresh(request):
            raise ApprovalRefused(SSO_STALE.format(minutes=settings.SSO_REAUTH_MINUTES))

    return check


def approval_reauth(request, back: str) -> dict:
    """How the approval form asks who is signing: a password field, or (an SSO-only account)
    whether its SSO sign-in is recent enough and a link to sign in again, back to `back`."""
    if request.user.has_usable_password():
        return {"password": True}
    until = sso_fresh_until(request)
    return {
        "password": False,
        "fresh": sso_fresh(request),
        "until": until and datetime.fromtimestamp(until, tz=UTC),
        "minutes": settings.SSO_REAUTH_MINUTES,
        "again": f"{reverse('sso_reauth')}?{urlencode({'next': back})}",
    }
