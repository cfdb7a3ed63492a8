"""Creating projects and managing who holds which role in them."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction

from reviews.models import Membership, Project, ProjectAction, ResolutionRule, Role
from reviews.services.projects.audit import changed_values, project_event_record


@dataclass(frozen=True)
class ProjectResult:
    project: Project
    created: bool


# What an admin may change on the project's settings page (and nowhere else).
SETTINGS_FIELDS = (
    "name",
    "description",
    "overlap",
    "resolution_rule",
    "blind",
    "show_rater_names",
    "separation_of_duties",
    "lease_minutes",
    "generation_union",
    "gold_share",
)


@transaction.atomic
def project_create(
    *,
    actor,
    slug: str,
    name: str | None = None,
    overlap: int | None = None,
    resolution_rule: str | None = None,
    instructions: str | None = None,
    import_questions: list[str] | None = None,
) -> ProjectResult:
    """Create project `slug` with `actor` (when there is one) as its first admin.

    A slug that exists is an error for anyone who is not already one of its admins, so nobody
    (staff included) joins or reconfigures a project by "creating" it again. For its admins the
    call is idempotent so set-up scripts can re-run, and it changes nothing: settings change only
    on the project's settings page (`project_settings_update`).
    """
    if overlap is not None and overlap < 1:
        raise ValidationError({"overlap": "Overlap must be at least 1."})
    if resolution_rule is not None and resolution_rule not in ResolutionRule.values:
        raise ValidationError(
            {"resolution_rule": f"Use one of: {', '.join(ResolutionRule.values)}."}
        )
    requested = {
        "name": name,
        "overlap": overlap,
        "resolution_rule": resolution_rule,
        "instructions": instructions,
        "import_questions": import_questions,
    }
    existing = Project.objects.select_for_update().filter(slug__iexact=slug).first()
    if existing is not None and existing.slug != slug:  # `Demo` beside `demo`: a look-alike
        raise _slug_taken(existing.slug, asked=slug)
    if existing is not None:
        return ProjectResult(project=_existing(existing, actor, requested), created=False)
    given = {field: value for field, value in requested.items() if value is not None}
    project = Project(slug=slug, created_by=actor, **{"name": slug, **given})
    project.full_clean()
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError:  # created by someone else a moment ago (in any case)
        raise _slug_taken(slug) from None
    if actor is not None:  # the first admin of a project just created: nobody to ask yet
        Membership.objects.create(project=project, user=actor, role=Role.ADMIN)
    project_event_record(
        project,
        actor,
        ProjectAction.PROJECT_CREATED,
        target=slug,
        after={"name": project.name, **given, "admin": actor.get_username() if actor else None},
    )
    return ProjectResult(project=project, created=True)


def _slug_taken(slug: str, *, asked: str = "") -> ValidationError:
    if asked:
        return ValidationError(
            {
                "slug": f"A project with the slug {slug!r} exists already, and slugs ignore "
                f"case: {asked!r} would look like it. Choose another slug."
            }
        )
    return ValidationError(
        {"slug": f"A project with the slug {slug!r} exists already: choose another slug."}
    )


def _existing(project: Project, actor, requested: dict) -> Project:
    """`project` itself for one of its admins re-running the same creation; else an error."""
    if not is_project_admin(actor, project):
        raise _slug_taken(project.slug)
    differing = [
        f"{field} is {getattr(project, field)!r}, not {value!r}"
        for field, value in requested.items()
        if value is not None and getattr(project, field) != value
    ]
    if differing:
        raise ValidationError(
            f"Project {project.slug!r} exists with other settings ({'; '.join(differing)}): "
            "change them on the project's settings page."
        )
    return project


def is_project_admin(user, project: Project) -> bool:
    return (
        user is not None
        and user.is_authenticated
        and Membership.objects.filter(project=project, user=user, role=Role.ADMIN).exists()
    )


@transaction.atomic
def project_settings_update(*, actor, project: Project, changes: dict) -> list[str]:
    """Apply `changes` (SETTINGS_FIELDS, or the guidelines page's instructions and the import
    questions) for one of the project's admins.

    Returns the names of the fields that changed; staff who are not its admins are refused.
    """
    if not is_project_admin(actor, project):
        raise PermissionDenied("Only the project's admins can change its settings.")
    unknown = set(changes) - set(SETTINGS_FIELDS) - {"instructions", "import_questions"}
    if unknown:
        raise ValidationError(f"Not a project setting: {', '.join(sorted(unknown))}.")
    project = Project.objects.select_for_update().get(pk=project.pk)
    before, after = changed_values({field: getattr(project, field) for field in changes}, changes)
    for field, value in after.items():
        setattr(project, field, value)
    if after:
        project.full_clean()
        project.save(update_fields=list(after))
        project_event_record(
            project, actor, ProjectAction.SETTINGS_CHANGED, before=before, after=after
        )
    return list(after)


def may_manage_members(actor, project: Project) -> bool:
    """The project's admins, superusers, and the operator's console (`actor=None`). Staff rights
    alone are not enough: otherwise any staff user could make themselves admin anywhere."""
    if actor is None:
        return True
    return bool(getattr(actor, "is_superuser", False)) or is_project_admin(actor, project)


def _require_manager(actor, project: Project) -> None:
    if not may_manage_members(actor, project):
        raise PermissionDenied(f"Only the admins of {project.slug!r} can change its members.")


@transaction.atomic
def membership_add(*, actor, project: Project, user, role: str) -> Membership:
    """Give `user` `role` in `project`; adding a role someone already holds changes nothing."""
    _require_manager(actor, project)
    if role not in Role.values:
        raise ValidationError(
            {"role": f"Unknown role {role!r}; use one of: {', '.join(Role.values)}."}
        )
    membership, created = Membership.objects.get_or_create(project=project, user=user, role=role)
    if created:
        project_event_record(
            project,
            actor,
            ProjectAction.MEMBER_ADDED,
            target=user.get_username(),
            after={"role": role},
        )
    return membership


@transaction.atomic
def membership_remove(*, actor, project: Project, user, role: str | None = None) -> int:
    """Take `role` (or every role) away from `user`; their past answers stay, as history.

    A project never loses its last admin: that would leave nobody able to manage it.
    """
    _require_manager(actor, project)
    if role is not None and role not in Role.values:
        raise ValidationError("Choose a role.")
    memberships = Membership.objects.filter(project=project, user=user)
    if role is not None:
        memberships = memberships.filter(role=role)
    removes_admin = memberships.filter(role=Role.ADMIN).exists()
    admins_left = Membership.objects.filter(project=project, role=Role.ADMIN).exclude(user=user)
    if removes_admin and not admins_left.exists():
        raise ValidationError("A project needs at least one admin: add another admin first.")
    roles = sorted(memberships.values_list("role", flat=True))
    deleted, _ = memberships.delete()
    if roles:
        project_event_record(
            project,
            actor,
            ProjectAction.MEMBER_REMOVED,
            target=user.get_username(),
            before={"roles": roles},
        )
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
