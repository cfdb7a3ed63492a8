"""The calibration dashboard and criterion pages: read from the latest snapshot and say when it
was computed and whether the labels changed since. A GET never queues a recompute: the write
that changed the inputs does (`project_data_changed`), or an admin's *Recompute* button."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from judging import charts
from judging.charts import trusted_svg
from judging.models import Criterion
from judging.services.dashboard import inputs_fingerprint, latest_snapshot
from judging.services.judge_page import held_out_looks
from judging.services.send_to_humans import SELECTIONS
from judging.services.splits import current_draw, held_out_access_log
from judging.tasks import recompute_pending, request_recompute
from reviews.access import project_for_user
from reviews.models import Role

# Raters never see judge verdicts or agreement figures.
READERS = [Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER]


def snapshot_context(request, slug: str, *, what: str) -> dict:
    """The project's latest figures, their freshness, and a logged view of held-out data."""
    access = project_for_user(request.user, slug, roles=READERS)
    project = access.project
    snapshot = latest_snapshot(project)
    stale = snapshot is None or snapshot.fingerprint != inputs_fingerprint(project)
    payload = snapshot.payload if snapshot else None
    if payload and payload.get("split") == "held_out":
        held_out_access_log(actor=request.user, project=project, what=what)
    return {
        "access": access,
        "project": project,
        "snapshot": snapshot,
        "payload": payload,
        "stale": stale,
        "pending": recompute_pending(project),
    }


def _with_charts(criterion: dict) -> dict:
    gate = criterion.get("gate", {})
    for row in criterion["rows"]:
        kappa = row.get("cohen_kappa") or {}
        row["kappa_svg"] = trusted_svg(
            charts.interval_svg(
                kappa.get("value"),
                kappa.get("ci"),
                threshold=gate.get("min_lower"),
                lo=-0.2,
                title=f"{criterion['name']}, {row['judge']}: Cohen's kappa",
            )
        )
    return criterion


@require_safe
def project_dashboard(request, slug):
    context = snapshot_context(request, slug, what="dashboard")
    payload = context["payload"]
    if payload:
        for criterion in payload["criteria"]:
            _with_charts(criterion)
    context["held_out_looks"] = held_out_looks(context["project"])
    if context["access"].is_admin:
        project = context["project"]
        context["setup"] = {
            "draw": current_draw(project),
            "criteria": sorted(
                set(Criterion.objects.filter(project=project).values_list("name", flat=True))
            ),
            "selections": SELECTIONS,
        }
    return render(request, "judging/dashboard.html", context)


def _criterion(payload: dict, name: str, version: str | None) -> dict:
    matches = [c for c in payload["criteria"] if c["name"] == name]
    if version:
        matches = [c for c in matches if c["version"] == version]
    latest = [c for c in matches if c["latest"]] or matches
    if not latest:
        raise Http404("No such criterion.")
    return latest[-1]


@require_safe
def criterion_page(request, slug, name):
    context = snapshot_context(request, slug, what=f"criterion {name}")
    payload = context["payload"]
    if not payload:
        return render(request, "judging/dashboard.html", context)
    criterion = _with_charts(_criterion(payload, name, request.GET.get("version")))
    heatmaps = [
        (
            row["judge"],
            trusted_svg(
                charts.heatmap_svg(
                    row["confusion_matrix"]["labels"],
                    row["confusion_matrix"]["counts"],
                    title=f"{name}: human vs {row['judge']}",
                )
            ),
        )
        for row in criterion["rows"]
        if row.get("confusion_matrix")
    ]
    threshold = criterion.get("gate", {}).get("min_lower")
    slices = [
        (
            slice_name,
            row,
            trusted_svg(
                charts.interval_svg(
                    (row.get("cohen_kappa") or {}).get("value"),
                    (row.get("cohen_kappa") or {}).get("ci"),
                    threshold=threshold,
                    lo=-0.2,
                    title=f"{slice_name}, {row['judge']}: Cohen's kappa",
                )
            ),
        )
        for slice_name, rows in criterion["slices"].items()
        for row in rows
    ]
    slices.sort(key=lambda entry: _lower_bound(entry[1]))
    versions = [c for c in payload["criteria"] if c["name"] == name]
    reliability = [
        (
            judge,
            trusted_svg(charts.reliability_svg(r["bins"], title=f"{name}: {judge} reliability")),
            r,
        )
        for judge, r in sorted(criterion["reliability"].items())
    ]
    return render(
        request,
        "judging/criterion.html",
        {
            **context,
            "criterion": criterion,
            "heatmaps": heatmaps,
            "slice_rows": slices,
            "versions": versions,
            "reliability": reliability,
        },
    )


def _lower_bound(row: dict) -> tuple[bool, float]:
    """Worst first: undefined or missing intervals before any number; slices with no items
    (n = 0: nothing to judge) last."""
    ci = (row.get("cohen_kappa") or {}).get("ci")
    return (not row.get("n"), ci[0] if ci else float("-inf"))


@require_POST
def recompute(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    if request_recompute(access.project):
        messages.info(request, "Recomputing the figures in the background.")
    else:
        messages.info(request, "A recompute is already queued.")
    return redirect("project_dashboard", slug)
