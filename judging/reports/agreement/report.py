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

import json
from collections import defaultdict
from itertools import groupby
from operator import itemgetter

from django.db.models import Count, QuerySet
from django.utils import timezone

from judging.models import (
    Criterion,
    ItemSplit,
    Judge,
    JudgeVersion,
    PanelMember,
    Split,
    SplitDraw,
    Verdict,
)
from judging.reports.agreement.build import N_RESAMPLES, agreement_report_build
from judging.reports.agreement.inputs import CriterionInput, JudgeSamples, PanelInput
from judging.selectors_labels import (
    final_labels,
    labelled_items,
    rater_labels,
    stale_label_items,
)
from judging.services.calibration.splits import (
    SplitError,
    current_draw,
    held_out_access_log,
    items_in_split,
    split_extend,
)
from judging.services.imports.criteria import criterion_fields
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


def _verdict_rows(criterion: Criterion, items: QuerySet, names: dict[int, str]) -> dict:
    """judge pk -> ([(item, sample, label, display order, confidence)], [(item, sample)]) in the
    split: the current revision's verdicts by item, in sample order; the earlier revisions'."""
    rows = (
        Verdict.objects.current()
        .filter(criterion=criterion, item__in=items)
        .order_by("item_id", "judge_id", "sample", "display_order")
        .values_list("item_id", "judge_id", "sample", "label", "display_order", "confidence")
    )
    found: dict[int, tuple[list, list]] = defaultdict(lambda: ([], []))
    for item_id, judge_id, *row in rows:
        found[judge_id][0].append((names[item_id], *row))
    earlier = Verdict.objects.stale().filter(criterion=criterion, item__in=items)
    for judge_id, item_id, sample in earlier.values_list("judge_id", "item_id", "sample"):
        found[judge_id][1].append((names[item_id], sample))
    return found


def _samples(judge: Judge, rows: tuple, version: JudgeVersion | None = None) -> JudgeSamples:
    """A version counts the samples it asks for: versions that differ only in their number of
    samples share the same calls (and verdicts) up to the smaller number. Verdicts on an earlier
    revision of an item are not counted, only named (`stale_items`). An item's labels, orders
    and confidences are tuples (at 1M verdicts, lists cost the garbage collector a quarter of
    the dashboard's recompute)."""
    current, earlier = rows
    limit = version.samples if version is not None else None
    samples: dict[str, tuple] = {}
    orders: dict[str, tuple] = {}
    confidences: dict[str, tuple] = {}
    for item, group in groupby(current, key=itemgetter(0)):
        kept = [row for row in group if limit is None or row[1] < limit]
        columns = tuple(zip(*kept, strict=True))
        if columns:
            _, _, samples[item], orders[item], confidences[item] = columns
    stale = {item for item, sample in earlier if limit is None or sample < limit}
    return JudgeSamples(
        name=judge.name,
        model_group=judge.model_group,
        configuration=judge.configuration,
        samples=samples,
        orders=orders,
        confidences=confidences,
        stale_items=frozenset(stale),
        judge_name=version.config.name if version else None,
        judge_version=version.number if version else None,
    )


def versions_by_judge(criterion: Criterion, judge_ids) -> dict[int, list[JudgeVersion]]:
    """Judge pk -> the versions (of this criterion) whose verdicts are written under it, by
    name and number; a judge with none holds imported verdicts."""
    versions = JudgeVersion.objects.filter(criterion=criterion, judge_id__in=judge_ids)
    found: dict[int, list[JudgeVersion]] = defaultdict(list)
    for version in versions.select_related("config").order_by("config__name", "number"):
        found[version.judge_id].append(version)
    return found


def _judge_samples(
    criterion: Criterion, items: QuerySet, names: dict[int, str]
) -> tuple[list[JudgeSamples], list[PanelInput]]:
    """An entry per judge version with verdicts on the criterion (even none in this split):
    verdicts of a Judge row that versions of the criterion write under count once per such
    version; others are imported. Then the configured panels that vote on this criterion."""
    judge_ids = Verdict.objects.filter(criterion=criterion).values("judge_id").distinct()
    judges = {j.pk: j for j in Judge.objects.filter(pk__in=judge_ids)}
    by_judge = versions_by_judge(criterion, list(judges))
    rows = _verdict_rows(criterion, items, names)
    entries: list[JudgeSamples] = []
    for pk, judge in judges.items():
        entries += [_samples(judge, rows[pk], v) for v in by_judge[pk]] or [
            _samples(judge, rows[pk])
        ]
    return entries, _panel_inputs(criterion, rows, entries, set(judges))


def _votes_on(criterion: Criterion, pinned: list[PanelMember], judged: set[int]) -> bool:
    """Its pinned versions judge this criterion; imported members only: each gave verdicts on
    it (a panel of imported judges sits on the criteria they all judged)."""
    criteria = {m.version.criterion_id for m in pinned if m.version_id}
    if criteria:
        return criteria == {criterion.pk}
    return all(m.judge_id in judged for m in pinned)


def _panel_inputs(
    criterion: Criterion, rows: dict, entries: list[JudgeSamples], judged: set[int]
) -> list[PanelInput]:
    """Panels whose pinned versions judge this criterion (or, with imported members only,
    whose members all gave it verdicts); a member's samples are its entry's."""
    known = {(e.configuration, e.judge_name, e.judge_version): e for e in entries}
    panels = []
    members = PanelMember.objects.filter(panel__project_id=criterion.project_id).select_related(
        "panel", "judge", "version__config"
    )
    by_panel: dict = defaultdict(list)
    for member in members.order_by("panel__name", "pk"):
        by_panel[member.panel].append(member)
    for panel, pinned in by_panel.items():
        if not _votes_on(criterion, pinned, judged):
            continue
        inputs = []
        for member in pinned:
            version = member.version
            key = (
                member.judge.configuration,
                version.config.name if version else None,
                version.number if version else None,
            )
            inputs.append(known.get(key) or _samples(member.judge, rows[member.judge_id], version))
        panels.append(PanelInput(name=panel.name, rule=panel.rule, members=inputs))
    return panels


def output_chars(output) -> int:
    """An output's length in characters: a string's own; anything else as its JSON text."""
    return len(output if isinstance(output, str) else json.dumps(output, ensure_ascii=False))


def _output_chars(criterion: Criterion, items: QuerySet, labelled, names) -> dict[str, int]:
    """item -> output length, on the labelled items of a pass/fail criterion (length bias).
    The items are chosen by a subquery, not a list of their ids (100k ids cost the client more
    than the rows did)."""
    if criterion.pairwise or not criterion.positive_label or not labelled:
        return {}
    rows = labelled_items(criterion=criterion, items=items).values_list("pk", "output")
    return {
        names[pk]: output_chars(output)
        for pk, output in rows
        if output is not None and pk in labelled
    }


def criterion_input(
    criterion: Criterion, items: QuerySet, names: dict[int, str], *, lengths: bool = False
) -> CriterionInput:
    """Plain data for one criterion over `items`; `names` maps item pk -> external id. With
    `lengths`, the labelled items' output lengths too (one query more, for the length bias
    check: the agreement report and the dashboard, not a comparison of two judges)."""
    final = final_labels(criterion=criterion, items=items)
    raters = rater_labels(criterion=criterion, items=items)
    judges, panels = _judge_samples(criterion, items, names)
    return CriterionInput(
        **criterion_fields(criterion),
        final_labels={names[pk]: label for pk, label in final.labels.items()},
        human_ties=[names[pk] for pk in final.ties],
        rater_labels={
            rater: {names[pk]: label for pk, label in labels.items()}
            for rater, labels in raters.items()
        },
        judges=judges,
        panels=panels,
        output_chars=_output_chars(criterion, items, final.labels, names) if lengths else {},
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
    inputs = [criterion_input(c, items, names, lengths=True) for c in criteria]
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
