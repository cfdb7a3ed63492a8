"""Calibration dashboards: can a judge be trusted on each criterion yet?"""

from django.shortcuts import render

from reviews import selectors


def dashboards(request):
    return render(
        request, "judging/dashboards.html", {"projects": selectors.projects_with_roles(request.user)}
    )
