"""Password lockouts (django-axes) a project admin clears for a member at once, say an approver
locked out by their own typos or by a guesser sharing their address."""

from __future__ import annotations

from axes.models import AccessAttempt
from axes.utils import reset
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction

from reviews.models import Membership, Project, ProjectAction
from reviews.services.projects.audit import project_event_record
from reviews.services.projects.members import may_manage_members


def locked_out(usernames) -> set[str]:
    """Those of `usernames` locked out from at least one address now (one query)."""
    attempts = AccessAttempt.objects.filter(
        username__in=list(usernames), failures_since_start__gte=settings.AXES_FAILURE_LIMIT
    )
    return set(attempts.values_list("username", flat=True))


@transaction.atomic
def lockout_clear(*, actor, project: Project, user) -> int:
    """Forget every failed password of `user` (all addresses): they may sign in and sign again
    at once. The project's admins (or a superuser) for one of its members; returns how many
    attempt records went. An address locked by others' guesses stays locked (`axes_reset_ip`)."""
    if not may_manage_members(actor, project):
        raise PermissionDenied(f"Only the admins of {project.slug!r} can clear lockouts.")
    if not Membership.objects.filter(project=project, user=user).exists():
        raise PermissionDenied(f"{user.get_username()} is not a member of {project.slug!r}.")
    cleared = reset(username=user.get_username())
    project_event_record(
        project,
        actor,
        ProjectAction.LOCKOUT_CLEARED,
        target=user.get_username(),
        before={"failed_attempt_records": cleared},
        after={"failed_attempt_records": 0},
    )
    return cleared
