"""The agreement report as Markdown: one table per criterion, undefined values with their reasons.

Pure: renders the dict `agreement_report_build` returns. Names from imported files are escaped
so a `|` in a criterion or judge name cannot break a table.
"""

from __future__ import annotations

from typing import Any

COLUMNS = [
    ("n", "n"),
    ("ties excl.", "ties_excluded"),
    ("stale verdicts", "stale_verdicts"),
    ("stale labels", "stale_labels"),
    ("observed", "observed_agreement"),
    ("kappa [95% CI]", "cohen_kappa"),
    ("AC1", "gwet_ac1"),
    ("alpha", "krippendorff_alpha"),
    ("F1 macro", "f1_macro"),
    ("pass judged", "pass_rate_judged"),
    ("pass human", "pass_rate_human"),
]


def escape_cell(text: Any) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def stat_text(stat: dict[str, Any]) -> str:
    if stat["value"] is None:
        return "undefined"
    text = f"{stat['value']:.3f}"
    if stat["ci"] is not None:
        text += f" [{stat['ci'][0]:.3f}, {stat['ci'][1]:.3f}]"
    return text


def _who(row: dict[str, Any]) -> str:
    """`NAME@VERSION (provider/model)` for a judge version; a panel with its pinned members."""
    panel = row.get("panel")
    if panel:
        members = ", ".join(
            m["ref"] + (f" [{m['missing']} not judged]" if m["missing"] else "")
            for m in panel["members"]
        )
        return f"{row['judge']} ({panel['rule']} of {members})"
    if row.get("judge_name"):
        return f"{row['judge_ref']} ({row['judge']})"
    return row["judge"]


def _cell(row: dict[str, Any], key: str) -> str:
    value = row[key]
    return stat_text(value) if isinstance(value, dict) else str(value)


def _undefined(row: dict[str, Any]) -> list[str]:
    """One line per reason: `- judge: reason (columns)`."""
    columns: dict[str, list[str]] = {}
    for title, key in COLUMNS:
        if isinstance(row[key], dict) and row[key]["value"] is None:
            columns.setdefault(row[key]["undefined_reason"], []).append(title)
    return [
        f"- {escape_cell(_who(row))}: {escape_cell(reason)} ({', '.join(titles)})"
        for reason, titles in columns.items()
    ]


def _confusion(row: dict[str, Any]) -> list[str]:
    matrix = row["confusion_matrix"]
    labels = [escape_cell(label) for label in matrix["labels"]]
    lines = [
        f"Confusion matrix, {escape_cell(_who(row))} (rows human, columns judge):",
        "",
        "| human \\ judge | " + " | ".join(labels) + " |",
        "|---" * (len(labels) + 1) + "|",
    ]
    lines += [
        f"| {label} | " + " | ".join(str(c) for c in counts) + " |"
        for label, counts in zip(labels, matrix["counts"], strict=True)
    ]
    return [*lines, ""]


def _criterion_section(name: str, rows: list[dict[str, Any]]) -> list[str]:
    first = rows[0]
    positive = (
        f", positive {escape_cell(first['positive_label'])}" if first["positive_label"] else ""
    )
    lines = [
        f"## {escape_cell(name)} (version {escape_cell(first['criterion_version'])})",
        "",
        f"Labels: {', '.join(escape_cell(label) for label in first['labels'])}{positive}.",
        "",
        "| judge | " + " | ".join(title for title, _ in COLUMNS) + " |",
        "|---" * (len(COLUMNS) + 1) + "|",
    ]
    lines += [
        f"| {escape_cell(_who(row))} | " + " | ".join(_cell(row, key) for _, key in COLUMNS) + " |"
        for row in rows
    ]
    undefined = [line for row in rows for line in _undefined(row)]
    if undefined:
        lines += ["", "Undefined:", *undefined]
    lines.append("")
    for row in rows:
        if row["n"]:
            lines += _confusion(row) + _per_label(row) + _thresholds(row)
    return lines


def _per_label(row: dict[str, Any]) -> list[str]:
    """Per label (human label as the reference), then the three averages, each named."""
    lines = [
        f"Per label, {escape_cell(_who(row))} (human label as the reference):",
        "",
        "| label | precision | recall | F1 | support |",
        "|---|---|---|---|---|",
    ]
    for label, scores in row["per_label"].items():
        cells = [stat_text(scores[key]) for key in ("precision", "recall", "f1")]
        lines.append(f"| {escape_cell(label)} | " + " | ".join(cells) + f" | {scores['support']} |")
    for average in ("macro", "micro", "weighted"):
        cells = [stat_text(row[f"{key}_{average}"]) for key in ("precision", "recall", "f1")]
        lines.append(f"| *{average} average* | " + " | ".join(cells) + f" | {row['n']} |")
    reasons = {
        scores[key]["undefined_reason"]
        for scores in row["per_label"].values()
        for key in ("precision", "recall", "f1")
        if scores[key]["value"] is None
    }
    if reasons:
        lines += ["", *(f"- undefined: {escape_cell(reason)}" for reason in sorted(reasons))]
    return [*lines, ""]


def _thresholds(row: dict[str, Any]) -> list[str]:
    """Ordinal criteria: agreement at each cut point (labels before it negative)."""
    if not row["thresholds"]:
        return []
    lines = [
        f"Cut points, {escape_cell(_who(row))}:",
        "",
        "| at | groups | n | kappa [95% CI] | observed |",
        "|---|---|---|---|---|",
    ]
    for entry in row["thresholds"]:
        groups = " vs ".join(escape_cell(g) for g in entry["confusion_matrix"]["labels"])
        lines.append(
            f"| {escape_cell(entry['at'])} | {groups} | {entry['n']} | "
            f"{stat_text(entry['cohen_kappa'])} | {stat_text(entry['observed_agreement'])} |"
        )
    return [*lines, ""]


def _human_section(entries: list[dict[str, Any]]) -> list[str]:
    if not entries:
        return ["## Human–human agreement", "", "No item has labels from two raters.", ""]
    lines = [
        "## Human–human agreement",
        "",
        "| criterion | raters | n | Cohen's kappa | Fleiss' kappa | Krippendorff's alpha |",
        "|---|---|---|---|---|---|",
    ]
    for entry in entries:
        raters = ", ".join(escape_cell(r) for r in entry["raters"])
        if entry["kind"] == "rater_pair":
            cells = [str(entry["n"]), stat_text(entry["cohen_kappa"]), "", ""]
        else:
            raters = f"all ({raters})"
            cells = [
                str(entry["n_items"]),
                "",
                stat_text(entry["fleiss_kappa"]),
                stat_text(entry["krippendorff_alpha"]),
            ]
        lines.append(
            f"| {escape_cell(entry['criterion'])} | {raters} | " + " | ".join(cells) + " |"
        )
    return [*lines, ""]


def render_markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Agreement report: {escape_cell(report['project'])}",
        "",
        f"Split: **{report['split']}**: {report['split_label']}.",
        f"Computed at {report['computed_at']}.",
        "",
    ]
    if report.get("collapse_at"):
        lines += [
            f"Collapsed at **{escape_cell(report['collapse_at'])}**: labels before it "
            "against it and those after.",
            "",
        ]
    if report["development_figures"]:
        lines += ["> DEVELOPMENT FIGURES: not a measure of the judge on unseen items.", ""]
    lines += [f"- Note: {escape_cell(note)}" for note in report["notes"]]
    if report["notes"]:
        lines.append("")
    by_criterion: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in report["results"]:
        by_criterion.setdefault((row["criterion"], row["criterion_version"]), []).append(row)
    if not by_criterion:
        lines += ["No criterion has judge verdicts yet.", ""]
    for (name, _), rows in by_criterion.items():
        lines += _criterion_section(name, rows)
    lines += _human_section(report["human_human"])
    return "\n".join(lines)
