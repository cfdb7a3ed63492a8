"""One judge version's verdicts as TextFlow upstream records (FORMATS §1, "Evalsite's runs").

Per item the version judged: `key` its external id, `question_id` the criterion's name,
`question`/`response`/`answer` its input, output and reference (as text), `decision1..N` each
sample's label as the run parsed it on the item's current revision (`unparsed` when it
did not parse), `final_decision` the
strict majority of those (left out without one) and the `evalsite` block naming the criterion
and judge, so that importing the file elsewhere gives the same labels and pass rate.
"""

from __future__ import annotations

import json

from judging.formats.textflow import TextflowRecord, majority
from judging.models import JudgeVersion, Verdict
from judging.services.judges.refs import JudgeRefError, judge_version_by_ref
from reviews.models import Item


class NoTextflowItems(ValueError):
    """Nothing to write (no TextFlow items, no judge verdicts), or no one judge chosen: an empty
    or mixed file would look like a result."""


def _versions_with_verdicts(project) -> list[JudgeVersion]:
    versions = JudgeVersion.objects.filter(
        config__project=project, criterion__isnull=False, judge__isnull=False
    ).select_related("config", "criterion", "judge")
    return [v for v in versions if _verdicts(v).exists()]


def judged_version(project, ref: str | None) -> JudgeVersion:
    """The version `ref` ("NAME@V") names, or the project's only one with verdicts."""
    if ref is not None:
        try:
            version = judge_version_by_ref(project, ref)
        except JudgeRefError as error:
            raise NoTextflowItems(str(error)) from None
        if version.criterion_id is None or not _verdicts(version).exists():
            raise NoTextflowItems(f"judge {ref!r} has no verdicts in project {project.slug!r}")
        return version
    versions = _versions_with_verdicts(project)
    if not versions:
        raise NoTextflowItems(
            f"project {project.slug!r} has no items imported from TextFlow evaluated results "
            "(FORMATS §1) and no verdicts from a judge run: nothing to export"
        )
    if len(versions) > 1:
        names = ", ".join(f"{v.config.name}@{v.number}" for v in versions)
        raise NoTextflowItems(f"several judges have verdicts ({names}): choose one with --judge")
    return versions[0]


def _verdicts(version: JudgeVersion):
    return Verdict.objects.current().filter(
        criterion=version.criterion_id, judge=version.judge_id, extra__version=version.number
    )


def _text(value) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _block(version: JudgeVersion) -> dict:
    criterion = version.criterion
    return {
        "criterion": criterion.name,
        "criterion_version": criterion.version,
        "criterion_text": criterion.text,
        "labels": [str(label) for label in criterion.labels],
        "positive_label": criterion.positive_label,
        "judge": f"{version.provider}/{version.model}",
        "temperature": version.temperature,
        "judge_name": version.config.name,
        "judge_version": version.number,
    }


def judged_records(version: JudgeVersion) -> list[tuple[Item, TextflowRecord]]:
    if version.criterion.pairwise:
        raise NoTextflowItems(
            f"criterion {version.criterion.name!r} is pairwise: TextFlow records judge one "
            "response, not a pair"
        )
    labels: dict[int, list[str]] = {}
    for item_id, label in (
        _verdicts(version).order_by("item_id", "sample").values_list("item_id", "label")
    ):
        labels.setdefault(item_id, []).append(label)
    block = _block(version)
    pairs = []
    for item in Item.objects.filter(pk__in=labels).order_by("pk"):
        decisions = labels[item.pk]
        pairs.append(
            (
                item,
                TextflowRecord(
                    file_key=str(len(pairs)),
                    key=item.external_id,
                    question_id=version.criterion.name,
                    question=_text(item.input),
                    response=_text(item.output),
                    answer=_text(item.expected),
                    raw_decisions=decisions,
                    verdicts=decisions,
                    final_decision=majority(decisions)[0],
                    evalsite=block,
                ),
            )
        )
    return pairs
