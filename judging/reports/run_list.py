"""A project's runs as `manage.py judge_runs` lists them: who ran, what it cost, how it ended."""

from __future__ import annotations

from judging.models import Run
from judging.services.runs.control import Progress, runs_progress


def _when(moment) -> str | None:
    return moment.isoformat() if moment else None


def run_row(p: Progress) -> dict:
    run, version = p.run, p.run.version
    return {
        "id": run.pk,
        "judge": f"{version.provider}/{version.model}",
        "judge_name": version.config.name,
        "judge_version": version.number,
        "split": run.split,
        "status": str(p.status),
        "error": run.error,
        "calls": p.cost.calls,
        "skipped": run.skipped,
        "tokens_in": run.input_tokens,
        "tokens_out": run.output_tokens,
        "usage_missing": p.cost.usage_missing,
        "cost_usd": None if p.cost.usd is None else float(p.cost.usd),
        "budget_usd": None if run.budget_usd is None else float(run.budget_usd),
        "latency_ms": {"p50": p.cost.latency_p50, "p95": p.cost.latency_p95},
        "evidence": version.evidence,
        "started_at": _when(run.started_at),
        "finished_at": _when(run.finished_at),
    }


def runs_report(*, project) -> dict:
    """Every run of the project, oldest first; a cost is the sum of its calls' costs, each at
    the price in force when it was made (null: no price was in force)."""
    runs = Run.objects.filter(project=project).select_related("version__config").order_by("pk")
    return {"runs": [run_row(p) for p in runs_progress(runs)]}


def runs_text(report: dict) -> str:
    lines = []
    for row in report["runs"]:
        if row["cost_usd"] is None:
            cost = "no price"
        else:
            cost = f"{'at least ' * bool(row['usage_missing'])}${row['cost_usd']:.4f}"
        missing = f" ({row['usage_missing']} without usage)" if row["usage_missing"] else ""
        budget = "" if row["budget_usd"] is None else f" of a ${row['budget_usd']:.4f} budget"
        skipped = f", {row['skipped']} items skipped" if row["skipped"] else ""
        latency = row["latency_ms"]
        took = (
            f", latency p50 {latency['p50']} ms, p95 {latency['p95']} ms"
            if latency["p50"] is not None
            else ""
        )
        lines.append(
            f"run {row['id']} {row['judge_name']} v{row['judge_version']} ({row['judge']}) on "
            f"{row['split']}: {row['status']}, {row['calls']} calls{skipped}, tokens "
            f"{row['tokens_in']}+{row['tokens_out']}{missing}, cost {cost}{budget}{took}"
        )
    return "\n".join(lines) or "no runs"
