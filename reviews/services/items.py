"""Writing items and their questions for other apps (judging's imports and `items_send_to_humans`).

Reviews owns its tables: judging describes what it wants (item fields, question snapshots) and
these services write the rows, re-open items and keep the timeline, under the same rules as
reviews' own importers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Exists, Max, OuterRef
from django.utils import timezone

from reviews.models import (
    Assignment,
    AssignmentStatus,
    Document,
    EventKind,
    Item,
    ItemSource,
    ItemStatus,
    Membership,
    Project,
    ProjectAction,
    Question,
    QuestionKind,
    QuestionReason,
    QuestionStatus,
    Role,
    Slice,
)
from reviews.services.events import event_record, events_record
from reviews.services.projects.audit import project_event_record
from reviews.services.revisions import content_changes, revision_keep

CHUNK = 1000
ITEM_FIELDS = frozenset({"title", "input", "output", "expected", "metadata"})


@dataclass
class ItemsUpserted:
    pks: dict[str, int]  # external id -> pk, for every row given
    counts: Counter = field(default_factory=Counter)  # created, updated (revised), unchanged


def _chunks(values: Sequence, size: int = CHUNK) -> Iterator[Sequence]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _changes(item: Item, fields: dict[str, Any]) -> dict[str, Any]:
    """Fields that differ, with their previous values; metadata merges (new keys win)."""
    if "metadata" in fields:
        fields["metadata"] = {**item.metadata, **fields["metadata"]}
    return {k: getattr(item, k) for k, v in fields.items() if getattr(item, k) != v}


def items_upsert(
    *,
    actor,
    project: Project,
    rows: Sequence[tuple[str, dict[str, Any]]],
    source: dict[str, Any],
    new_status: str = ItemStatus.OPEN,
) -> ItemsUpserted:
    """Create or update one item per (external id, fields) row.

    New items get `new_status` and an `imported` event; changed items are saved with an
    `updated` event that keeps the previous values (an update never loses data silently);
    `source` (e.g. {"file": name}) goes into every event. Only ITEM_FIELDS may be given.
    """
    unknown = {k for _, fields in rows for k in fields} - ITEM_FIELDS
    if unknown:
        raise ValueError(f"items_upsert: not item fields: {', '.join(sorted(unknown))}")
    result = ItemsUpserted(pks={})
    existing = _items_by_external_id(project, [external_id for external_id, _ in rows])
    new = []
    for external_id, fields in rows:
        item = existing.get(external_id)
        if item is None:
            new.append(Item(project=project, external_id=external_id, status=new_status, **fields))
            continue
        result.pks[external_id] = item.pk
        fields = dict(fields)
        changed = _changes(item, fields)
        if not changed:
            result.counts["unchanged"] += 1
            continue
        data = {**source, "previous": changed}
        revised = content_changes(item, fields, ())
        if revised:
            evidence = item.sources.values_list("artifact_id", flat=True)
            data["revision"] = revision_keep(item, evidence=evidence, file=source.get("file", ""))
        for key in changed:
            setattr(item, key, fields[key])
        item.save(update_fields=[*changed, "revision", "updated_at"])
        if revised:
            data["asked_again"] = questions_ask_again([item.pk]).get(item.pk, [])
            result.counts["revised"] += 1
        event_record(item=item, kind=EventKind.UPDATED, actor=actor, data=data)
        result.counts["updated"] += 1
    _items_create(new, project=project, actor=actor, source=source, result=result)
    return result


def _items_by_external_id(project: Project, external_ids: Sequence[str]) -> dict[str, Item]:
    """The project's items among `external_ids` (one query per CHUNK of them)."""
    existing: dict[str, Item] = {}
    for chunk in _chunks(external_ids):
        existing.update(
            (i.external_id, i) for i in Item.objects.filter(project=project, external_id__in=chunk)
        )
    return existing


def _items_create(
    new: list[Item], *, project: Project, actor, source: dict[str, Any], result: ItemsUpserted
) -> None:
    """Insert `new` in batches, read their pks back into `result` and give each an `imported`
    event."""
    Item.objects.bulk_create(new, batch_size=CHUNK)
    for chunk in _chunks([n.external_id for n in new]):
        result.pks.update(
            Item.objects.filter(project=project, external_id__in=chunk).values_list(
                "external_id", "pk"
            )
        )
    events_record(
        kind=EventKind.IMPORTED,
        actor=actor,
        lines=((result.pks[n.external_id], dict(source)) for n in new),
    )
    result.counts["created"] += len(new)


@dataclass(frozen=True)
class QuestionSpec:
    """A question to ask on one item: criterion and pairwise questions carry a snapshot."""

    item_id: int
    kind: QuestionKind
    key: str
    labels: list[str] = field(default_factory=list)
    prompt: str = ""
    criterion_version: str = ""
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class QuestionsAdded:
    created: list[int] = field(default_factory=list)  # item ids that got a new question
    reopened: int = 0


def questions_add(
    *, actor, specs: Sequence[QuestionSpec], source: dict[str, Any]
) -> QuestionsAdded:
    """Ask each spec's question once: an item that already has it (same kind and key) is left
    as it is. The new question goes after the item's others; items that get one are re-opened
    and given back to the raters who submitted them (`places_given_back`), with a
    `question_added` event carrying `source`."""
    result = QuestionsAdded()
    for chunk in _chunks(specs):
        new = _not_asked_yet(chunk)
        item_ids = [s.item_id for s in new]
        Question.objects.bulk_create(_questions_after_the_last(new, item_ids))
        result.reopened += items_reopen(item_ids)
        events_record(
            kind=EventKind.QUESTION_ADDED,
            actor=actor,
            lines=((s.item_id, {"question": s.key, "kind": s.kind, **source}) for s in new),
        )
        result.created += item_ids
    return result


def items_reopen(item_ids) -> int:
    """Items that got a new question: open again, and given back to their raters
    (`places_given_back`). Returns how many were not open before."""
    reopened = (
        Item.objects.filter(pk__in=item_ids)
        .exclude(status=ItemStatus.OPEN)
        .update(status=ItemStatus.OPEN, updated_at=timezone.now())
    )
    places_given_back(item_ids)
    return reopened


LABEL_KINDS = (QuestionKind.CRITERION, QuestionKind.PAIRWISE)


def questions_ask_again(item_ids: Sequence[int]) -> dict[int, list[str]]:
    """A changed item's criterion and pairwise questions, open or settled, are asked again:
    open, with the reason shown to raters; the item re-opens and goes back to its raters
    (`items_reopen`). Answers given on the earlier revision no longer count for them.
    Returns item pk -> the questions' keys."""
    questions = Question.objects.filter(item_id__in=item_ids, kind__in=LABEL_KINDS)
    asked: dict[int, list[str]] = {}
    for item_id, key in questions.order_by("item_id", "position", "id").values_list(
        "item_id", "key"
    ):
        asked.setdefault(item_id, []).append(key)
    if asked:
        questions.update(status=QuestionStatus.OPEN, reason=QuestionReason.CONTENT_CHANGED)
        items_reopen(list(asked))
    return asked


def places_given_back(item_ids) -> int:
    """Items that get a new question go back to the raters who submitted them: their places,
    which fill the item's overlap, turn from submitted to assigned, so the queue serves the item
    to them again (they answer the new question; the settled ones stay settled). Left
    submitted, those places would keep every other rater out and the item would wait for
    nobody. A rater no longer in the project keeps their submitted place: it still counts, and
    the new question settles on the answers of those who come back."""
    still_rating = Membership.objects.filter(
        project=OuterRef("item__project"), user=OuterRef("rater"), role=Role.RATER
    )
    return (
        Assignment.objects.filter(
            item_id__in=item_ids, status=AssignmentStatus.SUBMITTED, gold=False
        )
        .filter(Exists(still_rating))
        .update(status=AssignmentStatus.ASSIGNED)
    )


def _not_asked_yet(chunk: Sequence[QuestionSpec]) -> list[QuestionSpec]:
    """The specs whose item has no question of that kind and key yet (one query)."""
    wanted = {(s.item_id, s.kind, s.key) for s in chunk}
    asked = set(
        Question.objects.filter(
            item_id__in={s.item_id for s in chunk}, key__in={s.key for s in chunk}
        ).values_list("item_id", "kind", "key")
    )
    missing = wanted - asked
    return [s for s in chunk if (s.item_id, s.kind, s.key) in missing]


def _questions_after_the_last(new: list[QuestionSpec], item_ids: list[int]) -> list[Question]:
    """`new` as Question rows, each item's numbered on from its last position (one query)."""
    positions = dict(
        Question.objects.filter(item_id__in=item_ids)
        .values("item_id")
        .annotate(last=Max("position"))
        .values_list("item_id", "last")
    )
    added: Counter = Counter()
    questions = []
    for spec in new:
        questions.append(
            Question(
                item_id=spec.item_id,
                kind=spec.kind,
                key=spec.key,
                labels=list(spec.labels),
                prompt=spec.prompt,
                criterion_version=spec.criterion_version,
                options=spec.options,
                position=positions.get(spec.item_id, -1) + 1 + added[spec.item_id],
            )
        )
        added[spec.item_id] += 1
    return questions


def source_attach(
    *, item_id: int, artifact_id: str, document: Document, path: str = "", page: int | None = None
) -> ItemSource:
    """Cite a stored document (or one page of it) as evidence of an item."""
    return ItemSource.objects.create(
        item_id=item_id,
        artifact_id=artifact_id,
        document=document,
        path=path or artifact_id,
        page=page,
    )


class PairwiseConflict(ValueError):
    """An item already compares another pair for a criterion: `index` is the refused pair's
    place in the list given, `current` what the item keeps."""

    def __init__(self, index: int, current: Any):
        super().__init__(f"pair {index} contradicts the item's {current!r}")
        self.index, self.current = index, current


def items_pairwise_keep(pairs: Sequence[tuple[int, str, Any]]) -> int:
    """Keep each (item pk, criterion name, pair) in the item's `metadata["pairwise"]`, where a
    pairwise question can show them; a pair the item already keeps changes nothing. Raises
    PairwiseConflict for the first pair that contradicts one kept (nothing written then).
    Returns the number of items changed."""
    items = Item.objects.in_bulk({pk for pk, _, _ in pairs})
    changed = {}
    for index, (pk, criterion, pair) in enumerate(pairs):
        known = items[pk].metadata.setdefault("pairwise", {})
        current = known.get(criterion)
        if current is None:
            known[criterion] = pair
            changed[pk] = items[pk]
        elif current != pair:
            raise PairwiseConflict(index, current)
    Item.objects.bulk_update(list(changed.values()), ["metadata"], batch_size=CHUNK)
    return len(changed)


@transaction.atomic
def slices_critical_set(
    *, project: Project, names: Sequence[str], critical: bool = True, actor=None
) -> int:
    """Mark the project's slices `names` critical (a release gate looks at them on their own),
    or no longer critical; the slices that changed make one audit line. Returns how many of
    `names` were found."""
    slices = Slice.objects.filter(project=project, name__in=list(names))
    changed = sorted(slices.exclude(critical=critical).values_list("name", flat=True))
    found = slices.update(critical=critical)
    if changed:
        project_event_record(
            project,
            actor,
            ProjectAction.SLICES_CRITICAL_SET,
            target=", ".join(changed),
            before={"critical": not critical, "slices": changed},
            after={"critical": critical, "slices": changed},
        )
    return found
