"""The compare page, reached from a judge's page: two versions (or judges) item by item, the
flips, each one's agreement with people, their paired difference, and the prompt diff."""

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging.forms import CompareForm
from judging.reports.compare.report import CompareError, judges_compare
from judging.reports.judge_page import compare_defaults
from judging.selectors import criterion_names, judge_config
from judging.services.calibration.splits import current_draw
from judging.services.judges.refs import judge_ref_choices
from judging.views.held_out import held_out_shown
from reviews.access import project_for_user
from reviews.models import Role


@require_safe
def judge_compare(request, slug, name):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    project = access.project
    config = judge_config(project, name)
    if config is None:
        raise Http404("no such judge")
    form = CompareForm(
        request.GET or compare_defaults(config) or None,
        criteria=criterion_names(project),
        refs=judge_ref_choices(project),
    )
    context = {"project": project, "config": config, "form": form, "report": None}
    if form.is_valid():
        options = form.cleaned_data
        hidden = options["split"] != "calibration" and current_draw(project) is not None
        if hidden and not held_out_shown(request, project):
            context |= {"held_out_hidden": True, "held_out_what": f"compare ({config.name})"}
        else:
            try:
                context["report"] = judges_compare(
                    actor=request.user, project=project, record_look=False, **options
                )
            except CompareError as exc:
                form.add_error(None, str(exc))
    return render(request, "judging/compare.html", context)
