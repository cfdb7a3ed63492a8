"""The calibration / held-out split: drawn once (seeded, stratified by slice), then frozen.

Draw: items are grouped into strata by their sorted tuple of slice names (no slice: the empty
stratum). Inside a stratum, items are ordered by SHA-256 of "<seed>:<external id>" and the first
round(n × fraction) (halves round up) are held out. The order depends only on the seed and the
items' external ids, so the same seed gives the same split on any database.

Frozen: once a held-out item carries a human label (an imported label, a rater's answer or a
resolution of a criterion/pairwise question), redrawing is refused: a redraw could then move
items whose human labels were already looked at into the held-out set.

Late items (imported after the draw) join the existing draw by this rule, applied by
`split_extend` (called by the agreement report and send_to_humans before they read the split):
per stratum, in the same hash order, an item is held out when the stratum's held-out count is
below round(size after adding it × fraction), else it goes to calibration. Assignments never
change once written; late rows are marked `late=True`.

Every read of held-out figures leaves a `HeldOutAccess` row (`held_out_access_log`): the agreement
report as it reads them, the dashboard pages when a reader asks to see them (a POST).
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter

from django.db import transaction
from django.db.models import Q, QuerySet

from judging.models import HeldOutAccess, HumanLabel, ItemSplit, Split, SplitDraw
from judging.services.audit import split_drawn
from reviews.models import Answer, Item, ItemSlice, Project, QuestionKind, Resolution
from reviews.services.projects.data import project_data_touch
from reviews.signals import project_data_changed

SPLIT_CHOICES = ("held_out", "calibration", "all")
LABEL_KINDS = (QuestionKind.CRITERION, QuestionKind.PAIRWISE)
LATE_CHUNK = 2000  # late rows written in one short transaction (split_extend)


class SplitError(Exception):
    """The split cannot be drawn or read as asked (a clear, user-facing reason)."""


class SplitFrozen(SplitError):
    """Held-out items already carry human labels: the split cannot be drawn again."""


def current_draw(project: Project) -> SplitDraw | None:
    return SplitDraw.objects.filter(project=project).order_by("-pk").first()


def held_out_count(size: int, fraction: float) -> int:
    """round(size × fraction), halves up (Python's round() would round halves to even)."""
    return math.floor(size * fraction + 0.5)


def draw_rank(seed: int, external_id: str) -> str:
    return hashlib.sha256(f"{seed}:{external_id}".encode()).hexdigest()


def strata_of(items: QuerySet) -> dict[tuple[str, ...], list[tuple[str, int]]]:
    """Stratum (sorted slice names) -> [(external id, pk)] of `items`."""
    names: dict[int, list[str]] = {}
    links = ItemSlice.objects.filter(item__in=items).values_list("item_id", "slice__name")
    for item_id, name in links:
        names.setdefault(item_id, []).append(name)
    strata: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    for external_id, pk in items.values_list("external_id", "pk"):
        strata.setdefault(tuple(sorted(names.get(pk, []))), []).append((external_id, pk))
    return strata


def labelled_held_out_items(project: Project) -> QuerySet:
    """Held-out items that already carry a human label of any kind."""
    answered = Answer.objects.filter(question__kind__in=LABEL_KINDS).values("question__item_id")
    resolved = Resolution.objects.filter(question__kind__in=LABEL_KINDS).values("question__item_id")
    return Item.objects.filter(project=project, split__split=Split.HELD_OUT).filter(
        Q(pk__in=HumanLabel.objects.values("item_id")) | Q(pk__in=answered) | Q(pk__in=resolved)
    )


@transaction.atomic
def split_draw(*, actor, project: Project, seed: int, held_out_fraction: float = 0.5) -> SplitDraw:
    """Draw (or, while nothing held-out is labelled, redraw) the project's split."""
    if not 0 < held_out_fraction < 1:
        raise SplitError(f"held_out_fraction must be between 0 and 1, got {held_out_fraction}")
    if not -(2**63) <= seed < 2**63:
        raise SplitError(f"seed: {seed} does not fit in 64 bits (at most 18 digits)")
    Project.objects.select_for_update().get(pk=project.pk)  # one draw at a time
    labelled = labelled_held_out_items(project)
    if labelled.exists():
        examples = ", ".join(
            labelled.order_by("external_id").values_list("external_id", flat=True)[:3]
        )
        raise SplitFrozen(
            f"the split of {project.slug!r} is frozen: {labelled.count()} held-out items already "
            f"have human labels (e.g. {examples}); drawing again would leak them into tuning"
        )
    ItemSplit.objects.filter(item__project=project).delete()
    draw = SplitDraw.objects.create(
        project=project,
        seed=seed,
        held_out_fraction=held_out_fraction,
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    rows = []
    for members in strata_of(Item.objects.filter(project=project)).values():
        ordered = sorted(members, key=lambda member: draw_rank(seed, member[0]))
        cut = held_out_count(len(ordered), held_out_fraction)
        rows += [
            ItemSplit(item_id=pk, draw=draw, split=Split.HELD_OUT if i < cut else Split.CALIBRATION)
            for i, (_, pk) in enumerate(ordered)
        ]
    ItemSplit.objects.bulk_create(rows, batch_size=1000)
    split_drawn(draw, actor)
    project_data_touch(project)
    # A new split changes every figure: the dashboard recomputes (a GET never queues it).
    transaction.on_commit(lambda: project_data_changed.send(SplitDraw, project=project))
    return draw


def split_draw_said(*, actor, project: Project, seed: int, held_out_fraction: float) -> str:
    """The dashboard's *Draw split* (a background job): what it drew, in a sentence."""
    drawn = split_draw(actor=actor, project=project, seed=seed, held_out_fraction=held_out_fraction)
    held = drawn.assignments.filter(split=Split.HELD_OUT).count()
    return f"Split drawn with seed {seed}: {held} held-out items."


def split_extend(*, project: Project) -> int:
    """Draw items added since the draw into it (the late-item rule); returns how many.

    The rows are worked out outside any transaction and written in short ones of LATE_CHUNK:
    a dashboard recompute after a 30,000-item import must not hold SQLite's one write lock for
    seconds (issue 26, F4). Each checks, under the project's lock, that the split's rows are
    still those the late rows were worked out from, else they are worked out again. A prefix of
    them written now and the rest later gives the same split: an item's side depends only on
    the items before it in its stratum's order."""
    written = 0
    while True:
        draw = current_draw(project)
        if draw is None or not Item.objects.filter(project=project, split__isnull=True).exists():
            return written
        known, rows = _late_rows(project, draw)
        for start in range(0, len(rows), LATE_CHUNK):
            with transaction.atomic():
                Project.objects.select_for_update().get(pk=project.pk)
                if _split_rows(project) != known + start or current_draw(project) != draw:
                    break  # another draw or extend came first: work the rest out again
                ItemSplit.objects.bulk_create(rows[start : start + LATE_CHUNK])
                project_data_touch(project)
                written += len(rows[start : start + LATE_CHUNK])
        else:
            return written


def _split_rows(project: Project) -> int:
    return ItemSplit.objects.filter(item__project=project).count()


def _late_rows(project: Project, draw: SplitDraw) -> tuple[int, list[ItemSplit]]:
    """How many items the draw holds, and the rows of those it lacks, by the late-item rule."""
    split_of = dict(ItemSplit.objects.filter(item__project=project).values_list("item_id", "split"))
    held, size = Counter(), Counter()
    rows = []
    for stratum, members in strata_of(Item.objects.filter(project=project)).items():
        for _, pk in members:
            if pk in split_of:
                size[stratum] += 1
                held[stratum] += split_of[pk] == Split.HELD_OUT
        for _, pk in sorted(
            (m for m in members if m[1] not in split_of), key=lambda m: draw_rank(draw.seed, m[0])
        ):
            size[stratum] += 1
            to_held_out = held[stratum] < held_out_count(size[stratum], draw.held_out_fraction)
            held[stratum] += to_held_out
            split = Split.HELD_OUT if to_held_out else Split.CALIBRATION
            rows.append(ItemSplit(item_id=pk, draw=draw, split=split, late=True))
    return len(split_of), rows


def items_in_split(*, project: Project, split: str) -> QuerySet:
    """The project's items of one split (`all`: every item)."""
    if split not in SPLIT_CHOICES:
        raise SplitError(f"unknown split {split!r} (choose one of: {', '.join(SPLIT_CHOICES)})")
    items = Item.objects.filter(project=project)
    return items if split == "all" else items.filter(split__split=split)


def held_out_access_log(*, actor, project: Project, what: str) -> HeldOutAccess:
    """Record that someone (or a command, actor None) looked at held-out figures."""
    user = actor if getattr(actor, "pk", None) else None
    return HeldOutAccess.objects.create(project=project, user=user, what=what[:200])
