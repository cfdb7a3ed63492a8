"""What the calibration item page reads: per criterion the final human label, each rater's,
every judge sample by judge version (with the disagreement rule the list uses), and what was
given on an earlier revision of the item's content."""

from __future__ import annotations

from judging.models import Criterion, HumanLabel, ItemSplit, Verdict
from judging.reports.agreement.build import disagreeing_label
from judging.reports.agreement.report import versions_by_judge
from judging.selectors_labels import final_labels, rater_labels
from reviews.models import Item


def item_split(item: Item) -> str | None:
    return ItemSplit.objects.filter(item=item).values_list("split", flat=True).first()


def item_criterion_panels(item: Item, tags: dict) -> list[dict]:
    """A panel per criterion (each version) the item has verdicts on, by name and version."""
    criteria = Criterion.objects.filter(project_id=item.project_id, verdicts__item=item).distinct()
    return [_criterion_panel(c, item, tags) for c in criteria.order_by("name", "version")]


def _criterion_panel(criterion: Criterion, item: Item, tags: dict) -> dict:
    items = Item.objects.filter(pk=item.pk)
    final = final_labels(criterion=criterion, items=items)
    raters = {
        rater: labels[item.pk]
        for rater, labels in rater_labels(criterion=criterion, items=items).items()
        if item.pk in labels
    }
    verdicts = list(
        Verdict.objects.filter(item=item, criterion=criterion)
        .select_related("judge")
        .order_by("judge__provider", "judge__model", "-revision", "sample")
    )
    human = final.labels.get(item.pk)
    owners = versions_by_judge(criterion, {v.judge_id for v in verdicts})

    def names(verdict) -> list[str]:
        """The judge versions that count this sample (the report's rows), or the imported judge."""
        versions = owners[verdict.judge_id]
        if not versions:
            return [verdict.judge.name]
        return [v.ref for v in versions if verdict.sample < v.samples]

    judges = {}  # one block per judge version, as the report's rows: never two in one
    for verdict in verdicts:
        if verdict.revision != item.revision:
            continue  # listed apart below
        for name in names(verdict):
            judges.setdefault((name, verdict.judge.configuration), []).append(verdict)
    stale_labels = HumanLabel.objects.filter(
        item=item, criterion=criterion, revision__lt=item.revision
    )
    return {
        "criterion": criterion,
        "human": human,
        "human_source": final.sources.get(item.pk, ""),
        "tied": item.pk in final.ties,
        "raters": sorted(raters.items()),
        "judges": [
            {
                "name": name,
                "verdicts": samples,
                "disagrees": disagreeing_label(human, [v.label for v in samples], criterion.labels)
                is not None,
                "tag": tags.get((item.pk, criterion.name, name)),
            }
            for (name, _), samples in judges.items()
        ],
        "stale_verdicts": [
            (", ".join(names(v)) or v.judge.name, v) for v in verdicts if v.revision < item.revision
        ],
        "stale_labels": list(stale_labels.order_by("-revision", "rater")),
    }
