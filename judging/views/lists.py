"""Dashboards across projects: each project's latest release decisions, at a glance."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging.services.dashboard import latest_snapshot
from reviews.models import Membership, Role


@require_safe
def dashboards(request):
    memberships = (
        Membership.objects.filter(
            user=request.user, role__in=[Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER]
        )
        .select_related("project")
        .order_by("project__name")
    )
    projects = {m.project_id: m.project for m in memberships}
    cards = []
    for project in projects.values():
        snapshot = latest_snapshot(project)
        payload = snapshot.payload if snapshot else None
        cards.append(
            {
                "project": project,
                "computed_at": snapshot.computed_at if snapshot else None,
                "decisions": payload["decisions"] if payload else [],
                "criteria": len({c["name"] for c in payload["criteria"]}) if payload else 0,
            }
        )
    return render(request, "judging/dashboards.html", {"cards": cards})
