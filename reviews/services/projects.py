"""Creating projects and managing who holds which role in them."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from reviews.models import Membership, Project, ResolutionRule, Role


@dataclass(frozen=True)
class ProjectResult:
    project: Project
    created: bool


@transaction.atomic
def project_create(
    *,
    actor,
    slug: str,
    name: str | None = None,
    admin=None,
    overlap: int | None = None,
    resolution_rule: str | None = None,
    instructions: str | None = None,
    import_questions: list[str] | None = None,
) -> ProjectResult:
    """Create project `slug`, or return it unchanged if it exists (idempotent).

    Settings given explicitly are applied to an existing project too, so a script can re-run
    with a new overlap; settings left out are never reset. `admin` becomes a project admin.
    """
    if overlap is not None and overlap < 1:
        raise ValidationError({"overlap": "Overlap must be at least 1."})
    if resolution_rule is not None and resolution_rule not in ResolutionRule.values:
        raise ValidationError(
            {"resolution_rule": f"Use one of: {', '.join(ResolutionRule.values)}."}
        )
    project, created = Project.objects.get_or_create(
        slug=slug, defaults={"name": name or slug, "created_by": actor}
    )
    changes = {
        field: value
        for field, value in {
            "name": name,
            "overlap": overlap,
            "resolution_rule": resolution_rule,
            "instructions": instructions,
            "import_questions": import_questions,
        }.items()
        if value is not None and getattr(project, field) != value
    }
    if changes:
        for field, value in changes.items():
            setattr(project, field, value)
        project.full_clean()
        project.save(update_fields=list(changes))
    elif created:
        project.full_clean()
    if admin is not None:
        membership_add(actor=actor, project=project, user=admin, role=Role.ADMIN)
    return ProjectResult(project=project, created=created)


def membership_add(*, actor, project: Project, user, role: str) -> Membership:
    """Give `user` `role` in `project`; adding a role someone already holds changes nothing."""
    if role not in Role.values:
        raise ValidationError(
            {"role": f"Unknown role {role!r}; use one of: {', '.join(Role.values)}."}
        )
    membership, _ = Membership.objects.get_or_create(project=project, user=user, role=role)
    return membership


@transaction.atomic
def membership_remove(*, actor, project: Project, user, role: str | None = None) -> int:
    """Take `role` (or every role) away from `user`; their past answers stay, as history.

    A project never loses its last admin: that would leave nobody able to manage it.
    """
    memberships = Membership.objects.filter(project=project, user=user)
    if role is not None:
        memberships = memberships.filter(role=role)
    removes_admin = memberships.filter(role=Role.ADMIN).exists()
    admins_left = Membership.objects.filter(project=project, role=Role.ADMIN).exclude(user=user)
    if removes_admin and not admins_left.exists():
        raise ValidationError("A project needs at least one admin: add another admin first.")
    deleted, _ = memberships.delete()
    return deleted


def user_by_username_or_email(identifier: str):
    """The active user with this username or (unique) e-mail address, or None."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects.filter(is_active=True)
    identifier = identifier.strip()
    user = users.filter(username=identifier).first()
    if user is None and "@" in identifier:
        matches = list(users.filter(email__iexact=identifier)[:2])
        user = matches[0] if len(matches) == 1 else None
    return user
