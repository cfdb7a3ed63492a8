"""What a judge's page shows: its versions side by side with their calibration kappa, and how
many of them looked at the held-out items (each look is one more comparison)."""

from collections import defaultdict
from dataclasses import dataclass

from judging.metrics import Stat, cohen_kappa, confusion_matrix, group_vote
from judging.models import JudgeConfig, JudgeVersion, Run, Split, SplitDraw, Verdict
from judging.selectors_labels import final_labels
from judging.services.calibration.splits import items_in_split


@dataclass(frozen=True)
class VersionRow:
    version: JudgeVersion
    kappa: Stat
    n: int
    held_out_runs: int


def calibration_kappas(versions: list[JudgeVersion]) -> dict[int, tuple[Stat, int]]:
    """Per version (by pk): Cohen's kappa on calibration items between the version's vote (its
    samples' most common label) and the final human label, and n = items with both. A
    development figure. The human labels are read once per criterion and every version's
    verdicts in one query, whatever the number of versions."""
    found = {}
    judged = [v for v in versions if v.criterion is not None and v.judge_id is not None]
    for version in versions:
        if version not in judged:
            found[version.pk] = (Stat.undefined("a ground-truth reader has no criterion"), 0)
    if not judged:
        return found
    items = items_in_split(project=judged[0].config.project, split=Split.CALIBRATION)
    humans = {}
    for version in judged:
        if version.criterion_id not in humans:
            humans[version.criterion_id] = final_labels(criterion=version.criterion, items=items)
    samples = defaultdict(lambda: defaultdict(list))
    rows = (
        Verdict.objects.current()
        .filter(
            judge_id__in={v.judge_id for v in judged},
            criterion_id__in=set(humans),
            item_id__in={pk for labels in humans.values() for pk in labels.labels},
        )
        .values_list("judge_id", "criterion_id", "item_id", "label")
    )
    for judge_id, criterion_id, item_id, label in rows:
        samples[judge_id, criterion_id][item_id].append(label)
    for version in judged:
        found[version.pk] = _kappa(
            version.criterion,
            samples[version.judge_id, version.criterion_id],
            humans[version.criterion_id].labels,
        )
    return found


def _kappa(criterion, samples: dict[int, list[str]], humans: dict[int, str]) -> tuple[Stat, int]:
    labels = criterion.labels
    pairs = [
        (group_vote([s if s in labels else None for s in given]), humans[pk])
        for pk, given in samples.items()
        if pk in humans
    ]
    pairs = [(j, h) for j, h in pairs if j is not None and h in labels]
    if not pairs:
        return Stat.undefined("no calibration item has both a verdict and a human label"), 0
    judge, human = zip(*pairs, strict=True)
    return cohen_kappa(confusion_matrix(judge, human, list(labels))), len(pairs)


def version_rows(config: JudgeConfig) -> list[VersionRow]:
    looks = defaultdict(int)
    for number in Run.objects.filter(
        version__config=config, split__in=[Split.HELD_OUT, "all"]
    ).values_list("version__number", flat=True):
        looks[number] += 1
    versions = list(
        config.versions.select_related("criterion", "config__project").order_by("-number")
    )
    kappas = calibration_kappas(versions)
    return [VersionRow(v, *kappas[v.pk], looks[v.number]) for v in versions]


@dataclass(frozen=True)
class HeldOutLooks:
    """For the dashboard: how many versions of a judge ran on held-out, and which one the
    gate is for (the latest that did)."""

    config: JudgeConfig
    versions: int
    gate_version: JudgeVersion | None


def held_out_looks(project) -> list[HeldOutLooks]:
    """Per judge configuration of `project`: two queries, whatever the number of judges."""
    numbers, latest = defaultdict(set), {}
    runs = Run.objects.filter(version__config__project=project, split__in=[Split.HELD_OUT, "all"])
    for run in runs.select_related("version").order_by("version__number"):
        numbers[run.version.config_id].add(run.version.number)
        latest[run.version.config_id] = run.version
    return [
        HeldOutLooks(config, len(numbers[config.pk]), latest.get(config.pk))
        for config in JudgeConfig.objects.filter(project=project).order_by("name")
    ]


def compare_defaults(config: JudgeConfig) -> dict | None:
    """What the judge page's *Compare* offers first: its two latest versions on the latest
    one's criterion, or with one version, the latest version of another judge of the same
    criterion (a text-only judge beside a visual one); on calibration items once a split is
    drawn (None: nothing to compare with)."""
    versions = list(
        config.versions.filter(criterion__isnull=False)
        .select_related("criterion")
        .order_by("-number")
    )
    drawn = SplitDraw.objects.filter(project_id=config.project_id).exists()
    if not versions:
        return None
    latest = versions[0]
    refs = [f"{config.name}@{v.number}" for v in versions]
    others = (
        JudgeVersion.objects.filter(
            config__project_id=config.project_id, criterion__name=latest.criterion.name
        )
        .exclude(config=config)
        .order_by("config__name", "-number")
        .values_list("config__name", "number")
    )
    latest_of = {}
    for name, number in others:
        latest_of.setdefault(name, number)
    refs += [f"{name}@{number}" for name, number in latest_of.items()]
    if len(refs) < 2:
        return None
    return {
        "criterion": latest.criterion.name,
        "a": refs[1],
        "b": refs[0],
        "split": "calibration" if drawn else "all",
        "refs": refs,
    }
