"""Project list, project home, project creation, the raters' guidelines and settings."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_safe

from evalsite.posting import refused_input
from reviews import selectors
from reviews.access import project_for_user
from reviews.formats.rows import ROW_FORMATS
from reviews.forms import (
    ProjectCreateForm,
    ProjectInstructionsForm,
    ProjectSettingsForm,
    RaterQualitySettingForm,
)
from reviews.models import ItemStatus, Role
from reviews.selectors_admin import recent_exports
from reviews.selectors_rows import row_kinds
from reviews.services.jobs.exports import GROUND_TRUTH_INLINE_MAX
from reviews.services.projects.members import project_create, project_settings_update
from reviews.services.projects.questions import question_define
from reviews.services.rating.quality import (
    gold_items,
    rater_accuracy,
    rater_alerts,
    rater_quality_setting,
)
from reviews.views.questions import builder_context, template_chosen

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
            "row_kinds": row_kinds().values() if access.is_admin else [],
            "row_formats": ROW_FORMATS,
            "ground_truth_inline_max": GROUND_TRUTH_INLINE_MAX,
            "recent_exports": recent_exports(access.project, access.roles),
        },
    )


@require_safe
def rater_quality_page(request, slug):
    """Each rater's accuracy on gold items, week by week, and agreement with the resolutions."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN, Role.ADJUDICATOR])
    setting = rater_quality_setting(access.project)
    raters = rater_accuracy(access.project)
    alerts = {q.rater for q in rater_alerts(access.project, raters)}
    return render(
        request,
        "reviews/rater_quality.html",
        {
            "access": access,
            "project": access.project,
            "rows": [(q, q.rater in alerts, _sparkline(q.drift)) for q in raters],
            "setting": setting,
            "form": _alert_form(request, setting),
            "gold_count": len(gold_items(access.project)),
            "chart": {"width": CHART_W, "height": CHART_H},
        },
    )


def _alert_form(request, setting) -> RaterQualitySettingForm:
    """The alert's form: as a refused post left it (its reasons beside the fields), else the
    saved setting."""
    refused = refused_input(request, "rater-alert")
    if refused is not None:
        return RaterQualitySettingForm(refused["values"])
    return RaterQualitySettingForm(
        initial={"alert_below": setting.alert_below, "min_answers": setting.min_answers}
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
    """A project and, optionally, its first question (the builder): every import then asks
    it. A refused form shows what was typed with the reason beside the field."""
    if not request.user.is_staff:
        raise PermissionDenied("Only staff can create projects.")
    data = request.POST if request.method == "POST" else None
    # A template button pressed without htmx: shown again as typed, nothing refused yet.
    form = (
        ProjectCreateForm(initial=data.dict()) if template_chosen(data) else ProjectCreateForm(data)
    )
    asking = data is not None and any(
        data.get(f"q-{name}", "").strip() for name in ("name", "labels", "text")
    )
    builder = builder_context(
        data if asking or template_chosen(data) else None, legend="First question (optional)"
    )
    qform = builder["qform"]
    submitted = data is not None and not template_chosen(data)
    if submitted and form.is_valid() and (not asking or qform.is_valid()):
        try:
            result, defined = _project_with_question(request.user, form, qform if asking else None)
        except ValidationError as error:
            form.add_error(None, error)
        else:
            messages.success(request, _created_message(result, defined))
            return redirect(result.project)
    return render(request, "reviews/project_new.html", {"form": form, **builder})


def _project_with_question(actor, form, qform):
    """The project and its first question in one transaction (a refused question leaves no
    project behind)."""
    with transaction.atomic():
        result = project_create(actor=actor, **form.cleaned_data)
        defined = None
        if qform is not None and result.created:
            defined = question_define(
                project=result.project,
                actor=actor,
                definition=qform.definition(),
                ask_on_import=True,
            )
    return result, defined


def _created_message(result, defined) -> str:
    name = result.project.name
    if not result.created:
        return f"You already run {name}; nothing changed."
    if defined is None:
        return f"Project {name} created."
    return f"Project {name} created; every import asks {defined.request}."


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
        {"access": access, "project": access.project, "form": form, **builder_context()},
    )
