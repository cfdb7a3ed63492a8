"""One item as the calibration work sees it: its evidence (input, output, reference, files),
every human label, every judge sample, and the failure tags of its disagreements. Verdicts and
labels given on an earlier revision of its content are listed apart ("given on an earlier
output"), with the diff of that output to the current one."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging.models import Criterion, HumanLabel, ItemSplit, Split, Verdict
from judging.reports.agreement.build import disagreeing_label
from judging.reports.agreement.report import versions_by_judge
from judging.selectors_labels import final_labels, rater_labels
from judging.services.calibration.failures import buckets_for, current_tags
from judging.views.held_out import held_out_shown
from reviews.access import OVERSEERS, item_for_overseer
from reviews.models import Item
from reviews.selectors import item_documents
from reviews.services.revisions import earlier_outputs


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


@require_safe
def dashboard_item(request, slug, item_pk):
    access, item = item_for_overseer(request.user, slug, item_pk, roles=OVERSEERS)
    split = ItemSplit.objects.filter(item=item).values_list("split", flat=True).first()
    hidden = split == Split.HELD_OUT and not held_out_shown(request, access.project)
    tags = current_tags(access.project)
    criteria = Criterion.objects.filter(project=access.project, verdicts__item=item).distinct()
    return render(
        request,
        "judging/item.html",
        {
            "access": access,
            "project": access.project,
            "item": item,
            "split": split,
            "documents": item_documents(item),
            "slices": item.slices.order_by("name"),
            "panels": []
            if hidden
            else [_criterion_panel(c, item, tags) for c in criteria.order_by("name", "version")],
            "earlier_outputs": [] if hidden else earlier_outputs(item),
            "buckets": buckets_for(access.project),
            "can_tag": access.is_adjudicator,
            "held_out_hidden": hidden,
            "held_out_what": f"item {item.external_id}",
        },
    )
