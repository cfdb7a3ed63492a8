"""What a project admin's pages read (members, raters, batches, import jobs) and a user's own
tokens; the views call these instead of querying."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from reviews.models import (
    ApiToken,
    AssignmentBatch,
    Document,
    ImportJob,
    Item,
    Job,
    Membership,
    Project,
    Role,
)
from reviews.services.projects.lockouts import locked_out

RECENT = 20  # batches and import jobs listed on their pages


def member_rows(project: Project) -> list[dict]:
    """One row per member: the user, the roles they hold, whether a lockout holds them."""
    rows: dict[int, dict] = {}
    for membership in Membership.objects.filter(project=project).select_related("user"):
        row = rows.setdefault(membership.user_id, {"user": membership.user, "roles": []})
        row["roles"].append(membership.role)
    locked = locked_out(row["user"].username for row in rows.values())
    for row in rows.values():
        row["locked"] = row["user"].username in locked
    return list(rows.values())


def project_members(project: Project) -> QuerySet:
    """The project's members (each once), as users."""
    return get_user_model().objects.filter(memberships__project=project).distinct()


def project_raters(project: Project) -> QuerySet:
    return (
        get_user_model()
        .objects.filter(memberships__project=project, memberships__role=Role.RATER)
        .order_by("username")
    )


def has_raters(project: Project) -> bool:
    return Membership.objects.filter(project=project, role=Role.RATER).exists()


def recent_batches(project: Project) -> QuerySet:
    return AssignmentBatch.objects.filter(project=project).order_by("-created_at")[:RECENT]


def recent_import_jobs(project: Project) -> QuerySet:
    return ImportJob.objects.filter(project=project).select_related("created_by")[:RECENT]


def import_job_items(project: Project, job: ImportJob) -> QuerySet:
    """The items a finished import job wrote, by external id."""
    pks = (job.report or {}).get("items", [])
    return Item.objects.filter(project=project, pk__in=pks).order_by("external_id")


def user_tokens(user) -> QuerySet:
    return ApiToken.objects.filter(user=user)


def project_document(project: Project, sha256: str) -> Document | None:
    """The evidence document `sha256` if one of the project's items cites it."""
    return Document.objects.filter(sha256=sha256, sources__item__project=project).first()


def project_jobs(project: Project) -> QuerySet:
    """The project's background jobs, each with who started it."""
    return Job.objects.filter(project=project).select_related("created_by")


def project_slices(project: Project) -> QuerySet:
    return project.slices.order_by("name")
