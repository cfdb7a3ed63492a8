"""Project list, project home and project creation."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from reviews import selectors
from reviews.access import project_for_user
from reviews.forms import ProjectCreateForm
from reviews.models import ItemStatus
from reviews.services.projects import project_create


@require_safe
def project_list(request):
    return render(
        request,
        "reviews/project_list.html",
        {
            "projects": selectors.projects_with_roles(request.user),
            "can_create": request.user.is_staff,
        },
    )


@require_safe
def project_home(request, slug):
    access = project_for_user(request.user, slug)
    counts = selectors.item_counts_by_status(access.project)
    return render(
        request,
        "reviews/project_home.html",
        {
            "access": access,
            "project": access.project,
            "status_counts": [(ItemStatus(s).label, s, n) for s, n in counts.items()],
            "total_items": sum(counts.values()),
            "my_assignments": selectors.assignment_counts_for_rater(
                rater=request.user, project=access.project
            ),
        },
    )


@require_http_methods(["GET", "POST"])
def project_new(request):
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can create projects.")
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        result = project_create(actor=request.user, admin=request.user, **form.cleaned_data)
        if result.created:
            messages.success(request, f"Project {result.project.name} created.")
        else:
            messages.info(request, f"Project {result.project.slug} already existed; updated.")
        return redirect(result.project)
    return render(request, "reviews/project_new.html", {"form": form})
