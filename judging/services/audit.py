"""Judging's lines in the project audit log: splits drawn, judges and their versions, runs
started, cancelled and resumed, model prices. Written through reviews' service, which owns the
table (judging never writes reviews' rows itself); each judging service makes one call here."""

from __future__ import annotations

from judging.models import (
    Criterion,
    JudgeConfig,
    JudgeVersion,
    ModelPrice,
    ProjectBudget,
    Run,
    SplitDraw,
)
from reviews.models import ProjectAction
from reviews.services.projects.audit import changed_values, project_event_record


def split_drawn(draw: SplitDraw, actor) -> None:
    project_event_record(
        draw.project,
        actor,
        ProjectAction.SPLIT_DRAWN,
        target=f"seed {draw.seed}",
        after={"seed": draw.seed, "held_out_fraction": draw.held_out_fraction},
    )


def version_settings(version: JudgeVersion) -> dict:
    """What a version judges with and where it calls: the key variable's name only (the key
    itself never reaches the database)."""
    return {
        "provider": version.provider,
        "model": version.model,
        "temperature": version.temperature,
        "samples": version.samples,
        "criterion": version.criterion.name if version.criterion else None,
        "prompt_sha256": version.prompt_sha256,
        "base_url": version.base_url,
        "api_key_env": version.api_key_env,
        "evidence": version.evidence,
        "max_pages": version.max_pages,
        "timeout_seconds": version.timeout_seconds,
        "max_retries": version.max_retries,
        "concurrency": version.concurrency,
    }


def judge_saved(config: JudgeConfig, actor, *, created: bool, version: JudgeVersion | None) -> None:
    """A judge created and/or a new version of it (endpoint changes are new versions too)."""
    if created:
        project_event_record(config.project, actor, ProjectAction.JUDGE_CREATED, target=config.name)
    if version is not None:
        project_event_record(
            config.project,
            actor,
            ProjectAction.JUDGE_VERSION_ADDED,
            target=f"{config.name} v{version.number}",
            after=version_settings(version),
        )


def run_event(run: Run, actor, action: ProjectAction) -> None:
    """A run started, cancelled or resumed (actor None: the worker, resuming after a restart)."""
    version = run.version
    project_event_record(
        run.project,
        actor,
        action,
        target=f"run {run.pk} · {version.config.name} v{version.number}",
        after={
            "split": run.split,
            "limit": run.limit,
            "status": run.status,
            **({"budget_usd": run.budget_usd} if run.budget_usd is not None else {}),
        },
    )


def price_added(price: ModelPrice, actor) -> None:
    """Site-wide: a price applies to every project's runs of that model."""
    project_event_record(
        None,
        actor,
        ProjectAction.PRICE_ADDED,
        target=f"{price.provider}/{price.model}",
        after={
            "input_per_million": price.input_per_million,
            "output_per_million": price.output_per_million,
            "effective_from": price.effective_from,
        },
    )


def criterion_defined(criterion: Criterion, actor, *, previous: Criterion | None) -> None:
    """A question defined in the builder or by `manage.py criterion`: its new version."""

    def shown(row: Criterion) -> dict:
        return {
            "version": row.version,
            "labels": list(row.labels),
            "positive": row.positive_label,
            "ordinal": row.ordinal,
            "critical": row.critical,
            "pairwise": row.pairwise,
            "text": row.text,
        }

    before, after = (shown(previous), shown(criterion)) if previous else ({}, shown(criterion))
    project_event_record(
        criterion.project,
        actor,
        ProjectAction.CRITERION_DEFINED,
        target=f"{criterion.name} v{criterion.version}",
        before={k: v for k, v in before.items() if after.get(k) != v},
        after={k: v for k, v in after.items() if before.get(k) != v},
    )


def panel_configured(panel, actor, *, members: list[str], before: dict | None = None) -> None:
    """A panel made (`before` None: its rule, pinned members and dissent choice), or its rule or
    dissent choice changed in the admin (`before`: those as they were; only what moved)."""
    now = {"rule": panel.rule, "send_dissent": panel.send_dissent}
    if before is None:
        old, new = {}, {**now, "members": members}
    else:
        old, new = changed_values(before, now)
        if not new:
            return
    project_event_record(
        panel.project,
        actor,
        ProjectAction.PANEL_CONFIGURED,
        target=panel.name,
        before=old,
        after=new,
    )


def gate_changed(project, actor, criterion: str, before: dict, after: dict) -> None:
    """A release gate's thresholds set, changed or removed (back to the defaults)."""
    project_event_record(
        project, actor, ProjectAction.GATE_CHANGED, target=criterion, before=before, after=after
    )


def budget_changed(budget: ProjectBudget, actor, before) -> None:
    """A project's monthly cap on model spending set or changed (a project setting)."""
    project_event_record(
        budget.project,
        actor,
        ProjectAction.SETTINGS_CHANGED,
        target="monthly model budget",
        before=None if before is None else {"monthly_budget_usd": before},
        after={"monthly_budget_usd": budget.monthly_usd},
    )
