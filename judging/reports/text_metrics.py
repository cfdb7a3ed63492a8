"""Text metrics as measured figures (`manage.py text_metrics`, the *Text metrics* page): each
item's output against its reference, by exact match, token F1, BLEU and ROUGE
(`judging.metrics.text`; formulas and caveats in docs/scoring.md).

Items without an output or without a reference are left out and counted (`skipped`). Each item
is read at its current revision, named in the item rows.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from judging.metrics.text import METRICS, as_text, text_metric
from judging.reports.item_scope import scoped_items
from reviews.models import Project

N_RESAMPLES = 2000
CI_LEVEL = 0.95


class TextMetricsError(ValueError):
    """The report cannot be made as asked (a clear, user-facing reason)."""


def text_metrics_report(
    *,
    actor,
    project: Project,
    metrics: list[str],
    split: str = "all",
    slice_name: str | None = None,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    with_items: bool = False,
    record_look: bool = True,
) -> dict[str, Any]:
    """`{"project", "split", "slice", "computed_at", "n_items", "skipped", "bootstrap",
    "metrics": [{"metric", "n", "mean", "corpus"?}], "items"?}`; docs/scoring.md."""
    unknown = [m for m in metrics if m not in METRICS]
    if unknown or not metrics:
        raise TextMetricsError(
            f"unknown text metric {', '.join(map(repr, unknown)) or '(none given)'}: choose "
            f"from {', '.join(METRICS)}"
        )
    metrics = list(dict.fromkeys(metrics))
    items = scoped_items(
        actor=actor,
        project=project,
        split=split,
        slice_name=slice_name,
        what="text metrics",
        record_look=record_look,
    )
    rows = list(items.values_list("external_id", "revision", "output", "expected"))
    usable = [r for r in rows if r[2] is not None and r[3] is not None]
    outputs = [as_text(r[2]) for r in usable]
    references = [as_text(r[3]) for r in usable]
    figures, scores = [], {}
    for metric in metrics:
        figure, scores[metric] = text_metric(
            metric, outputs, references, seed=seed, n_resamples=n_resamples
        )
        figures.append(figure)
    report = {
        "project": project.slug,
        "split": split,
        "slice": slice_name,
        "computed_at": timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        "n_items": len(rows),
        "skipped": len(rows) - len(usable),
        "bootstrap": {
            "method": "percentile",
            "level": CI_LEVEL,
            "n_resamples": n_resamples,
            "seed": seed,
            "over": "items",
        },
        "metrics": figures,
    }
    if with_items:
        report["items"] = [
            {
                "item_id": external_id,
                "revision": revision,
                "output": output,
                "reference": reference,
                "scores": {metric: scores[metric][i] for metric in metrics},
            }
            for i, (external_id, revision, output, reference) in enumerate(usable)
        ]
    return report


def render_markdown(report: dict[str, Any]) -> str:
    where = f"split {report['split']}" + (f", slice {report['slice']}" if report["slice"] else "")
    boot = report["bootstrap"]
    lines = [
        f"# Text metrics: {report['project']}",
        "",
        f"{where}: {report['n_items']} items, {report['skipped']} without an output or a "
        f"reference (left out). Computed at {report['computed_at']}.",
        "",
        f"Means with a {boot['level']:.0%} percentile bootstrap CI over items "
        f"({boot['n_resamples']} resamples, seed {boot['seed']}). BLEU and ROUGE measure word "
        "overlap with the reference, not correctness.",
        "",
        "| metric | n | mean [95% CI] | corpus [95% CI] |",
        "|---|---|---|---|",
    ]
    for figure in report["metrics"]:
        corpus = stat_text(figure["corpus"]) if "corpus" in figure else "-"
        lines.append(
            f"| {figure['metric']} | {figure['n']} | {stat_text(figure['mean'])} | {corpus} |"
        )
    return "\n".join([*lines, ""])


def stat_text(stat: dict[str, Any]) -> str:
    if stat["value"] is None:
        return f"undefined ({stat['undefined_reason']})"
    text = f"{stat['value']:.3f}"
    if stat["ci"] is not None:
        text += f" [{stat['ci'][0]:.3f}, {stat['ci'][1]:.3f}]"
    return text
