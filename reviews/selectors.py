"""Reusable reads: they own their joins and what each user may see."""

from __future__ import annotations

from django.db.models import Count, Q

from reviews.models import Assignment, AssignmentStatus, Item, ItemStatus, Membership


def item_counts_by_status(project) -> dict[str, int]:
    """Items of `project` per status, every status present (0 when none)."""
    counts = dict(
        Item.objects.filter(project=project)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return {status: counts.get(status, 0) for status in ItemStatus.values}


def assignment_counts_for_rater(*, rater, project) -> dict[str, int]:
    """The rater's assignments in `project`: in progress, waiting (pre-assigned), submitted."""
    return Assignment.objects.filter(rater=rater, item__project=project).aggregate(
        active=Count("id", filter=Q(status=AssignmentStatus.ACTIVE)),
        assigned=Count("id", filter=Q(status=AssignmentStatus.ASSIGNED)),
        submitted=Count("id", filter=Q(status=AssignmentStatus.SUBMITTED)),
    )


def projects_with_roles(user) -> list[tuple]:
    """[(project, sorted role labels, item count)] for every project `user` belongs to."""
    memberships = (
        Membership.objects.filter(user_id=user.pk)
        .select_related("project")
        .order_by("project__name", "role")
    )
    by_project: dict[int, tuple] = {}
    for membership in memberships:
        project = membership.project
        entry = by_project.setdefault(project.pk, (project, []))
        entry[1].append(membership.get_role_display())
    item_counts = dict(
        Item.objects.filter(project_id__in=by_project)
        .values_list("project_id")
        .annotate(n=Count("id"))
        .values_list("project_id", "n")
    )
    return [
        (project, roles, item_counts.get(pk, 0)) for pk, (project, roles) in by_project.items()
    ]
