"""Criteria and judges as imports meet them: created once, then reused, never silently redefined.

A criterion is identified by (project, name, version). Its fingerprint is the SHA-256 of the
canonical JSON of name, version, labels and text; importing a different definition under a name
and version that already exist is refused, because every verdict and label already stored was
given against the old definition. A changed rubric is a new version.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace

from judging.models import Criterion, Judge
from judging.services.audit import criterion_defined
from reviews.models import Project
from reviews.services.imports.registry import ImportKind, register_import
from reviews.services.projects.questions import (
    DefinedQuestion,
    QuestionDefinition,
    QuestionType,
)

PAIRWISE_CRITERION = "preference"
PAIRWISE_LABELS = ["A", "B", "tie"]


# What defines a criterion wherever one is copied: a definition into a row, a row into a report.
CRITERION_FIELDS = (
    "name",
    "version",
    "labels",
    "positive_label",
    "ordinal",
    "critical",
    "pairwise",
)


def criterion_fields(source) -> dict:
    """The defining fields of a criterion row or definition (its labels as a new list)."""
    values = {name: getattr(source, name) for name in CRITERION_FIELDS}
    values["labels"] = list(values["labels"])
    return values


class CriterionConflict(Exception):
    """A criterion definition disagrees with the stored one of the same name and version."""


@dataclass(frozen=True)
class CriterionDefinition:
    name: str
    labels: list[str]
    version: str = "1"
    positive_label: str = ""
    ordinal: bool = False
    critical: bool = False
    pairwise: bool = False
    text: str = ""

    @property
    def sha256(self) -> str:
        return criterion_fingerprint(self.name, self.version, self.labels, self.text)


def criterion_fingerprint(name: str, version: str, labels: list[str], text: str) -> str:
    canonical = json.dumps(
        {"name": name, "version": version, "labels": list(labels), "text": text},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _differences(stored: Criterion, wanted: CriterionDefinition) -> list[str]:
    pairs = {
        "labels": (stored.labels, wanted.labels),
        "text": (stored.text, wanted.text),
        "positive": (stored.positive_label, wanted.positive_label),
        "ordinal": (stored.ordinal, wanted.ordinal),
        "critical": (stored.critical, wanted.critical),
        "pairwise": (stored.pairwise, wanted.pairwise),
    }
    return [f"{key} {old!r} -> {new!r}" for key, (old, new) in pairs.items() if old != new]


def criterion_ensure(
    *, project: Project, definition: CriterionDefinition
) -> tuple[Criterion, bool]:
    """The stored criterion of this name and version (created if new): `(criterion, created)`.

    Raises CriterionConflict when the stored one is defined differently.
    """
    stored = Criterion.objects.filter(
        project=project, name=definition.name, version=definition.version
    ).first()
    if stored is not None:
        differences = _differences(stored, definition)
        if differences:
            raise CriterionConflict(
                f"criterion {definition.name!r} version {definition.version!r} already exists "
                f"with a different definition ({'; '.join(differences)}); "
                "give the changed criterion a new version"
            )
        return stored, False
    created = Criterion.objects.create(
        project=project,
        text=definition.text,
        sha256=definition.sha256,
        **criterion_fields(definition),
    )
    return created, True


def latest_criterion(*, project: Project, name: str) -> Criterion | None:
    """The newest version of a criterion: what a verdict naming only the criterion refers to."""
    return (
        Criterion.objects.filter(project=project, name=name).order_by("-created_at", "-pk").first()
    )


def _next_version(project: Project, name: str) -> str:
    """One above the highest whole-number version (versions imported from files may be any
    text: those are skipped over, never reused)."""
    taken = set(
        Criterion.objects.filter(project=project, name=name).values_list("version", flat=True)
    )
    number = max((int(v) for v in taken if v.isdigit()), default=0) + 1
    while str(number) in taken:
        number += 1
    return str(number)


def criterion_define(project: Project, actor, definition: QuestionDefinition) -> DefinedQuestion:
    """A criterion as the question builder or `manage.py criterion` defines it: a new version
    when anything differs from the newest one (questions already asked keep the version they
    were asked with, and answers stay on it); the same definition again changes nothing."""
    wanted = CriterionDefinition(
        name=definition.name,
        labels=list(definition.labels),
        positive_label=definition.positive,
        ordinal=definition.kind == QuestionType.ORDINAL,
        critical=definition.critical,
        pairwise=definition.kind == QuestionType.PAIRWISE,
        text=definition.text,
    )
    request = f"criterion:{definition.name}"
    latest = latest_criterion(project=project, name=definition.name)
    if latest is not None and not _differences(latest, wanted):
        return DefinedQuestion(request=request, version=latest.version, created=False)
    wanted = replace(wanted, version=_next_version(project, definition.name))
    criterion, _ = criterion_ensure(project=project, definition=wanted)
    criterion_defined(criterion, actor, previous=latest)
    return DefinedQuestion(request=request, version=criterion.version, created=True)


def criterion_kind(criterion: Criterion) -> str:
    """The builder's kind of a stored criterion (pass/fail: two labels, one of them passing)."""
    if criterion.pairwise:
        return QuestionType.PAIRWISE
    if not criterion.labels:
        return QuestionType.FREE_TEXT
    if criterion.ordinal:
        return QuestionType.ORDINAL
    if len(criterion.labels) == 2 and criterion.positive_label:
        return QuestionType.PASS_FAIL
    return QuestionType.CHOICE


def question_snapshot(criterion: Criterion) -> dict:
    """What a question asking `criterion` keeps of it, so a later version changes nothing
    already asked: its name as the key, its labels, text and version."""
    return {
        "key": criterion.name,
        "labels": list(criterion.labels),
        "prompt": criterion.text,
        "criterion_version": criterion.version,
    }


def default_pairwise_criterion(*, project: Project) -> tuple[Criterion, bool]:
    """`preference` (A / B / tie): the criterion of pairwise verdicts that name none."""
    existing = latest_criterion(project=project, name=PAIRWISE_CRITERION)
    if existing is not None:
        return existing, False
    return criterion_ensure(
        project=project,
        definition=CriterionDefinition(
            name=PAIRWISE_CRITERION,
            labels=PAIRWISE_LABELS,
            pairwise=True,
            text="Which answer is better? A, B, or a tie.",
        ),
    )


def judge_ensure(
    *,
    project: Project,
    provider: str,
    model: str,
    temperature: float | None = None,
    prompt_sha256: str | None = None,
    sees: str = "",
) -> tuple[Judge, bool]:
    """The judge of this exact configuration (created if new): `(judge, created)`. `sees`: the
    evidence a visual judge is shown (judge_configs.sees_key), part of its configuration."""
    key = Judge.configuration_key(provider, model, temperature, prompt_sha256)
    if sees:
        key += f"|e={sees}"
    return Judge.objects.get_or_create(
        project=project,
        configuration=key,
        defaults={
            "provider": provider,
            "model": model,
            "temperature": temperature,
            "prompt_sha256": prompt_sha256 or "",
        },
    )


register_import(ImportKind.DEFINER, "criterion", criterion_define)
