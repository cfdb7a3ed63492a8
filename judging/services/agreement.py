"""The agreement report service: gathers labels from the database, then builds the report.

The numbers come from `agreement_build.agreement_report_build` (pure); this module only decides
which items count (the split), collects each criterion's verdicts, final human labels and rater
labels, and logs reads of held-out figures.

Split: `held_out` by default. With no split drawn yet, the default becomes `all` with a note
(and asking for `held_out` or `calibration` explicitly is an error). Before reading, items added
since the draw are drawn into it (`splits.split_extend`). Reading `held_out` or `all` writes a
`HeldOutAccess` row.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import Count, QuerySet
from django.utils import timezone

from judging.models import Criterion, ItemSplit, Judge, Split, SplitDraw, Verdict
from judging.services.agreement_build import N_RESAMPLES, agreement_report_build
from judging.services.agreement_inputs import CriterionInput, JudgeSamples
from judging.services.criteria import criterion_fields
from judging.services.labels import final_labels, rater_labels, stale_label_items
from judging.services.splits import (
    SplitError,
    current_draw,
    held_out_access_log,
    items_in_split,
    split_extend,
)
from reviews.models import Project

NO_DRAW_NOTE = (
    "no split has been drawn yet: these figures cover all items and are development figures; "
    "draw the split (manage.py split_draw) before measuring the figures that count"
)


class AgreementReportError(Exception):
    """The report cannot be built as asked (a clear, user-facing reason)."""


def _choose_split(project: Project, split: str | None, draw: SplitDraw | None) -> tuple[str, list]:
    if split is None:
        return ("held_out", []) if draw else ("all", [NO_DRAW_NOTE])
    if split != "all" and draw is None:
        raise SplitError(
            f"no split has been drawn for project {project.slug!r}: draw it first "
            "(manage.py split_draw) or ask for --split all"
        )
    return split, []


def _judge_samples(
    criterion: Criterion, items: QuerySet, names: dict[int, str]
) -> list[JudgeSamples]:
    """Every judge with verdicts on the criterion gets an entry, even with none in this split."""
    judge_ids = Verdict.objects.filter(criterion=criterion).values("judge_id").distinct()
    judges = {j.pk: j for j in Judge.objects.filter(pk__in=judge_ids)}
    samples: dict[int, dict] = {pk: defaultdict(list) for pk in judges}
    orders: dict[int, dict] = {pk: defaultdict(list) for pk in judges}
    rows = (
        Verdict.objects.current()
        .filter(criterion=criterion, item__in=items)
        .order_by("item_id", "judge_id", "sample", "display_order")
        .values_list("item_id", "judge_id", "label", "display_order")
    )
    for item_id, judge_id, label, order in rows:
        samples[judge_id][names[item_id]].append(label)
        orders[judge_id][names[item_id]].append(order)
    stale: dict[int, set] = defaultdict(set)
    earlier = Verdict.objects.stale().filter(criterion=criterion, item__in=items)
    for judge_id, item_id in earlier.values_list("judge_id", "item_id").distinct():
        stale[judge_id].add(names[item_id])
    return [
        JudgeSamples(
            name=judge.name,
            model_group=judge.model_group,
            configuration=judge.configuration,
            samples=dict(samples[pk]),
            orders=dict(orders[pk]),
            stale_items=frozenset(stale[pk]),
        )
        for pk, judge in judges.items()
    ]


def criterion_input(criterion: Criterion, items: QuerySet, names: dict[int, str]) -> CriterionInput:
    """Plain data for one criterion over `items`; `names` maps item pk -> external id."""
    final = final_labels(criterion=criterion, items=items)
    raters = rater_labels(criterion=criterion, items=items)
    return CriterionInput(
        **criterion_fields(criterion),
        final_labels={names[pk]: label for pk, label in final.labels.items()},
        human_ties=[names[pk] for pk in final.ties],
        rater_labels={
            rater: {names[pk]: label for pk, label in labels.items()}
            for rater, labels in raters.items()
        },
        judges=_judge_samples(criterion, items, names),
        stale_label_items=frozenset(
            names[pk] for pk in stale_label_items(criterion=criterion, items=items)
        ),
    )


def _draw_summary(draw: SplitDraw | None) -> dict | None:
    if draw is None:
        return None
    counts = dict(
        ItemSplit.objects.filter(draw=draw)
        .values("split")
        .annotate(n=Count("pk"))
        .values_list("split", "n")
    )
    return {
        "seed": draw.seed,
        "held_out_fraction": draw.held_out_fraction,
        "drawn_at": draw.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "held_out_items": counts.get(Split.HELD_OUT, 0),
        "calibration_items": counts.get(Split.CALIBRATION, 0),
    }


def agreement_report(
    *,
    actor,
    project: Project,
    split: str | None = None,
    criterion: str | None = None,
    seed: int = 0,
    n_resamples: int = N_RESAMPLES,
    collapse_at: str | None = None,
) -> dict:
    """Judge–human and human–human agreement per criterion, as documented in
    docs/agreement-report.md. `split` None: held-out, or all items if no split is drawn.
    `collapse_at` (needs `criterion`): the criterion collapsed at that ordinal cut point."""
    if collapse_at is not None and criterion is None:
        raise AgreementReportError(
            "--collapse-at needs --criterion: a cut point is one criterion's"
        )
    draw = current_draw(project)
    split, notes = _choose_split(project, split, draw)
    late = split_extend(project=project)
    if late:
        notes.append(f"{late} items added since the draw were drawn into it (late-item rule)")
    criteria = Criterion.objects.filter(project=project).order_by("name", "version")
    if criterion is not None:
        criteria = criteria.filter(name=criterion)
        if not criteria.exists():
            raise AgreementReportError(f"no criterion {criterion!r} in project {project.slug!r}")
    items = items_in_split(project=project, split=split)
    names = dict(items.values_list("pk", "external_id"))
    inputs = [criterion_input(c, items, names) for c in criteria]
    if split in ("held_out", "all"):
        what = f"agreement report, split {split}" + (
            f", criterion {criterion}" if criterion else ""
        )
        held_out_access_log(actor=actor, project=project, what=what)
    report = agreement_report_build(
        project=project.slug,
        split=split,
        computed_at=timezone.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
        criteria=inputs,
        notes=notes,
        split_draw=_draw_summary(draw),
        seed=seed,
        n_resamples=n_resamples,
        collapse_at=collapse_at,
    )
    return report
