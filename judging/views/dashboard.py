"""The calibration dashboard and criterion pages: read from the latest snapshot and say when it
was computed and whether the labels changed since. A GET never queues a recompute: the write
that changed the inputs does (`project_data_changed`), or an admin's *Recompute* button; either
is a background job, whose page the freshness line links while it waits or runs."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from evalsite.posting import refused_input
from judging.forms_inputs import FigureChoiceForm
from judging.presenters import NoSuchCriterion, criterion_figures, dashboard_charts
from judging.reports.judge_page import held_out_looks
from judging.selectors import dashboard_setup
from judging.services.dashboard import inputs_fingerprint, latest_snapshot
from judging.services.dashboard_recompute import recompute_job, recompute_request
from judging.views.held_out import held_out_shown
from reviews.access import OVERSEERS, project_for_user
from reviews.models import Role
from reviews.selectors import recent_jobs

# What the setup panel's *Items* offers (send_to_humans' selections), in words.
SEND_SELECTIONS = (
    ("split_votes", "Split votes (judge samples disagree)"),
    ("calibration_sample", "A stratified calibration sample"),
    ("held_out", "The held-out set"),
    ("inconsistent_pairs", "Inconsistent pairs (pairwise verdict changed with the display order)"),
)


def snapshot_context(request, slug: str, *, what: str) -> dict:
    """The project's latest figures and their freshness; held-out figures only once the reader
    asked to see them (`held_out_show`, logged), else no payload and `held_out_hidden`."""
    access = project_for_user(request.user, slug, roles=OVERSEERS)
    project = access.project
    snapshot = latest_snapshot(project)
    stale = snapshot is None or snapshot.fingerprint != inputs_fingerprint(project)
    payload = snapshot.payload if snapshot else None
    hidden = bool(payload) and payload.get("split") == "held_out"
    hidden = hidden and not held_out_shown(request, project)
    return {
        "access": access,
        "project": project,
        "snapshot": snapshot,
        "payload": None if hidden else payload,
        "held_out_hidden": hidden,
        "held_out_what": what,
        "stale": stale,
        "pending": recompute_job(project),  # its job page, linked while it waits or runs
    }


@require_safe
def project_dashboard(request, slug):
    context = snapshot_context(request, slug, what="dashboard")
    dashboard_charts(context["payload"])
    context["held_out_looks"] = held_out_looks(context["project"])
    if context["access"].is_admin:
        context["setup"] = dashboard_setup(context["project"])
        context["refused_split"] = refused_input(request, "split")
        context["refused_send"] = refused_input(request, "send")
        context["send_selections"] = SEND_SELECTIONS
        context["jobs"] = recent_jobs(context["project"])  # the split draws and sends
    return render(request, "judging/dashboard.html", context)


@require_safe
def criterion_page(request, slug, name):
    context = snapshot_context(request, slug, what=f"criterion {name}")
    if not context["payload"]:
        return render(request, "judging/dashboard.html", context)
    try:
        figures = criterion_figures(
            context["payload"], name, FigureChoiceForm(request.GET).version_or_none()
        )
    except NoSuchCriterion:
        raise Http404("No such criterion.") from None
    return render(request, "judging/criterion.html", {**context, **figures})


@require_POST
def recompute(request, slug):
    """A background job: the post answers with its page (the one already waiting, if any)."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    job, queued = recompute_request(project=access.project, actor=request.user)
    if not queued:
        messages.info(request, "A recompute was already waiting for the task worker: this is it.")
    return redirect("job", slug, job.pk)
