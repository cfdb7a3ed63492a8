"""Asking people for a criterion's labels: criterion questions on chosen items.

Selections:
- `split_votes`: items where one judge's samples disagree on the criterion (self-consistency
  splits: the natural first candidates for human review);
- `calibration_sample`: n items of the calibration split, stratified by slice (proportional
  allocation, largest remainders; inside a stratum, the same seeded hash order as the split);
- `held_out`: every held-out item;
- `inconsistent_pairs`: pairwise items where some judge's verdict changed with the display order;
- `chosen`: the items a caller names (a panel's ties and dissent).

Every selected item is recorded with its selection (`LabelRequest`, once per item and selection,
whether or not it already had the question): the estimates (docs/estimates.md) use only the
labels of items drawn at random (`held_out`, `calibration_sample`).

Idempotent: an item that already has the question is left as it is. Items that get a new question
are re-opened (status `open`) so raters are offered them. Raters stay blind: the question is a
snapshot of the criterion (labels, text, version) and nothing of the judges' verdicts; even the
question's `reason` stays empty, since "the judge was unsure" would be a hint too.
"""

from __future__ import annotations

import math
from collections import defaultdict
from contextlib import nullcontext
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count

from judging.formats.replies import UNPARSED
from judging.models import Criterion, LabelRequest, Split, Verdict
from judging.services.calibration.splits import (
    SplitError,
    current_draw,
    draw_rank,
    items_in_split,
    split_extend,
    strata_of,
)
from judging.services.imports.criteria import question_snapshot
from reviews.models import Item, Project, QuestionKind
from reviews.services.imports.staging import in_short_transactions, staged_writes
from reviews.services.items import QuestionSpec, questions_add

SELECTIONS = ("split_votes", "calibration_sample", "held_out", "inconsistent_pairs")
CHOSEN = "chosen"
CHUNK = 1000


class SendError(Exception):
    """The items cannot be sent as asked (a clear, user-facing reason)."""


@dataclass(frozen=True)
class SendResult:
    criterion: str
    selection: str
    items: int
    questions_created: int
    questions_existing: int
    items_reopened: int


def split_vote_items(*, criterion: Criterion) -> list[int]:
    """Items where some judge gave the criterion more than one distinct label across samples."""
    rows = (
        Verdict.objects.current()
        .filter(criterion=criterion)
        .values("item_id", "judge_id")
        .annotate(distinct_labels=Count("label", distinct=True))
        .filter(distinct_labels__gt=1)
        .values_list("item_id", flat=True)
    )
    return sorted(set(rows))


def inconsistent_pair_items(*, criterion: Criterion) -> list[int]:
    """Items where some judge's verdict on a pair changed with the display order (AB vs BA,
    mapped back to the original answers): position bias, worth a human look."""
    seen: dict[tuple[int, int, int], set[str]] = defaultdict(set)
    rows = Verdict.objects.current().filter(criterion=criterion).exclude(display_order="")
    for item_id, judge_id, sample, label in rows.values_list(
        "item_id", "judge_id", "sample", "label"
    ):
        if label != UNPARSED:
            seen[(item_id, judge_id, sample)].add(label)
    return sorted({key[0] for key, labels in seen.items() if len(labels) > 1})


def allocate(sizes: dict, n: int) -> dict:
    """Split n over strata in proportion to their sizes (largest remainders, ties by key)."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    exact = {key: n * size / total for key, size in sizes.items()}
    shares = {key: math.floor(value) for key, value in exact.items()}
    order = sorted(sizes, key=lambda key: (-(exact[key] - shares[key]), key))
    for key in order[: n - sum(shares.values())]:
        shares[key] += 1
    return shares


def _judged(items, criterion: Criterion):
    """Only items the criterion applies to: those a judge labelled on it."""
    if criterion is None:
        return items
    judged = Verdict.objects.current().filter(criterion=criterion)
    return items.filter(pk__in=judged.values("item_id"))


def calibration_sample(
    *, project: Project, n: int, seed: int, criterion: Criterion | None = None
) -> list[int]:
    """n calibration items (judged on `criterion`), stratified by slice, seeded hash order."""
    strata = strata_of(_judged(items_in_split(project=project, split=Split.CALIBRATION), criterion))
    shares = allocate({key: len(members) for key, members in strata.items()}, n)
    chosen = []
    for key, members in strata.items():
        ordered = sorted(members, key=lambda member: draw_rank(seed, member[0]))
        chosen += [pk for _, pk in ordered[: shares[key]]]
    return sorted(chosen)


def _select(project, criterion, selection, n, seed, item_ids=None) -> list[int]:
    if selection == CHOSEN:
        ids = set(item_ids or [])
        mine = set(Item.objects.filter(project=project, pk__in=ids).values_list("pk", flat=True))
        if ids - mine:
            raise SendError(f"{len(ids - mine)} chosen item(s) are not in this project")
        return sorted(ids)
    if selection == "split_votes":
        return split_vote_items(criterion=criterion)
    if selection == "inconsistent_pairs":
        return inconsistent_pair_items(criterion=criterion)
    if current_draw(project) is None:
        raise SplitError(f"no split has been drawn for {project.slug!r}: draw it first")
    split_extend(project=project)
    if selection == "held_out":
        held_out = _judged(items_in_split(project=project, split=Split.HELD_OUT), criterion)
        return sorted(held_out.values_list("pk", flat=True))
    if n is None or n < 1 or seed is None:
        raise SendError("a calibration sample needs a size n >= 1 and a seed")
    return calibration_sample(project=project, n=n, seed=seed, criterion=criterion)


def _pair(item: Item, criterion: Criterion) -> dict:
    pair = (item.metadata or {}).get("pairwise", {}).get(criterion.name)
    if not pair:
        raise SendError(
            f"item {item.external_id!r} has no answers A and B for pairwise criterion "
            f"{criterion.name!r}: import its pairwise verdicts first"
        )
    return pair


def _questions(item_ids: list[int], criterion: Criterion, kind: str) -> list[QuestionSpec]:
    items = Item.objects.in_bulk(item_ids) if criterion.pairwise else {}
    return [
        QuestionSpec(
            item_id=item_id,
            kind=kind,
            options=_pair(items[item_id], criterion) if criterion.pairwise else {},
            **question_snapshot(criterion),
        )
        for item_id in item_ids
    ]


def _record_selection(criterion, item_ids, selection, n, seed) -> None:
    """How these items came before people (kept once per item and selection)."""
    sample = {"seed": seed, "sample_size": n} if selection == "calibration_sample" else {}
    # No ignore_conflicts: the history table's guard refuses any INSERT over an existing row.
    known = set(
        LabelRequest.objects.filter(
            criterion=criterion, selection=selection, item_id__in=item_ids
        ).values_list("item_id", flat=True)
    )
    LabelRequest.objects.bulk_create(
        [
            LabelRequest(criterion=criterion, item_id=item_id, selection=selection, **sample)
            for item_id in item_ids
            if item_id not in known
        ],
        batch_size=CHUNK,
    )


def _pairs_check(item_ids: list[int], criterion: Criterion) -> None:
    """Every chosen pairwise item has its answers A and B, before anything is written."""
    for start in range(0, len(item_ids), CHUNK):
        for item in Item.objects.filter(pk__in=item_ids[start : start + CHUNK]).only("metadata"):
            _pair(item, criterion)


def items_send_to_humans(
    *,
    actor,
    project: Project,
    criterion: Criterion,
    selection: str,
    n: int | None = None,
    seed: int | None = None,
    item_ids: list[int] | None = None,
    progress=None,
    in_steps: bool = False,
) -> SendResult:
    """Create the criterion's question on the selected items (once) and re-open them.
    `progress(done, total)`, if given, hears after each chunk of items.

    One transaction, unless `in_steps` (the background job): then chunks of CHUNK items commit
    with their selection records, on SQLite in transactions of about a quarter second with a
    pause between them (staging.in_short_transactions), so raters' saves get the one write lock
    instead of waiting out 50k items. Bad input is refused before the first
    chunk; a worker killed between chunks leaves whole chunks, and running it again finishes the
    rest (an item that has the question is left as it is)."""
    if selection not in (*SELECTIONS, CHOSEN):
        raise SendError(f"unknown selection {selection!r} (one of: {', '.join(SELECTIONS)})")
    if criterion.project_id != project.pk:
        raise SendError(f"criterion {criterion.name!r} belongs to another project")
    with transaction.atomic():  # the selection (a split extended) commits first
        chosen = _select(project, criterion, selection, n, seed, item_ids)
    if criterion.pairwise:
        _pairs_check(chosen, criterion)
    if not in_steps:
        with transaction.atomic():
            return _send(actor, criterion, chosen, selection, (n, seed), progress, in_steps)
    return _send(actor, criterion, chosen, selection, (n, seed), progress, in_steps)


def _send(actor, criterion, chosen, selection, sample, progress, in_steps) -> SendResult:
    kind = QuestionKind.PAIRWISE if criterion.pairwise else QuestionKind.CRITERION
    counts = {"created": 0, "reopened": 0}

    def write(start: int) -> None:  # chunks: pairwise specs need their items
        chunk = chosen[start : start + CHUNK]
        _record_selection(criterion, chunk, selection, *sample)
        added = questions_add(
            actor=actor, specs=_questions(chunk, criterion, kind), source={"selection": selection}
        )
        counts["created"] += len(added.created)
        counts["reopened"] += added.reopened
        if progress:
            progress(min(start + CHUNK, len(chosen)), len(chosen))

    starts = range(0, len(chosen), CHUNK)
    if in_steps and staged_writes():  # SQLite: short transactions, waiting writers between
        in_short_transactions(starts, write)
    else:
        for start in starts:
            with transaction.atomic():
                write(start)
    created = counts["created"]
    return SendResult(
        criterion.name, selection, len(chosen), created, len(chosen) - created, counts["reopened"]
    )


def items_send_said(*, actor, project: Project, criterion: Criterion, progress=None, **data) -> str:
    """The dashboard's *Send to humans* (a background job): what it did, in a sentence."""
    result = items_send_to_humans(
        actor=actor,
        project=project,
        criterion=criterion,
        progress=progress,
        in_steps=True,
        **data,
    )
    noun = "question" if result.questions_created == 1 else "questions"
    return (
        f"{result.questions_created} new {criterion.name} {noun} in the review queue "
        f"({result.questions_existing} were there already; {result.items} items selected)."
    )


def items_send_chosen(
    *, actor, project: Project, item_ids: list[int], criterion: Criterion, progress=None
) -> str:
    """The item list's *Send to humans* on the chosen items, in one transaction (or, as the
    list's background job, `progress` given, in steps as the dashboard's job); what it did, in
    a sentence (reviews/item_hooks.py)."""
    steps = progress is not None
    try:
        with nullcontext() if steps else transaction.atomic():
            result = items_send_to_humans(
                actor=actor, project=project, criterion=criterion, selection=CHOSEN,
                item_ids=list(item_ids), progress=progress, in_steps=steps,
            )  # fmt: skip
    except SendError as error:
        raise ValidationError(str(error)) from None
    return (
        f"Sent {result.items} item{'' if result.items == 1 else 's'} to people on "
        f"{result.criterion}: {result.questions_created} new questions, "
        f"{result.questions_existing} already asked, {result.items_reopened} re-opened."
    )
