"""Where judge and people differ on held-out items: filter, open the item, tag why."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST, require_safe

from judging import charts
from judging.charts import trusted_svg
from judging.services.failures import buckets_for, current_tags, failure_summary, failure_tag
from judging.views.dashboard import snapshot_context
from reviews.access import project_for_user
from reviews.models import Item, Role


def _rows(project, payload) -> tuple[list[dict], dict[int, list[str]]]:
    """Every disagreement of the latest criterion versions, with its item's pk and slices."""
    rows = [dict(r) for c in payload["criteria"] if c["latest"] for r in c["disagreements"]]
    items = Item.objects.filter(project=project, external_id__in={r["item"] for r in rows})
    by_id = {i.external_id: i for i in items.prefetch_related("slices")}
    slices_of = {}
    for row in rows:
        item = by_id.get(row["item"])
        row["item_pk"] = item.pk if item else None
        slices_of[row["item_pk"]] = sorted(s.name for s in item.slices.all()) if item else []
        row["slices"] = slices_of[row["item_pk"]]
    return [r for r in rows if r["item_pk"]], slices_of


@require_safe
def disagreement_list(request, slug):
    context = snapshot_context(request, slug, what="disagreements")
    payload = context["payload"]
    if not payload:
        return render(request, "judging/dashboard.html", context)
    project = context["project"]
    rows, _ = _rows(project, payload)
    filters = {k: request.GET.get(k, "") for k in ("criterion", "judge", "slice", "pair")}
    options = {
        "criterion": sorted({r["criterion"] for r in rows}),
        "judge": sorted({r["judge"] for r in rows}),
        "slice": sorted({s for r in rows for s in r["slices"]}),
        "pair": sorted({f"{r['human']} → {r['judged']}" for r in rows}),
    }
    shown = [
        r
        for r in rows
        if (not filters["criterion"] or r["criterion"] == filters["criterion"])
        and (not filters["judge"] or r["judge"] == filters["judge"])
        and (not filters["slice"] or filters["slice"] in r["slices"])
        and (not filters["pair"] or f"{r['human']} → {r['judged']}" == filters["pair"])
    ]
    lead = [name for name in request.GET.get("lead", "").split(",") if name]
    shown = led_by(shown, lead)
    tags = current_tags(project)
    for row in shown:
        row["tag"] = tags.get((row["item_pk"], row["criterion"], row["judge"]))
    return render(
        request,
        "judging/disagreements.html",
        {
            **context,
            "rows": shown,
            "total": len(rows),
            "filters": filters,
            "lead": lead,
            "options": options,
            "buckets": buckets_for(project),
            "can_tag": context["access"].is_adjudicator,
        },
    )


@require_POST
def disagreement_tag(request, slug, item_pk):
    access = project_for_user(request.user, slug, roles=[Role.ADJUDICATOR])
    item = get_object_or_404(Item, pk=item_pk, project=access.project)
    bucket = request.POST.get("bucket") or None
    error = ""
    try:
        tag = failure_tag(
            actor=request.user,
            project=access.project,
            item=item,
            criterion=request.POST.get("criterion", "")[:100],
            judge=request.POST.get("judge", "")[:300],
            bucket_pk=int(bucket) if bucket and bucket.isdigit() else None,
            note=request.POST.get("note", ""),
        )
    except ValidationError as exc:
        tag, error = None, " ".join(exc.messages)
    row = {
        "item_pk": item.pk,
        "item": item.external_id,
        "criterion": request.POST.get("criterion"),
        "judge": request.POST.get("judge"),
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
    payload = context["payload"]
    if not payload:
        return render(request, "judging/dashboard.html", context)
    rows, slices_of = _rows(context["project"], payload)
    summary = failure_summary(rows, current_tags(context["project"]), slices_of)
    chart = trusted_svg(
        charts.bars_svg(summary["per_bucket"], title="Disagreements per failure bucket")
    )
    slice_names = sorted({s for counts in summary["per_slice"].values() for s in counts})
    return render(
        request,
        "judging/failures.html",
        {
            **context,
            "summary": summary,
            "chart": chart,
            "slice_names": slice_names,
            "total": len(rows),
        },
    )


def led_by(rows: list[dict], lead: list[str]) -> list[dict]:
    """From a HOLD decision: rows of the criteria that failed its gate first, in that order."""
    return sorted(
        rows, key=lambda r: lead.index(r["criterion"]) if r["criterion"] in lead else len(lead)
    )
