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


def _side(name: str, side: dict[str, Any]) -> str:
    return (
        f"| {escape_cell(name)} | {side['n_labeled']} + {side['n_unlabeled']} | "
        f"{_figure(side['ppi'])} | {_figure(side['human_only'])} | {_figure(side['judge_only'])} |"
    )


def render_systems_markdown(report: dict[str, Any]) -> str:
    """`compare_systems --format markdown`."""
    a, b, difference = report["a"], report["b"], report["difference"]
    lines = [
        f"# {escape_cell(a['system'])} vs {escape_cell(b['system'])}: "
        f"{escape_cell(report['criterion'])} judged by {escape_cell(report['judge'])}",
        "",
        f"{escape_cell(report['measure'])}; {report['n_pairs']} inputs with an output of each "
        f"system (paired by metadata {escape_cell(report['pair_by'])}); left out: "
        + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in report["pairs_left_out"].items())
        + ".",
        "",
        "| | labelled + judge only | PPI++ | human only | judge only |",
        "|---|---|---|---|---|",
        _side(f"A: {a['system']}", a),
        _side(f"B: {b['system']}", b),
        _side("A − B (paired)", difference),
        "",
        f"Labels: {report['label_selection']['rule']}. "
        f"{_sentence(escape_cell(report['label_selection']['note']))}.",
        "",
        "Pairs the judge labelled differently (people's labels first where they disagree):",
        "",
        "| pair | A | B | judge (A, B) | people (A, B) |",
        "|---|---|---|---|---|",
    ]
    for row in report["drivers"]:
        human = ", ".join(row["human"]) if row["human"] else "—"
        lines.append(
            f"| {escape_cell(row['pair'])} | {escape_cell(row['a'])} | {escape_cell(row['b'])} "
            f"| {escape_cell(', '.join(row['judge']))} | {escape_cell(human)} |"
        )
    return "\n".join(lines) + "\n"


def _strength(strength: dict[str, Any]) -> str:
    if strength["value"] is None:
        return "—"
    if strength["ci"] is None:
        return f"{strength['value']:.3f}"
    low, high = strength["ci"]
    return f"{strength['value']:.3f} [{low:.3f}, {high:.3f}]"


def render_leaderboard_markdown(report: dict[str, Any]) -> str:
    """`leaderboard --format markdown`: the systems by strength, then the judges' consistency."""
    who = report["source"] + (f", judge {report['judge']}" if report["judge"] else "")
    lines = [
        f"# Leaderboard: {escape_cell(report['criterion'])} ({escape_cell(who)})",
        "",
        f"{report['comparisons']} comparisons; Bradley-Terry log-strengths (mean 0), 95% "
        f"bootstrap intervals from {report['n_resamples']} resamples (seed {report['seed']}).",
    ]
    if report.get("reason"):
        lines += ["", _sentence(report["reason"]) + "."]
    lines += [
        "",
        "| system | strength [95% CI] | wins | losses | ties |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in report["systems"]:
        lines.append(
            f"| {escape_cell(row['system'])} | {_strength(row['strength'])} | {row['wins']} | "
            f"{row['losses']} | {row['ties']} |"
        )
    lines += ["", "| judge | position consistency |", "| --- | --- |"]
    for row in report["judges"]:
        figure = row["position_consistency"]
        shown = f"{figure['value']:.3f}" if figure.get("value") is not None else "—"
        lines.append(f"| {escape_cell(row['judge'])} | {shown} |")
    return "\n".join(lines) + "\n"
