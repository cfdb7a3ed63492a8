"""A criterion's true score (docs/estimates.md): gathers one judge's labels, the final human
labels and how each item came before people, then `build.py` computes the figures.

Items: the project's (or one split's, or one slice's) items the judge decided on the criterion,
on their current revision. The judge's label on an item is its samples' vote (the agreement
report's rule: a tie or no parsed sample gives none, counted in `judge_undecided`); a judge run
from Evalsite counts the samples its version asks for. The human label is the final one
(`selectors_labels.final_labels`). The items are `item_scope.scoped_items`'. Reading the held-out split, or all items, is a recorded look at
held-out figures, as for the agreement report.
"""

from __future__ import annotations

from collections import defaultdict

from django.db.models import QuerySet

from judging.models import Criterion, LabelRequest, Verdict
from judging.reports.agreement.build import judge_votes
from judging.reports.agreement.inputs import JudgeSamples
from judging.reports.estimates.build import (
    EstimateData,
    EstimateRefused,
    estimate_entry,
    measure_of,
)
from judging.reports.item_scope import scoped_items
from judging.selectors_labels import final_labels
from judging.services.calibration.splits import SplitError, held_out_access_log
from judging.services.judges.refs import JudgeRef, JudgeRefError, judge_ref_resolve
from reviews.models import Project

DEFAULT_ALPHA = 0.05


def criterion_named(project: Project, name: str) -> Criterion:
    """The newest version of the criterion called `name`."""
    found = Criterion.objects.filter(project=project, name=name).order_by("-created_at", "-pk")
    criterion = found.first()
    if criterion is None:
        names = ", ".join(sorted(set(project.criteria.values_list("name", flat=True))))
        raise EstimateRefused(
            f"no criterion {name!r} in project {project.slug!r} (criteria: {names or 'none'})"
        )
    return criterion


def _judge_labels(criterion: Criterion, ref: JudgeRef, items: QuerySet):
    """item pk -> the judge's label (its samples' vote), and how many items it left undecided."""
    verdicts = Verdict.objects.current().filter(
        criterion=criterion, judge=ref.judge, item__in=items
    )
    if ref.version is not None:  # a version counts the samples it asks for
        verdicts = verdicts.filter(sample__lt=ref.version.samples)
    samples: dict[int, list[str]] = defaultdict(list)
    for item_id, label in verdicts.order_by("item_id", "sample").values_list("item_id", "label"):
        samples[item_id].append(label)
    entry = JudgeSamples(
        name=ref.ref, model_group="", configuration=ref.judge.configuration, samples=samples
    )
    votes = judge_votes(entry, criterion.labels)
    return votes.labels, len(votes.ties) + len(votes.unparsed_only)


def _selections(criterion: Criterion, items: QuerySet) -> dict[int, set[str]]:
    found: dict[int, set[str]] = defaultdict(set)
    rows = LabelRequest.objects.filter(criterion=criterion, item__in=items)
    for item_id, selection in rows.values_list("item_id", "selection"):
        found[item_id].add(selection)
    return found


def estimate_data(
    *, project: Project, criterion: str, judge: str, split: str, slice_name: str | None
) -> EstimateData:
    """Plain labels for `build.py` (raises EstimateRefused, JudgeRefError, SplitError)."""
    row = criterion_named(project, criterion)
    ref = judge_ref_resolve(project=project, ref=judge, criterion=row)
    if ref.version is not None and ref.version.criterion_id != row.pk:
        row = ref.version.criterion  # a version judges one version of the criterion
    measure = measure_of(
        name=row.name,
        labels=row.labels,
        positive_label=row.positive_label,
        ordinal=row.ordinal,
        pairwise=row.pairwise,
    )
    items = scoped_items(
        actor=None,
        project=project,
        split=split,
        slice_name=slice_name,
        what="estimate",
        record_look=False,
    )  # the look is recorded once the estimate is made: a refusal shows nothing
    judged, undecided = _judge_labels(row, ref, items)
    if not judged:
        raise EstimateRefused(f"{ref.ref} gave no label on {row.name!r} to any item in {split}")
    humans = final_labels(criterion=row, items=items).labels
    return EstimateData(
        criterion=row.name,
        criterion_version=row.version,
        judge=ref.ref,
        split=split,
        slice=slice_name or None,
        measure=measure,
        judge_labels=judged,
        human_labels={item: label for item, label in humans.items() if item in judged},
        selections=_selections(row, items),
        judge_undecided=undecided,
        humans_without_judge=sum(1 for item in humans if item not in judged),
    )


def estimate_report(
    *,
    actor,
    project: Project,
    criterion: str,
    judge: str,
    split: str = "all",
    slice_name: str | None = None,
    assume_random: bool = False,
    alpha: float = DEFAULT_ALPHA,
    half_width: float | None = None,
    record_look: bool = True,
) -> dict:
    """`{"estimates": [entry]}` (docs/estimates.md); refuses with EstimateRefused,
    JudgeRefError or SplitError and a reason. `record_look` False: the caller has already
    logged the look at held-out figures (a page, after *Show held-out figures*)."""
    if not 0 < alpha < 0.5:
        raise EstimateRefused(f"alpha must be between 0 and 0.5, got {alpha}")
    if half_width is not None and not 0 < half_width < 1:
        raise EstimateRefused(f"the half-width must be between 0 and 1, got {half_width}")
    data = estimate_data(
        project=project, criterion=criterion, judge=judge, split=split, slice_name=slice_name
    )
    entry = estimate_entry(data, alpha=alpha, assume_random=assume_random, half_width=half_width)
    if record_look and split in ("held_out", "all"):
        held_out_access_log(
            actor=actor, project=project, what=f"estimate, split {split}, criterion {criterion}"
        )
    return {"project": project.slug, "estimates": [entry]}


ESTIMATE_ERRORS = (EstimateRefused, JudgeRefError, SplitError)
