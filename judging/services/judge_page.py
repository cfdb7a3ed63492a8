"""What a judge's page shows: its versions side by side with their calibration kappa, and how
many of them looked at the held-out items (each look is one more comparison)."""

from collections import defaultdict
from dataclasses import dataclass

from judging.metrics import Stat, cohen_kappa, confusion_matrix, group_vote
from judging.models import JudgeConfig, JudgeVersion, Run, Split, Verdict
from judging.services.labels import final_labels
from judging.services.splits import items_in_split


@dataclass(frozen=True)
class VersionRow:
    version: JudgeVersion
    kappa: Stat
    n: int
    held_out_runs: int


def calibration_kappa(version: JudgeVersion) -> tuple[Stat, int]:
    """Cohen's kappa on calibration items between the version's vote (its samples' most common
    label) and the final human label; n = items with both. A development figure."""
    criterion = version.criterion
    if criterion is None or version.judge_id is None:
        return Stat.undefined("a ground-truth reader has no criterion"), 0
    items = items_in_split(project=version.config.project, split=Split.CALIBRATION)
    humans = final_labels(criterion=criterion, items=items).labels
    samples = defaultdict(list)
    rows = (
        Verdict.objects.current()
        .filter(judge_id=version.judge_id, criterion=criterion, item_id__in=list(humans))
        .values_list("item_id", "label")
    )
    for item_id, label in rows:
        samples[item_id].append(label if label in criterion.labels else None)
    pairs = [(group_vote(s), humans[pk]) for pk, s in samples.items()]
    pairs = [(j, h) for j, h in pairs if j is not None and h in criterion.labels]
    if not pairs:
        return Stat.undefined("no calibration item has both a verdict and a human label"), 0
    judge, human = zip(*pairs, strict=True)
    return cohen_kappa(confusion_matrix(judge, human, list(criterion.labels))), len(pairs)


def version_rows(config: JudgeConfig) -> list[VersionRow]:
    looks = defaultdict(int)
    for number in Run.objects.filter(
        version__config=config, split__in=[Split.HELD_OUT, "all"]
    ).values_list("version__number", flat=True):
        looks[number] += 1
    rows = []
    for version in config.versions.select_related("criterion", "config__project").order_by(
        "-number"
    ):
        kappa, n = calibration_kappa(version)
        rows.append(VersionRow(version, kappa, n, looks[version.number]))
    return rows


@dataclass(frozen=True)
class HeldOutLooks:
    """For the dashboard: how many versions of a judge ran on held-out, and which one the
    gate is for (the latest that did)."""

    config: JudgeConfig
    versions: int
    gate_version: JudgeVersion | None


def held_out_looks(project) -> list[HeldOutLooks]:
    result = []
    for config in JudgeConfig.objects.filter(project=project).order_by("name"):
        runs = Run.objects.filter(version__config=config, split__in=[Split.HELD_OUT, "all"])
        numbers = set(runs.values_list("version__number", flat=True))
        latest = runs.select_related("version").order_by("-version__number").first()
        result.append(HeldOutLooks(config, len(numbers), latest.version if latest else None))
    return result
