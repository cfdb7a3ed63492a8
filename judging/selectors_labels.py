"""Human labels per item × criterion, from the review workflow and from imports.

Final label (what a judge is compared with): the review workflow's current resolution of the
item's criterion question (or pairwise question) when there is one; otherwise the majority of the
imported labels. A tie among imported labels gives no final label: such items are listed in
`ties`, never settled by an arbitrary rule.

Per-rater labels (for human–human agreement): each rater's latest answer on a submitted
assignment, keyed by username, plus imported labels keyed by the rater name in the file. If a
username and an imported name coincide on the same item, the workflow answer is used.

Only labels given on the item's current revision count (reviews.services.revisions): a label
given on earlier content is stale, counted apart by `stale_label_items`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import F, Q, QuerySet

from judging.models import Criterion, HumanLabel
from reviews.models import (
    Answer,
    AssignmentStatus,
    Decision,
    Question,
    QuestionKind,
    Resolution,
)

PAIRWISE_DECISIONS = {Decision.A: "A", Decision.B: "B", Decision.TIE: "tie"}


@dataclass(frozen=True)
class FinalLabels:
    labels: dict[int, str] = field(default_factory=dict)  # item pk -> final label
    sources: dict[int, str] = field(default_factory=dict)  # item pk -> "resolution" | "imported"
    ties: list[int] = field(default_factory=list)  # item pks with tied imported labels


def criterion_questions(*, criterion: Criterion, items: QuerySet | None = None) -> QuerySet:
    """The review questions that ask people for this criterion (same name, same version)."""
    kind = QuestionKind.PAIRWISE if criterion.pairwise else QuestionKind.CRITERION
    questions = Question.objects.filter(
        item__project_id=criterion.project_id, kind=kind, key=criterion.name
    ).filter(Q(criterion_version=criterion.version) | Q(criterion_version=""))
    return questions if items is None else questions.filter(item__in=items)


def _label_of(decision: str, value, criterion: Criterion) -> str | None:
    """The label an answer or resolution gives (None: unclear, or not in the label set)."""
    label = value if decision == Decision.LABEL else PAIRWISE_DECISIONS.get(decision)
    return label if isinstance(label, str) and label in criterion.labels else None


def _resolved_labels(criterion: Criterion, items: QuerySet | None) -> dict[int, str]:
    rows = (
        Resolution.objects.filter(
            question__in=criterion_questions(criterion=criterion, items=items),
            revision=F("question__item__revision"),
        )
        .order_by("created_at", "pk")
        .values_list("question__item_id", "decision", "value")
    )
    current: dict[int, tuple] = {}
    for item_id, decision, value in rows:
        current[item_id] = (decision, value)  # the newest resolution wins
    resolved = {item: _label_of(d, v, criterion) for item, (d, v) in current.items()}
    return {item: label for item, label in resolved.items() if label is not None}


def _imported(criterion: Criterion, items: QuerySet | None) -> QuerySet:
    labels = HumanLabel.objects.current().filter(criterion=criterion)
    return labels if items is None else labels.filter(item__in=items)


def stale_label_items(*, criterion: Criterion, items: QuerySet) -> set[int]:
    """Items with a human label on the criterion (imported, or a resolution) given on an
    earlier revision of their content: not counted, counted apart."""
    imported = HumanLabel.objects.stale().filter(criterion=criterion, item__in=items)
    resolved = Resolution.objects.filter(
        question__in=criterion_questions(criterion=criterion, items=items),
        revision__lt=F("question__item__revision"),
    )
    return set(imported.values_list("item_id", flat=True)) | set(
        resolved.values_list("question__item_id", flat=True)
    )


def labelled_items(*, criterion: Criterion, items: QuerySet) -> QuerySet:
    """`items` that have a current imported label or a resolution on the criterion: every item
    `final_labels` can give a label to, and a few more (ties, unclear resolutions), as a query."""
    imported = _imported(criterion, items).values("item_id")
    resolved = Resolution.objects.filter(
        question__in=criterion_questions(criterion=criterion, items=items)
    ).values("question__item_id")
    return items.filter(Q(pk__in=imported) | Q(pk__in=resolved))


def final_labels(*, criterion: Criterion, items: QuerySet | None = None) -> FinalLabels:
    """Final human label per item (`items`: a queryset to restrict to, e.g. one split)."""
    result = FinalLabels()
    for item_id, label in _resolved_labels(criterion, items).items():
        result.labels[item_id] = label
        result.sources[item_id] = "resolution"
    votes: dict[int, list[str]] = {}
    for item_id, label in _imported(criterion, items).values_list("item_id", "label"):
        if item_id not in result.labels:
            votes.setdefault(item_id, []).append(label)
    for item_id, labels in votes.items():
        # Most items have one label: a Counter each was most of this function's time at 1M.
        ranked = Counter(labels).most_common(2) if len(labels) > 1 else [(labels[0], 1)]
        if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
            result.ties.append(item_id)
            continue
        result.labels[item_id] = ranked[0][0]
        result.sources[item_id] = "imported"
    result.ties.sort()
    return result


def rater_labels(
    *, criterion: Criterion, items: QuerySet | None = None
) -> dict[str, dict[int, str]]:
    """rater -> {item pk: label}: workflow answers (latest, submitted) and imported labels."""
    by_rater: dict[str, dict[int, str]] = {}
    for item_id, rater, label in _imported(criterion, items).values_list(
        "item_id", "rater", "label"
    ):
        by_rater.setdefault(rater, {})[item_id] = label
    answers = (
        Answer.objects.filter(
            question__in=criterion_questions(criterion=criterion, items=items),
            assignment__status=AssignmentStatus.SUBMITTED,
            assignment__gold=False,  # gold checks are scored on the Raters page, not here
            revision=F("question__item__revision"),
        )
        .order_by("seq")
        .values_list("question__item_id", "rater__username", "decision", "value")
    )
    latest: dict[tuple[int, str], tuple] = {}
    for item_id, username, decision, value in answers:
        latest[(item_id, username)] = (decision, value)
    for (item_id, username), (decision, value) in latest.items():
        label = _label_of(decision, value, criterion)
        if label is not None:  # None: the rater's latest word is "unclear"
            by_rater.setdefault(username, {})[item_id] = label
    return by_rater
