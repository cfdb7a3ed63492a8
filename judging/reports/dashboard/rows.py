"""Which of a criterion's report rows the dashboard shows, which one gates, and how they are named.

Pure (no Django), over agreement-report rows. A judge run from Evalsite has a row per version;
its gate is its latest version with verdicts in the split (the one that ran on held-out), the
earlier versions are shown beside it, labelled, and never gate. Imported judges and configured
panels gate as they are.
"""

from __future__ import annotations

from typing import Any


def row_key(row: dict[str, Any]) -> tuple:
    """Unique within a criterion: two imported judges may share `provider/model`."""
    return (row["judge_ref"], tuple(row["judge_configurations"]))


def row_label(row: dict[str, Any]) -> str:
    """`NAME v2` for a judge version, else `provider/model` or `panel:NAME`."""
    if row.get("judge_name"):
        return f"{row['judge_name']} v{row['judge_version']}"
    return row["judge_ref"]


def shown_rows(rows: list[dict], calibration_rows: list[dict]) -> list[dict]:
    """The rows to show: a judge version only when it has verdicts in the split or in the
    calibration split beside it (a version never run there is not a row)."""
    calibrated = {row_key(r) for r in calibration_rows if r["n_judged"]}
    return [
        row
        for row in rows
        if row["judge_name"] is None or row["n_judged"] or row_key(row) in calibrated
    ]


def mark_gating(rows: list[dict]) -> None:
    """Set `gating` on each row, and on the others `gated_by` (the version that gates, or None
    when no version has verdicts in the split): per judge configuration, only the highest
    version with verdicts in the split gates; imported judges and panels always do."""
    gate_version: dict[str, int] = {}
    for row in rows:
        name = row["judge_name"]
        if name is not None and row["n_judged"]:
            gate_version[name] = max(gate_version.get(name, 0), row["judge_version"])
    for row in rows:
        name = row["judge_name"]
        row["gating"] = name is None or gate_version.get(name) == row["judge_version"]
        gating = gate_version.get(name)
        row["gated_by"] = None if row["gating"] or gating is None else f"{name}@{gating}"


def decision_key(row: dict[str, Any]) -> tuple:
    """One release decision per configured judge (whichever version gates each criterion),
    per imported judge and per panel."""
    if row["judge_name"] is not None:
        return ("judge", row["judge_name"])
    return ("other", *row_key(row))


def decision_label(row: dict[str, Any]) -> str:
    return row["judge_name"] or row["judge_ref"]
