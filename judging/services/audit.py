"""Judging's lines in the project audit log: splits drawn, judges and their versions, runs
started, cancelled and resumed, model prices. Written through reviews' service, which owns the
table (judging never writes reviews' rows itself); each judging service makes one call here."""

from __future__ import annotations

from judging.models import Criterion, JudgeConfig, JudgeVersion, ModelPrice, Run, SplitDraw
from reviews.models import ProjectAction
from reviews.services.projects.audit import project_event_record


def split_drawn(draw: SplitDraw, actor) -> None:
    project_event_record(
        draw.project,
        actor,
        ProjectAction.SPLIT_DRAWN,
        target=f"seed {draw.seed}",
        after={"seed": draw.seed, "held_out_fraction": draw.held_out_fraction},
    )


def _endpoint(base_url: str, api_key_env: str) -> dict:
    # The variable's name only: the key itself never reaches the database.
    return {"base_url": base_url, "api_key_env": api_key_env}


def judge_saved(
    config: JudgeConfig, actor, *, created: bool, endpoint_was: tuple, version: JudgeVersion | None
) -> None:
    """A judge created, its endpoint changed, and/or a new version of it."""
    now = _endpoint(config.base_url, config.api_key_env)
    if created:
        project_event_record(
            config.project, actor, ProjectAction.JUDGE_CREATED, target=config.name, after=now
        )
    elif _endpoint(*endpoint_was) != now:
        project_event_record(
            config.project,
            actor,
            ProjectAction.JUDGE_EDITED,
            target=config.name,
            before=_endpoint(*endpoint_was),
            after=now,
        )
    if version is not None:
        project_event_record(
            config.project,
            actor,
            ProjectAction.JUDGE_VERSION_ADDED,
            target=f"{config.name} v{version.number}",
            after={
                "provider": version.provider,
                "model": version.model,
                "temperature": version.temperature,
                "criterion": version.criterion.name if version.criterion else None,
                "prompt_sha256": version.prompt_sha256,
            },
        )


def run_event(run: Run, actor, action: ProjectAction) -> None:
    """A run started, cancelled or resumed (actor None: the worker, resuming after a restart)."""
    version = run.version
    project_event_record(
        run.project,
        actor,
        action,
        target=f"run {run.pk} · {version.config.name} v{version.number}",
        after={"split": run.split, "limit": run.limit, "status": run.status},
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
