"""Re-entering one's password to sign (approval): throttled like login, by django-axes.

The rule (settings: AXES_*): after LOGIN_FAILURE_LIMIT wrong passwords for an account, or from
a client address, counted across login and approval together, that account / address is locked
for LOGIN_LOCKOUT_MINUTES. The lock is checked BEFORE the password, so a locked-out guesser
learns nothing; a wrong password is recorded through Django's `user_login_failed` signal.
"""

from __future__ import annotations

from axes.handlers.proxy import AxesProxyHandler
from django.contrib.auth import authenticate

from reviews.services.approval import ApprovalRefused

LOCKED = (
    "Too many wrong passwords for this account or from this address: password entry is "
    "locked for a while. Try again later."
)
WRONG = "That password is not correct."


def password_checker(request, user):
    """A callable `check(password)` for `approval_record()`: raises ApprovalRefused when refused."""

    def check(password: str) -> None:
        credentials = {"username": user.get_username()}
        if not AxesProxyHandler.is_allowed(request, credentials):
            raise ApprovalRefused(LOCKED)
        again = authenticate(request, username=user.get_username(), password=password)
        if again is None or again.pk != user.pk:
            raise ApprovalRefused(WRONG)

    return check
