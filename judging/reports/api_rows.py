"""The API's judge and run documents (the client package's `Judge` and `Run`), read in a fixed
number of queries whatever the number of judges, versions or runs."""

from __future__ import annotations

from judging.models import JudgeConfig, JudgeVersion, Run
from judging.reports.run_list import run_row
from judging.services.runs.control import runs_progress


def judge_versions(project, **filters) -> list[JudgeVersion]:
    """The project's judge versions (one query), for `judge_document`."""
    found = JudgeVersion.objects.filter(config__project=project, **filters)
    return list(found.select_related("criterion"))


def judge_document(config: JudgeConfig, versions: list[JudgeVersion]) -> dict:
    """The judge with its versions among `versions` (judge_versions: one query for a list)."""
    mine = [v for v in versions if v.config_id == config.pk]
    return {
        "name": config.name,
        "base_url": config.base_url,
        "api_key_env": config.api_key_env,
        "versions": [
            {
                "ref": f"{config.name}@{v.number}",
                "number": v.number,
                "provider": v.provider,
                "model": v.model,
                "temperature": v.temperature,
                "samples": v.samples,
                "criterion": v.criterion.name if v.criterion else None,
                "prompt": v.prompt,
                "prompt_sha256": v.prompt_sha256,
                "created_at": v.created_at,
            }
            for v in sorted(mine, key=lambda v: v.number)
        ],
    }


def _document(progress) -> dict:
    run = progress.run
    return run_row(progress) | {
        "status": str(progress.status),
        "planned": run.planned,
        "finished": progress.finished,
        "percent": progress.percent,
        "done": run.done,
        "unparsed": run.unparsed,
        "failed": run.failed,
        "reused": run.reused,
        "error": run.error,
    }


def run_document(run: Run) -> dict:
    return _document(runs_progress([run])[0])


def runs_documents(project) -> list[dict]:
    """Every judge run of the project (readers' runs belong to generation), oldest first."""
    runs = (
        Run.objects.filter(project=project, version__criterion__isnull=False)
        .select_related("version__config")
        .order_by("pk")
    )
    return [_document(p) for p in runs_progress(runs)]
