"""The API's judge and run documents (the client package's `Judge` and `Run`), read in a fixed
number of queries whatever the number of judges, versions or runs."""

from __future__ import annotations

from judging.models import JudgeConfig, JudgeVersion, Run
from judging.reports.run_list import run_row
from judging.services.runs.control import runs_progress

# Where a version calls and what it sees: part of the version (editing them makes a new one).
ENDPOINT_AND_EVIDENCE = (
    "base_url", "api_key_env", "evidence", "max_pages", "timeout_seconds", "max_retries",
    "concurrency",
)  # fmt: skip


def judge_versions(project, **filters) -> list[JudgeVersion]:
    """The project's judge versions (one query), for `judge_document`."""
    found = JudgeVersion.objects.filter(config__project=project, **filters)
    return list(found.select_related("criterion"))


def judge_document(config: JudgeConfig, versions: list[JudgeVersion]) -> dict:
    """The judge with its versions among `versions` (judge_versions: one query for a list)."""
    mine = sorted((v for v in versions if v.config_id == config.pk), key=lambda v: v.number)
    latest = mine[-1] if mine else None
    return {
        "name": config.name,
        "base_url": latest.base_url if latest else "",
        "api_key_env": latest.api_key_env if latest else "",
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
                **{name: getattr(v, name) for name in ENDPOINT_AND_EVIDENCE},
                "created_at": v.created_at,
            }
            for v in mine
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
