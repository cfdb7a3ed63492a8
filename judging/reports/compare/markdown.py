"""`compare_judges --format markdown`: the comparison as a short Markdown report."""

from __future__ import annotations

from typing import Any

from judging.reports.agreement.markdown import escape_cell, stat_text


def _side_line(side: dict[str, Any]) -> str:
    return (
        f"| {escape_cell(side['ref'])} | {escape_cell(side['model'])} | "
        f"{escape_cell(side.get('evidence') or '—')} | {side['n_judged']} | "
        f"{stat_text(side['cohen_kappa'])} | {stat_text(side['observed_agreement'])} | "
        + ", ".join(f"{escape_cell(k)} {v}" for k, v in side["label_counts"].items())
        + " |"
    )


def render_compare_markdown(report: dict[str, Any]) -> str:
    a, b, difference = report["a"], report["b"], report["difference"]
    lines = [
        f"# {escape_cell(a['ref'])} vs {escape_cell(b['ref'])}: "
        f"{escape_cell(report['criterion'])} (version {escape_cell(report['criterion_version'])})",
        "",
        f"Project {escape_cell(report['project'])}, split {report['split']}: "
        f"{report['split_label']}.",
        "",
        f"{report['n_paired']} paired items (both judged, with a final human label); "
        f"{report['flipped']} flipped.",
        "",
        "| side | model | sees | judged | kappa [95% CI] | observed [95% CI] | labels (paired items) |",
        "|---|---|---|---|---|---|---|",
        _side_line(a),
        _side_line(b),
        "",
        f"Difference B − A (paired bootstrap, {report['bootstrap']['n_resamples']} resamples, "
        f"seed {report['bootstrap']['seed']}): kappa {stat_text(difference['cohen_kappa'])}, "
        f"observed agreement {stat_text(difference['observed_agreement'])}.",
        "",
    ]
    if report["flips"]:
        lines += ["## Flips", "", "| item | A | B | human |", "|---|---|---|---|"]
        lines += [
            f"| {escape_cell(f['item_id'])} | {escape_cell(f['a'])} | {escape_cell(f['b'])} | "
            f"{escape_cell(f['human'])} |"
            for f in report["flips"]
        ]
        lines.append("")
    changed = [s for s in report["settings"] if s["changed"]]
    lines += ["## What changed", ""]
    lines += [f"- {s['setting']}: {s['a']} → {s['b']}" for s in changed] or ["- no setting"]
    lines.append("")
    if report["prompt_diff"]:
        lines += ["```diff", *report["prompt_diff"], "```", ""]
    elif report["prompt_note"]:
        lines += [f"Prompt: {report['prompt_note']}.", ""]
    return "\n".join(lines)
