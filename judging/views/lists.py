"""Dashboards across projects: each project's latest release decisions, at a glance."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging.selectors import dashboard_cards


@require_safe
def dashboards(request):
    return render(request, "judging/dashboards.html", {"cards": dashboard_cards(request.user)})
