"""Re-entering one's password to sign (approval): throttled like login, by django-axes.

The rule (settings: AXES_*): after LOGIN_FAILURE_LIMIT wrong passwords for an account from one
client address, or from one address for any accounts, counted across login and approval
together, that account is locked from that address (or the address is) for
LOGIN_LOCKOUT_MINUTES; elsewhere the account still works, and a project admin clears it at once
on the members page. The lock is checked BEFORE the password, so a locked-out guesser
learns nothing; a wrong password is recorded through Django's `user_login_failed` signal.
"""

from __future__ import annotations

from axes.handlers.proxy import AxesProxyHandler
from django.contrib.auth import authenticate

from reviews.services.approval.approve import ApprovalRefused

LOCKED = (
    "Too many wrong passwords for this account from this address, or from this address: "
    "password entry is locked for a while. Try again later, or ask a project admin to clear it."
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
