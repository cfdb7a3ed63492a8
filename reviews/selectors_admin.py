"""What a project admin's pages read (members, raters, batches, import jobs, the recent export
jobs) and a user's own tokens; the views call these instead of querying."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import QuerySet
from django.utils import timezone

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
from reviews.services.jobs.exports import FILE_KINDS, GROUND_TRUTH_KIND, KEPT_FOR, export_file
from reviews.services.jobs.registry import KINDS
from reviews.services.projects.lockouts import locked_out

RECENT = 20  # batches and import jobs listed on their pages
RECENT_EXPORTS = 5  # export jobs on the project page
# The ground-truth formats as the project page's buttons name them.
GROUND_TRUTH_FORMATS = {"review": "review files", "reference": "references", "csv": "CSV"}


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


@dataclass(frozen=True)
class RecentExport:
    job: Job  # with its `created_by`
    label: str  # the kind's: "Row export", "Ground-truth export"
    what: str  # "answers, csv"; "review files, .zip"
    download: bool  # its file is still stored


def recent_exports(project: Project, roles: Iterable[str]) -> list[RecentExport]:
    """The project's export jobs of the last KEPT_FOR that `roles` may open (a kind's `roles`,
    as the job page checks them: a rater sees none), newest first, RECENT_EXPORTS at most; one
    query, none for a role that may open no export."""
    held = set(roles)
    kinds = [name for name in FILE_KINDS if name in KINDS and held & set(KINDS[name].roles)]
    if not kinds:
        return []
    jobs = (
        Job.objects.filter(
            project=project, kind__in=kinds, created_at__gte=timezone.now() - KEPT_FOR
        )
        .select_related("created_by")
        .only("kind", "status", "params", "created_at", "created_by__username")
        .order_by("-created_at", "-pk")[:RECENT_EXPORTS]
    )
    return [
        RecentExport(job, KINDS[job.kind].label, _export_what(job), bool(export_file(job)))
        for job in jobs
    ]


def _export_what(job: Job) -> str:
    data = job.params.get("data", {})
    format = (data.get("format") or [""])[0]
    if job.kind == GROUND_TRUTH_KIND:
        return f"{GROUND_TRUTH_FORMATS.get(format, format)}, .zip"
    return f"{(data.get('kind') or [''])[0]}, {format}"
