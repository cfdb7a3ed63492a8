"""A criterion's true score page, reached from the dashboard: the PPI++ estimate beside the
human-only and judge-only ones, which labels it used, and how many more random labels would
narrow it (docs/estimates.md). Same figures and refusals as `manage.py estimate`."""

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging.forms import EstimateForm
from judging.presenters import estimate_figures
from judging.reports.estimates.report import ESTIMATE_ERRORS, estimate_report
from judging.selectors import estimate_choices
from judging.services.calibration.splits import current_draw
from judging.views.held_out import held_out_shown
from reviews.access import OVERSEERS, project_for_user


def _initial(refs: list[str]) -> dict:
    """The form's defaults as data: the page shows figures on arrival."""
    fields = EstimateForm.base_fields
    defaults = {name: field.initial for name, field in fields.items() if field.initial is not None}
    return defaults | {"judge": refs[0] if refs else ""}


@require_safe
def estimate_page(request, slug, name):
    access = project_for_user(request.user, slug, roles=OVERSEERS)
    project = access.project
    choices = estimate_choices(project, name)
    if choices is None:
        raise Http404("No such criterion.")
    refs, slices = choices
    form = EstimateForm(request.GET or _initial(refs), refs=refs, slices=slices)
    context = {"project": project, "criterion": name, "form": form, "entry": None}
    if refs and form.is_valid():
        options = form.cleaned_data
        hidden = options["split"] != "calibration" and current_draw(project) is not None
        if hidden and not held_out_shown(request, project):
            context |= {"held_out_hidden": True, "held_out_what": f"estimate ({name})"}
        else:
            try:
                report = estimate_report(
                    actor=request.user,
                    project=project,
                    criterion=name,
                    judge=options["judge"],
                    split=options["split"],
                    slice_name=options["slice"] or None,
                    assume_random=options["assume_random_labels"],
                    alpha=options["alpha"],
                    half_width=options["half_width"],
                    record_look=False,
                )
                entry = report["estimates"][0]
                context |= {"entry": entry, **estimate_figures(entry)}
            except ESTIMATE_ERRORS as exc:
                context["refusal"] = str(exc)
    return render(request, "judging/estimate.html", context)
