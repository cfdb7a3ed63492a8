"""A score report as Markdown: per-field figures, per-record figures, failure contexts.

Pure: renders the dict `judging.reports.scoring.build.score_report_build` returns. Each section keeps its own
label; the provisional one never says accuracy.
"""

from __future__ import annotations

from typing import Any

from judging.reports.agreement.markdown import escape_cell, stat_text
from judging.reports.attribution import CONTEXTS
from judging.reports.scoring.build import NO_CONTEXT


def _fields(section: dict[str, Any]) -> list[str]:
    measure = section["measure"]
    lines = [
        f"### Per field ({measure} [95% CI])",
        "",
        f"| producer | stage | field | n | correct | wrong | missing | {measure} |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in section["fields"]:
        lines.append(
            f"| {escape_cell(row['producer'] or '-')} | {escape_cell(row['stage_id'] or '-')} | "
            f"{escape_cell(row['path'])} | {row['n']} | {row['correct']} | {row['wrong']} | "
            f"{row['missing']} | {stat_text(row[measure])} |"
        )
    return [*lines, ""]


def scope_text(case: dict[str, Any]) -> str:
    """`every reference path`, or the declared fields."""
    if case["scope_fields"] is None:
        return "every reference path"
    return "declared fields: " + ", ".join(case["scope_fields"])


def _cases(section: dict[str, Any]) -> list[str]:
    key = f"field_{section['measure']}"
    lines = [
        "### Per record",
        "",
        f"| case | producer | stage | scored on | {key} | verdict | failure context | missing "
        "| extra |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for case in section["cases"]:
        lines.append(
            f"| {escape_cell(case['case_id'])} | {escape_cell(case['producer'] or '-')} | "
            f"{escape_cell(case['stage_id'] or '-')} | {escape_cell(scope_text(case))} | "
            f"{stat_text(case[key])} | {case['verdict']} | "
            f"{case['failure_context'] or '-'} | {escape_cell(', '.join(case['missing']))} | "
            f"{escape_cell(', '.join(case['extra']))} |"
        )
    skipped = [
        f"- {escape_cell(case['case_id'])}: skipped {escape_cell(k['path'])} "
        f"({escape_cell(k['reason'])})"
        for case in section["cases"]
        for k in case.get("skipped", [])
    ]
    return [*lines, "", *skipped, *([""] if skipped else [])]


def _claims(section: dict[str, Any]) -> list[str]:
    """Per producer and stage the claim measures; then each record's undecided or failing
    claims with the judge's reason."""
    if not section.get("claim_scores"):
        return []
    lines = [
        "### Claims (semantic comparison; counts pooled over cases, 95% CI over cases)",
        "",
        "| producer | stage | cases | claim precision | reference recall"
        + (" (estimated by a judge)" if section["reference"] == "evidence" else "")
        + " | coverage | F1 |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in section["claim_scores"]:
        cells = [
            stat_text(row[key])
            for key in ("claim_precision", "reference_recall", "claim_verification_coverage", "f1")
        ]
        lines.append(
            f"| {escape_cell(row['producer'] or '-')} | {escape_cell(row['stage_id'] or '-')} | "
            f"{row['n_cases']} | " + " | ".join(cells) + " |"
        )
    lines.append("")
    for case in section["cases"]:
        claims = case.get("claims")
        if not claims:
            continue
        who = f"{case['case_id']} ({case['producer'] or '-'})"
        if claims["error"]:
            lines.append(f"- {escape_cell(who)}: {escape_cell(claims['error'])}")
        for claim in claims["predicted"] + claims["reference"]:
            if claim["decision"] in ("contradicted", "missed"):
                lines.append(
                    f"- {escape_cell(who)} {claim['decision']}: {escape_cell(claim['text'])}"
                    + (f" ({escape_cell(claim['explanation'])})" if claim["explanation"] else "")
                )
    return [*lines, ""]


def _counts(section: dict[str, Any]) -> list[str]:
    columns = (*CONTEXTS, NO_CONTEXT)
    lines = [
        "### Failure context per stage",
        "",
        "| producer | stage | " + " | ".join(columns) + " |",
        "|---" * (len(columns) + 2) + "|",
    ]
    for row in section["stage_counts"]:
        counts = " | ".join(str(row["contexts"][c]) for c in columns)
        lines.append(
            f"| {escape_cell(row['producer'] or '-')} | {escape_cell(row['stage_id'] or '-')} | {counts} |"
        )
    return [*lines, ""]


def render_markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Score report: {escape_cell(report['project'])}",
        "",
        f"Predictions: {escape_cell(report['source'])} ({report['n_records']} records). "
        f"Computed at {report['computed_at']}.",
        "",
    ]
    for section in report["sections"]:
        lines += [
            f"## {section['label'][0].upper()}{section['label'][1:]}",
            "",
            f"{section['n_records']} records over {section['n_cases']} cases.",
            "",
        ]
        if section["cases"]:
            lines += _fields(section) + _cases(section) + _claims(section) + _counts(section)
    if report["unscored"]:
        lines += ["## Not scored", ""]
        lines += [
            f"- {escape_cell(u['case_id'])} ({u['record']}): {escape_cell(u['reason'])}"
            for u in report["unscored"]
        ]
        lines.append("")
    return "\n".join(lines)
