"""A judge version named on the command line as `NAME@VERSION` (`j@2`)."""

from __future__ import annotations

from judging.models import JudgeVersion


class JudgeRefError(ValueError):
    """A reference that is malformed or names no judge version of the project."""


def judge_version_by_ref(project, ref: str) -> JudgeVersion:
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
