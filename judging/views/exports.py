"""Downloads: the dashboard report (Markdown, JSON with agreement_report's keys) and each
chart as SVG, PNG or its data as CSV."""

from __future__ import annotations

import csv
import io
import json
import re

from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging import charts
from judging.forms_inputs import FigureChoiceForm
from judging.presenters import NoSuchCriterion, find_criterion
from judging.reports.agreement.markdown import render_markdown
from judging.selectors import failure_counts
from judging.views.dashboard import snapshot_context
from reviews.evidence import svg_to_png
from reviews.formats.reference import formula_like


def _attachment(name: str) -> str:
    """A Content-Disposition value: criterion and judge names come from imported files, so
    anything but ASCII letters, digits, dot and dash becomes `_` (a quote or a line break would
    otherwise break the header)."""
    return f'attachment; filename="{re.sub(r"[^A-Za-z0-9._-]+", "_", name)}"'


def dashboard_report_data(payload: dict, failures: dict) -> dict:
    """The snapshot as an agreement report (same keys), plus gates, decisions and failures."""
    latest = [c for c in payload["criteria"] if c["latest"]]
    return {
        "project": payload["project"],
        "split": payload["split"],
        "split_label": payload["split_label"],
        "development_figures": payload["split"] != "held_out",
        "computed_at": payload["computed_at"],
        "notes": [],
        "results": [
            {k: v for k, v in row.items() if k != "kappa_svg"} for c in latest for row in c["rows"]
        ],
        "human_human": [h for c in latest for h in c["human_human"]],
        "gates": {c["name"]: c["gate"] for c in latest},
        "decisions": payload["decisions"],
        "failure_buckets": {
            "per_bucket": dict(failures["per_bucket"]),
            "examples": failures["examples"],
        },
    }


def _markdown(report: dict) -> str:
    lines = [render_markdown(report), "## Release decisions", ""]
    for d in report["decisions"]:
        why = "; ".join(f"{f['criterion']} ({', '.join(f['reasons'])})" for f in d["failing"])
        slices = f" (slices: {', '.join(d['failing_slices'])})" if d["failing_slices"] else ""
        lines.append(
            f"- **{d['label']}: {d['decision']}**: {why or 'every criterion passes'}{slices}"
        )
    lines += ["", "## Failure buckets", ""]
    for bucket, n in report["failure_buckets"]["per_bucket"].items():
        lines.append(f"### {bucket} ({n})")
        for e in report["failure_buckets"]["examples"].get(bucket, []):
            note = f": {e['note']}" if e.get("note") else ""
            lines.append(
                f"- {e['item']} · {e['criterion']} · {e['judge']}: human {e['human']}, "
                f"judge {e['judged']}{note}"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


@require_safe
def dashboard_report(request, slug, fmt):
    context = snapshot_context(request, slug, what=f"report download ({fmt})")
    if context["held_out_hidden"]:  # the page with Show, which then comes back here
        return render(request, "judging/dashboard.html", context)
    payload = context["payload"]
    if not payload:
        raise Http404("No figures computed yet.")
    report = dashboard_report_data(payload, failure_counts(context["project"], payload)[0])
    name = f"{context['project'].slug}-agreement"
    if fmt == "json":
        body, content_type = json.dumps(report, indent=2, ensure_ascii=False), "application/json"
    else:
        body, content_type = _markdown(report), "text/markdown; charset=utf-8"
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = _attachment(f"{name}.{fmt}")
    return response


def _chart(kind: str, criterion: dict, judge: str) -> tuple[str, list[list]]:
    """(svg, csv rows) for one chart of one judge; the drawing names its criterion and judge."""
    about = f"{criterion['name']} v{criterion['version']} · {judge}"
    if kind == "confusion":
        row = next((r for r in criterion["rows"] if r["judge_ref"] == judge), None)
        if row is None or not row.get("confusion_matrix"):
            raise Http404("No such chart.")
        labels, counts = row["confusion_matrix"]["labels"], row["confusion_matrix"]["counts"]
        data = [["human \\ judge", *labels]] + [
            [h, *c] for h, c in zip(labels, counts, strict=True)
        ]
        return charts.heatmap_svg(
            labels,
            counts,
            title=f"{criterion['name']}: human vs {judge}",
            heading=f"Confusion matrix · {about}",
        ), data
    if kind == "reliability":
        found = criterion["reliability"].get(judge)
        if found is None:
            raise Http404("No such chart.")
        data = [["low", "high", "count", "mean_confidence", "accuracy"]] + [
            [b["low"], b["high"], b["count"], b["mean_confidence"], b["accuracy"]]
            for b in found["bins"]
        ]
        return charts.reliability_svg(
            found["bins"],
            title=f"{criterion['name']}: {judge}",
            heading=f"Reliability of judge confidence · {about}",
        ), data
    raise Http404("No such chart.")


def _text_cell(cell):
    """Labels come from imports: one a spreadsheet would run as a formula is shown as text."""
    return f"'{cell}" if isinstance(cell, str) and formula_like(cell) else cell


@require_safe
def dashboard_chart(request, slug, kind, name, fmt):
    context = snapshot_context(request, slug, what=f"chart {kind} {name}")
    if context["held_out_hidden"]:
        return render(request, "judging/dashboard.html", context)
    if not context["payload"]:
        raise Http404("No figures computed yet.")
    choice = FigureChoiceForm(request.GET)
    try:
        criterion = find_criterion(context["payload"], name, choice.version_or_none())
    except NoSuchCriterion:
        raise Http404("No such criterion.") from None
    judge = choice.judge_ref()
    svg, data = _chart(kind, criterion, judge)
    filename = f"{slug}-{name}-{kind}-{judge}.{fmt}"
    if fmt == "svg":
        response = HttpResponse(svg, content_type="image/svg+xml")
    elif fmt == "png":
        response = HttpResponse(svg_to_png(svg.encode()), content_type="image/png")
    else:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerows(
            [[_text_cell(cell) for cell in row] for row in data]
        )
        response = HttpResponse(buffer.getvalue(), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = _attachment(filename)
    return response
