"""Per-user API tokens: the secret is shown once; only its SHA-256 is kept."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from reviews.models import ApiToken, ProjectAction
from reviews.services.projects.audit import project_event_record

TOKEN_PREFIX = "evs_"  # noqa: S105 - a public prefix, not a secret


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


# What the tokens page offers, in days; None: never expires (the owner chooses it).
LIFETIMES = {30: "30 days", 90: "90 days", 365: "1 year", None: "never"}
DEFAULT_LIFETIME = 90


@transaction.atomic
def token_create(
    *, actor, name: str, days: int | None = DEFAULT_LIFETIME, user=None
) -> tuple[ApiToken, str]:
    """A new token for `user` (default: `actor`, as on the tokens page) that stops working
    after `days` (None: never). The operator's console (`manage.py api_token`) passes
    actor=None and the user it names; the audit line then has no actor but names the owner."""
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user or actor,
        name=name.strip() or "API token",
        prefix=secret[:10],
        key_sha256=_digest(secret),
        expires_at=timezone.now() + timedelta(days=days) if days else None,
    )
    _token_event(token, actor, ProjectAction.TOKEN_CREATED)
    return token, secret


def _token_event(token: ApiToken, actor, action: ProjectAction) -> None:
    # Site-wide (a token reaches every project of its owner); never the secret or its digest.
    project_event_record(
        None,
        actor,
        action,
        target=token.name,
        after={"owner": token.user.get_username(), "id": token.pk, "expires_at": token.expires_at},
    )


@transaction.atomic
def token_revoke(*, actor, token_pk: int) -> bool:
    """Revoke one of `actor`'s own tokens (any token for a superuser); False when there is no
    such live token. A revoked token never works again."""
    tokens = ApiToken.objects.filter(pk=token_pk, revoked_at__isnull=True)
    if not actor.is_superuser:
        tokens = tokens.filter(user=actor)
    token = tokens.select_related("user").select_for_update().first()
    if token is None:
        return False
    ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
    _token_event(token, actor, ProjectAction.TOKEN_REVOKED)
    return True


def token_user(secret: str):
    """The active user a live token belongs to (not revoked, not expired), or None."""
    if not secret.startswith(TOKEN_PREFIX):
        return None
    now = timezone.now()
    token = (
        ApiToken.objects.select_related("user")
        .filter(key_sha256=_digest(secret), revoked_at__isnull=True, user__is_active=True)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))
        .first()
    )
    if token is None:
        return None
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user
