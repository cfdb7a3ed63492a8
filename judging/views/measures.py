"""The text-metrics and pass@k pages: a GET form, one service call, the figures. Held-out items
are read only after *Show held-out figures* (which recorded the look), as on the dashboard."""

from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging.forms_measures import PassAtKForm, TextMetricsForm
from judging.reports.pass_at_k import PassAtKError, pass_at_k_report
from judging.reports.text_metrics import TextMetricsError, text_metrics_report
from judging.services.calibration.splits import SplitError, current_draw
from judging.views.held_out import held_out_shown
from reviews.access import OVERSEERS, project_for_user

ITEMS_SHOWN = 200  # item rows on the text-metrics page; the figures use every item


def _page(request, slug, form_class, template, what, build):
    access = project_for_user(request.user, slug, roles=OVERSEERS)
    project = access.project
    form = form_class(request.GET or None, project=project)
    context = {"project": project, "form": form, "report": None}
    if form.is_valid():
        options = form.cleaned_data
        hidden = options["split"] != "calibration" and current_draw(project) is not None
        if hidden and not held_out_shown(request, project):
            context |= {"held_out_hidden": True, "held_out_what": what}
        else:
            try:
                context["report"] = build(request.user, project, options)
            except (SplitError, TextMetricsError, PassAtKError) as error:
                form.add_error(None, str(error))
    return render(request, template, context)


def _text_metrics(user, project, options):
    report = text_metrics_report(
        actor=user,
        project=project,
        metrics=options["metrics"],
        split=options["split"],
        slice_name=options["slice"] or None,
        with_items=True,
        record_look=False,
    )
    report["items_hidden"] = max(0, len(report["items"]) - ITEMS_SHOWN)
    report["items"] = report["items"][:ITEMS_SHOWN]
    return report


def _pass_at_k(user, project, options):
    report = pass_at_k_report(
        actor=user,
        project=project,
        criterion=options["criterion"],
        ks=options["ks"],
        group_by=options["group_by"],
        judge=options["judge"] or None,
        split=options["split"],
        record_look=False,
    )
    report["rows"] = [
        {"k": k, "stat": stat, "idealised": report["idealised"][k]}
        for k, stat in report["pass_at_k"].items()
    ]
    cases = report["per_case"]
    report["per_case_rows"] = [
        {**case, "values": [case[str(k)] for k in report["k"]]} for case in cases[:ITEMS_SHOWN]
    ]
    report["cases_hidden"] = max(0, len(cases) - ITEMS_SHOWN)
    return report


@require_safe
def text_metrics_page(request, slug):
    return _page(
        request, slug, TextMetricsForm, "judging/text_metrics.html", "text metrics", _text_metrics
    )


@require_safe
def pass_at_k_page(request, slug):
    return _page(request, slug, PassAtKForm, "judging/pass_at_k.html", "pass@k", _pass_at_k)
