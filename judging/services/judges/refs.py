"""Naming one judge version: `NAME@VERSION` (`j@2`) for a judge run from Evalsite,
`provider/model` for imported verdicts (a judge with no configuration), wherever a command or a
panel names one.

A `provider/model` must name exactly one imported judge (on the criterion, when one is given);
otherwise the error lists what it could mean.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from judging.models import Criterion, Judge, JudgeConfig, JudgeVersion, Verdict
from reviews.models import Project

VERSIONED = re.compile(r"^(?P<name>[-a-zA-Z0-9_]{1,100})@(?P<number>[0-9]{1,9})$")


class JudgeRefError(ValueError):
    """A reference that is malformed, names no judge, or more than one; the message says which."""


@dataclass(frozen=True)
class JudgeRef:
    judge: Judge  # the row its verdicts are stored under
    version: JudgeVersion | None  # None: imported verdicts

    @property
    def ref(self) -> str:
        return self.version.ref if self.version else self.judge.name


def _versions_text(config: JudgeConfig) -> str:
    numbers = list(config.versions.order_by("number").values_list("number", flat=True))
    return ", ".join(f"{config.name}@{n}" for n in numbers) or "none yet"


def _versioned(project: Project, name: str, number: int) -> JudgeRef:
    config = JudgeConfig.objects.filter(project=project, name=name).first()
    if config is None:
        names = ", ".join(
            JudgeConfig.objects.filter(project=project).values_list("name", flat=True)
        )
        raise JudgeRefError(
            f"no judge {name!r} in project {project.slug!r} (judges: {names or 'none'})"
        )
    version = config.versions.select_related("judge", "config").filter(number=number).first()
    if version is None:
        raise JudgeRefError(
            f"judge {name!r} has no version {number} (versions: {_versions_text(config)})"
        )
    if version.judge is None or version.criterion_id is None:
        raise JudgeRefError(f"{version.ref} reads evidence: it judges no criterion")
    return JudgeRef(version.judge, version)


def _imported(project: Project, ref: str, criterion: Criterion | None) -> JudgeRef:
    provider, model = ref.split("/", 1)
    judges = Judge.objects.filter(project=project, provider=provider, model=model)
    versioned = JudgeVersion.objects.filter(judge__in=judges).select_related("config")
    imported = judges.exclude(pk__in=versioned.values("judge_id"))
    if criterion is not None:
        imported = imported.filter(
            pk__in=Verdict.objects.filter(criterion=criterion).values("judge_id")
        )
    found = list(imported.order_by("pk"))
    if len(found) == 1:
        return JudgeRef(found[0], None)
    if len(found) > 1:
        configurations = "; ".join(j.configuration for j in found)
        raise JudgeRefError(
            f"{ref!r} names {len(found)} imported judges ({configurations}): ambiguous"
        )
    runs = sorted({v.ref for v in versioned})
    if runs:
        raise JudgeRefError(
            f"{ref!r} is run from Evalsite: name its version as NAME@VERSION ({', '.join(runs)})"
        )
    where = f" with verdicts on {criterion.name!r}" if criterion is not None else ""
    raise JudgeRefError(f"no imported judge {ref!r}{where} in project {project.slug!r}")


def judge_ref_resolve(
    *, project: Project, ref: str, criterion: Criterion | None = None
) -> JudgeRef:
    """The judge version `ref` names (see the module doc), or JudgeRefError."""
    ref = (ref or "").strip()
    match = VERSIONED.match(ref)
    if match:
        return _versioned(project, match["name"], int(match["number"]))
    if "/" in ref.strip("/"):
        return _imported(project, ref, criterion)
    config = JudgeConfig.objects.filter(project=project, name=ref).first()
    if config is not None:
        raise JudgeRefError(
            f"name the version of judge {ref!r} as NAME@VERSION ({_versions_text(config)})"
        )
    raise JudgeRefError(
        f"{ref!r} is neither NAME@VERSION (a judge run from Evalsite) nor provider/model "
        "(imported verdicts)"
    )


def judge_ref_choices(project: Project) -> list[str]:
    """Every judge version that judges a criterion (`NAME@VERSION`), then every imported judge
    that `provider/model` names on its own: what a form may offer to compare."""
    versions = JudgeVersion.objects.filter(config__project=project, criterion__isnull=False)
    refs = [
        f"{name}@{number}"
        for name, number in versions.order_by("config__name", "number").values_list(
            "config__name", "number"
        )
    ]
    imported = (
        Judge.objects.filter(project=project)
        .exclude(pk__in=JudgeVersion.objects.values("judge_id"))
        .order_by("provider", "model")
        .values_list("provider", "model")
    )
    names = [f"{provider}/{model}" for provider, model in imported]
    return refs + [name for name in dict.fromkeys(names) if names.count(name) == 1]


def judge_version_by_ref(project, ref: str) -> JudgeVersion:
    """The judge version `NAME@VERSION` names (a judge run from Evalsite only)."""
    name, sep, number = ref.rpartition("@")
    if not (sep and name and number.isdigit()):
        raise JudgeRefError(f"judge {ref!r}: write it as NAME@VERSION (e.g. j@2)")
    version = (
        JudgeVersion.objects.filter(config__project=project, config__name=name, number=int(number))
        .select_related("config", "criterion", "judge")
        .first()
    )
    if version is None:
        raise JudgeRefError(f"no judge version {ref!r} in project {project.slug!r}")
    return version
