"""`estimate --format markdown`: each estimate as a short Markdown report."""

from __future__ import annotations

from typing import Any

from judging.reports.agreement.markdown import escape_cell


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def _figure(figure: dict[str, Any]) -> str:
    low, high = figure["ci"]
    return f"{figure['value']:.4f} [{low:.4f}, {high:.4f}]"


def _entry(entry: dict[str, Any]) -> list[str]:
    level = round(100 * (1 - entry["alpha"]), 2)
    where = f"split {entry['split']}" + (f", slice {entry['slice']}" if entry["slice"] else "")
    selection = entry["label_selection"]
    return [
        f"## {escape_cell(entry['criterion'])} (version "
        f"{escape_cell(entry['criterion_version'])}) judged by {escape_cell(entry['judge'])}",
        "",
        f"{escape_cell(entry['measure'])}; {where}: {entry['n_labeled']} items labelled by "
        f"people and the judge, {entry['n_unlabeled']} by the judge only.",
        "",
        f"| figure | estimate [{level:g}% CI] | what it is |",
        "|---|---|---|",
        f"| PPI++ | {_figure(entry['ppi'])} | the judge on every item, corrected by its errors "
        f"on the labelled ones (lambda {entry['lambda']:.4f}) |",
        f"| human only | {_figure(entry['human_only'])} | the labelled items alone |",
        f"| judge only | {_figure(entry['judge_only'])} | the judge's own rate: biased by its "
        "errors |",
        "",
        f"Labels: {selection['rule']}. {_sentence(escape_cell(selection['note']))}.",
        "",
        *_needed(entry.get("labels_needed")),
    ]


def _count(needed: dict) -> str:
    return "more than there are items" if needed["total"] is None else f"{needed['more']} more"


def _needed(needed: dict | None) -> list[str]:
    if needed is None:
        return []
    return [
        f"To reach ±{needed['half_width']:g}: label {_count(needed['ppi'])} at random for "
        f"PPI++ ({needed['ppi']['method']}), {_count(needed['human_only'])} for human only.",
        "",
    ]


def render_estimate_markdown(report: dict[str, Any]) -> str:
    lines = [f"# True scores: project {escape_cell(report['project'])}", ""]
    for entry in report["estimates"]:
        lines += _entry(entry)
    return "\n".join(lines)
