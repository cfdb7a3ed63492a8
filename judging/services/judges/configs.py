"""Judge configurations and their versions: the one writer (CLI, form and admin use it).

A version is never edited: saving a judge whose settings (provider, model, temperature,
samples, criterion, prompt, base URL, key variable, evidence mode and page cap, timeout,
retries, concurrency) differ from its latest version writes a new version (its prompt SHA-256
shown); saving the same settings again writes nothing. Where the model is reached is part of
the version: a run names exactly what it called.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields

from django.db import transaction

from judging.models import Criterion, EvidenceMode, JudgeConfig, JudgeVersion
from judging.providers import PROVIDERS
from judging.services.audit import judge_saved
from judging.services.imports.criteria import judge_ensure
from judging.services.judges.endpoints import EndpointRefused, check_endpoint
from judging.services.runs.prompts import PromptError, check_template, prompt_sha256
from reviews.models import Project

ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")


class JudgeConfigError(ValueError):
    """A judge setting that cannot be saved; the message names the setting."""


@dataclass(frozen=True)
class JudgeSettings:
    provider: str
    model: str
    prompt: str
    temperature: float | None = 0.0
    samples: int = 1
    criterion: str | None = None
    base_url: str = ""
    api_key_env: str = ""
    evidence: str = EvidenceMode.NONE
    max_pages: int = 8
    timeout_seconds: int = 120
    max_retries: int = 4
    concurrency: int = 4

    @classmethod
    def of(cls, values: Mapping, **overrides) -> "JudgeSettings":
        """The settings named in `values` (a form's cleaned data or a command's options), with
        `overrides` for those the caller reads otherwise (the prompt from a file)."""
        names = {f.name for f in fields(cls)}
        return cls(**{name: values[name] for name in names & values.keys()} | overrides)


@dataclass(frozen=True)
class SaveResult:
    config: JudgeConfig
    version: JudgeVersion
    created: bool


# (setting, lowest, highest): bounds that keep a version's calls sane.
LIMITS = (
    ("max_pages", 1, 100),
    ("timeout_seconds", 1, 600),
    ("max_retries", 0, 10),
    ("concurrency", 1, 64),
)


def _check_limits(settings: JudgeSettings) -> None:
    if settings.evidence not in EvidenceMode.values:
        raise JudgeConfigError(
            f"evidence: {settings.evidence!r} is not one of {', '.join(EvidenceMode.values)}"
        )
    for name, low, high in LIMITS:
        value = getattr(settings, name)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise JudgeConfigError(f"{name}: a whole number from {low} to {high}")


def _check(project: Project, settings: JudgeSettings) -> Criterion | None:
    if settings.provider not in PROVIDERS:
        raise JudgeConfigError(
            f"provider: {settings.provider!r} is not one of {', '.join(PROVIDERS)}"
        )
    if not settings.model.strip():
        raise JudgeConfigError("model: required")
    if settings.temperature is not None and not 0 <= settings.temperature <= 2:
        raise JudgeConfigError("temperature: must be between 0 and 2")
    if not 1 <= settings.samples <= 20:
        raise JudgeConfigError("samples: must be between 1 and 20")
    _check_limits(settings)
    if settings.api_key_env and not ENV_NAME.match(settings.api_key_env):
        raise JudgeConfigError(
            "api_key_env: the NAME of an environment variable (like OPENAI_API_KEY), not a key"
        )
    try:
        check_endpoint(settings.base_url, settings.api_key_env)
    except EndpointRefused as exc:
        raise JudgeConfigError(str(exc)) from None
    try:
        check_template(settings.prompt)
    except PromptError as exc:
        raise JudgeConfigError(f"prompt: {exc}") from None
    if settings.criterion is None:
        return None
    criterion = (
        Criterion.objects.filter(project=project, name=settings.criterion)
        .order_by("-created_at")
        .first()
    )
    if criterion is None:
        raise JudgeConfigError(
            f"criterion: no criterion {settings.criterion!r} in project {project.slug!r}"
        )
    return criterion


# What a version is, besides its criterion and prompt: a change to any is a new version.
JUDGED_SETTINGS = (
    "provider", "model", "temperature", "samples", "base_url", "api_key_env", "evidence",
    "max_pages", "timeout_seconds", "max_retries", "concurrency",
)  # fmt: skip


def _judged(source: JudgeVersion | JudgeSettings) -> dict:
    return {name: getattr(source, name) for name in JUDGED_SETTINGS}


def _same(version: JudgeVersion | None, settings: JudgeSettings, criterion, sha: str) -> bool:
    return (
        version is not None
        and _judged(version) == _judged(settings)
        and version.criterion_id == getattr(criterion, "pk", None)
        and version.prompt_sha256 == sha
    )


@transaction.atomic
def judge_config_save(
    *, project: Project, name: str, settings: JudgeSettings, actor=None
) -> SaveResult:
    if not re.fullmatch(r"[-a-zA-Z0-9_]{1,100}", name or ""):
        raise JudgeConfigError("name: letters, digits, '-' and '_' only")
    criterion = _check(project, settings)
    config, created = JudgeConfig.objects.select_for_update().get_or_create(
        project=project, name=name
    )
    latest = config.versions.order_by("-number").first()
    sha = prompt_sha256(settings.prompt)
    if _same(latest, settings, criterion, sha):
        judge_saved(config, actor, created=created, version=None)
        return SaveResult(config, latest, False)
    judge, _ = judge_ensure(
        project=project,
        provider=settings.provider,
        model=settings.model,
        temperature=settings.temperature,
        prompt_sha256=sha,
        sees=sees_key(settings.evidence, settings.max_pages),
    )
    version = JudgeVersion.objects.create(
        config=config,
        number=(latest.number + 1) if latest else 1,
        criterion=criterion,
        prompt=settings.prompt,
        prompt_sha256=sha,
        judge=judge,
        created_by=actor if getattr(actor, "pk", None) else None,
        **_judged(settings),
    )
    judge_saved(config, actor, created=created, version=version)
    return SaveResult(config, version, True)


def sees_key(evidence: str, max_pages: int) -> str:
    """What a judge sees besides the text, as its Judge row's key names it ("" for text only):
    a visual judge's verdicts are never counted as the text-only judge's."""
    return "" if evidence == EvidenceMode.NONE else f"{evidence}/{max_pages}"


def version_get(config: JudgeConfig, number: int | None) -> JudgeVersion:
    versions = config.versions.order_by("-number")
    version = versions.filter(number=number).first() if number else versions.first()
    if version is None:
        raise JudgeConfigError(
            f"judge {config.name!r} has no version {number}" if number else "no version yet"
        )
    return version
