"""Project list, project home, project creation, the raters' guidelines and settings."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from reviews import selectors
from reviews.access import project_for_user
from reviews.forms import (
    ProjectCreateForm,
    ProjectInstructionsForm,
    ProjectSettingsForm,
    RaterQualitySettingForm,
)
from reviews.models import ItemStatus, Role
from reviews.services.projects.members import project_create, project_settings_update
from reviews.services.rating.quality import (
    gold_items,
    rater_alerts,
    rater_quality,
    rater_quality_setting,
)

CHART_W, CHART_H = 240, 60  # the drift sparkline, in pixels


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
            "status_counts": [(ItemStatus(s).label, s, n, more) for s, (n, more) in counts.items()],
            "total_items": sum(n for n, _ in counts.values()),
            "total_more": any(more for _, more in counts.values()),
            "my_assignments": selectors.assignment_counts_for_rater(
                rater=request.user, project=access.project
            ),
            "rater_alerts": rater_alerts(access.project) if access.is_admin else [],
        },
    )


@require_safe
def rater_quality_page(request, slug):
    """Each rater's accuracy on gold items, week by week, and agreement with the resolutions."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN, Role.ADJUDICATOR])
    setting = rater_quality_setting(access.project)
    raters = rater_quality(access.project)
    alerts = {q.rater for q in rater_alerts(access.project, raters)}
    return render(
        request,
        "reviews/rater_quality.html",
        {
            "access": access,
            "project": access.project,
            "rows": [(q, q.rater in alerts, _sparkline(q.drift)) for q in raters],
            "setting": setting,
            "form": RaterQualitySettingForm(
                initial={"alert_below": setting.alert_below, "min_answers": setting.min_answers}
            ),
            "gold_count": len(gold_items(access.project)),
            "chart": {"width": CHART_W, "height": CHART_H},
        },
    )


def _sparkline(drift) -> list[dict]:
    """Points of the weekly accuracy line: x by week, y = accuracy (1 at the top)."""
    step = CHART_W / max(len(drift) - 1, 1)
    return [
        {
            "x": round(i * step, 1),
            "y": round((1 - accuracy) * (CHART_H - 8) + 4, 1),
            "week": week,
            "n": n,
            "accuracy": accuracy,
        }
        for i, (week, n, accuracy) in enumerate(drift)
    ]


@require_http_methods(["GET", "POST"])
def project_new(request):
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can create projects.")
    form = ProjectCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            result = project_create(actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            if result.created:
                messages.success(request, f"Project {result.project.name} created.")
            else:
                messages.info(request, f"You already run {result.project.name}; nothing changed.")
            return redirect(result.project)
    return render(request, "reviews/project_new.html", {"form": form})


@require_http_methods(["GET", "POST"])
def project_instructions(request, slug):
    """Project admins write the raters' guidelines (Markdown, shown sanitised)."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    project = access.project
    form = ProjectInstructionsForm(
        request.POST or None, initial={"instructions": project.instructions}
    )
    if request.method == "POST" and form.is_valid():
        project_settings_update(actor=request.user, project=project, changes=form.cleaned_data)
        messages.success(request, "Guidelines saved.")
        return redirect("project_instructions", project.slug)
    return render(
        request,
        "reviews/project_instructions.html",
        {"access": access, "project": project, "form": form},
    )


@require_http_methods(["GET", "POST"])
def project_settings(request, slug):
    """The one place a project's settings change: its admins only (staff included as members)."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    form = ProjectSettingsForm(request.POST or None, instance=access.project)
    if request.method == "POST" and form.is_valid():
        changes = {field: form.cleaned_data[field] for field in form.changed_data}
        project_settings_update(actor=request.user, project=access.project, changes=changes)
        messages.success(request, "Settings saved." if changes else "Nothing changed.")
        return redirect("project_settings", slug)
    return render(
        request,
        "reviews/project_settings.html",
        {"access": access, "project": access.project, "form": form},
    )
