"""Where judge and people differ on held-out items: filter, open the item, tag why."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST, require_safe

from evalsite.posting import errors_text
from judging.forms import DisagreementFilterForm, FailureTagForm
from judging.presenters import failure_figures
from judging.selectors import disagreements_page, failure_counts
from judging.services.calibration.failures import buckets_for, failure_tag
from judging.views.dashboard import snapshot_context
from reviews.access import project_for_user
from reviews.models import Item, Role


@require_safe
def disagreement_list(request, slug):
    context = snapshot_context(request, slug, what="disagreements")
    if not context["payload"]:
        return render(request, "judging/dashboard.html", context)
    form = DisagreementFilterForm(request.GET)
    form.is_valid()  # optional text fields: always valid
    page = disagreements_page(context["project"], context["payload"], **form.filters())
    can_tag = context["access"].is_adjudicator
    return render(request, "judging/disagreements.html", {**context, **page, "can_tag": can_tag})


@require_POST
def disagreement_tag(request, slug, item_pk):
    access = project_for_user(request.user, slug, roles=[Role.ADJUDICATOR])
    item = get_object_or_404(Item, pk=item_pk, project=access.project)
    form = FailureTagForm(request.POST)
    tag, error = None, ""
    if not form.is_valid():
        error = errors_text(form)
    else:
        try:
            tag = failure_tag(
                actor=request.user, project=access.project, item=item, **form.tag_fields()
            )
        except ValidationError as exc:
            error = " ".join(exc.messages)
    row = {
        "item_pk": item.pk,
        "item": item.external_id,
        "criterion": form["criterion"].value(),
        "judge": form["judge"].value(),
        "tag": tag,
    }
    return render(
        request,
        "judging/disagreements.html#tag-form",
        {
            "project": access.project,
            "row": row,
            "buckets": buckets_for(access.project),
            "saved": tag is not None,
            "error": error,
            "can_tag": True,
        },
    )


@require_safe
def failure_analysis(request, slug):
    context = snapshot_context(request, slug, what="failure analysis")
    if not context["payload"]:
        return render(request, "judging/dashboard.html", context)
    summary, total = failure_counts(context["project"], context["payload"])
    figures = failure_figures(summary)
    return render(request, "judging/failures.html", {**context, **figures, "total": total})
