"""Questions every imported item gets, so items are ready to rate the moment they land.

Asked for as `KIND:NAME` (`criterion:faithful`): by the project (`Project.import_questions`),
by the command (`import_items --questions criterion:NAME`), the upload form or the API. Reviews
does not know what a criterion is: the app that does registers a `QuestionSource` for its kind
(`judging` for `criterion`), which turns a name into the question's label set and text.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db.models import Max
from django.utils import timezone

from reviews.formats.errors import FormatError
from reviews.models import EventKind, Project, Question
from reviews.services.events import events_record
from reviews.services.imports.background_copies import background_copies
from reviews.services.imports.bulk_insert import PkSet, insert_rows, model_constants
from reviews.services.imports.copy_text import JsonText
from reviews.services.imports.registry import ImportKind, registered
from reviews.services.items import items_reopen

CHUNK = 4000  # items per COPY of questions: as item_batch.BATCH, and for the same reason


@dataclass(frozen=True)
class QuestionSpec:
    kind: str  # a QuestionKind
    key: str
    labels: list[str] = field(default_factory=list)
    prompt: str = ""
    criterion_version: str = ""


# (project, name) -> the question; raises ValueError with a sentence when there is none.
QuestionSource = Callable[[Project, str], QuestionSpec]


def question_kinds() -> tuple[str, ...]:
    """The question sources registered (`register_import(ImportKind.QUESTIONS, ...)`)."""
    return tuple(registered(ImportKind.QUESTIONS))


def split_requests(text: str | Iterable[str]) -> list[str]:
    """`"criterion:a, criterion:b"` (or a list of such) -> `["criterion:a", "criterion:b"]`."""
    parts = [text] if isinstance(text, str) else list(text)
    return list(dict.fromkeys(p.strip() for part in parts for p in part.split(",") if p.strip()))


def resolve(project: Project, requests: list[str], *, file: str) -> list[QuestionSpec]:
    """The questions asked for, or FormatError naming the one that cannot be asked."""
    specs = []
    for request in requests:
        kind, _, name = request.partition(":")
        source = registered(ImportKind.QUESTIONS).get(kind.strip())
        if source is None or not name.strip():
            choices = ", ".join(f"{k}:NAME" for k in question_kinds()) or "none"
            raise FormatError(
                f"questions {request!r}: write them as {choices}", file=file, path="questions"
            )
        try:
            specs.append(source(project, name.strip()))
        except ValueError as error:
            raise FormatError(
                f"questions {request!r}: {error}", file=file, path="questions"
            ) from None
    return specs


def _question(spec: QuestionSpec) -> Question:
    """What every question of `spec` holds (the model's defaults for the rest)."""
    return Question(
        kind=spec.kind,
        key=spec.key,
        labels=list(spec.labels),
        prompt=spec.prompt,
        criterion_version=spec.criterion_version,
        created_at=timezone.now(),
    )


def questions_add_to_items(
    item_pks: Iterable[int],
    specs: list[QuestionSpec],
    *,
    actor,
    file: str,
    fresh: PkSet | None = None,
) -> int:
    """Each spec's question on each item that lacks it (items reopen); returns how many.

    `fresh`: items the same import just created, open and without a question yet, so their
    chunk needs no look-up and no status update (on a 100k-item import these were most of the
    database's time: bench/README.md), and no `question_added` line: their `imported` line
    names the questions asked on import (`item_batch._imported`)."""
    pks = sorted(set(item_pks))
    # PostgreSQL: a chunk of fresh items' questions is sent by a helper thread while the next
    # chunk's rows are made (item_batch.ItemBatch does the same for the items).
    copies = background_copies()
    try:
        created = _questions_add(pks, specs, actor=actor, file=file, fresh=fresh, copies=copies)
        if copies is not None:
            copies.wait()
    finally:
        if copies is not None:
            copies.close()
    return created


def _questions_add(pks: list[int], specs, *, actor, file: str, fresh, copies) -> int:
    created = 0
    for start in range(0, len(pks), CHUNK):
        chunk = pks[start : start + CHUNK]
        old = [pk for pk in chunk if fresh is None or not fresh.has(pk)]
        if old and copies is not None:
            copies.wait()  # what follows reads and writes by other means than COPY
        positions, asked = _questions_of(old, specs)
        reopened: set[int] = set()
        for spec in specs:
            new = [pk for pk in chunk if (pk, spec.kind, spec.key) not in asked]
            # The same data on every event: dumped once.
            data = JsonText(json.dumps({"question": spec.key, "kind": spec.kind, "file": file}))
            # One COPY (PostgreSQL) or executemany (SQLite) per chunk, not a model per row.
            insert_rows(
                Question,
                ("item_id", "position"),
                ((pk, positions.get(pk, -1) + 1) for pk in new),
                copies=None if old else copies,
                **model_constants(_question(spec), skip=("item_id", "position")),
            )
            for pk in new:
                positions[pk] = positions.get(pk, -1) + 1
            events_record(
                kind=EventKind.QUESTION_ADDED,
                actor=actor,
                lines=((pk, data) for pk in new if fresh is None or not fresh.has(pk)),
            )
            created += len(new)
            reopened.update(new)
        reopen = [pk for pk in old if pk in reopened]
        if reopen:
            items_reopen(reopen)
    return created


def _questions_of(pks: list[int], specs: list[QuestionSpec]) -> tuple[dict[int, int], set]:
    """For items that may have questions already: each one's last position, and which of
    `specs` each already has as (item, kind, key)."""
    if not pks:
        return {}, set()
    positions = dict(
        Question.objects.filter(item_id__in=pks)
        .values("item_id")
        .annotate(last=Max("position"))
        .values_list("item_id", "last")
    )
    asked = set(
        Question.objects.filter(item_id__in=pks, key__in={s.key for s in specs})
        .values_list("item_id", "kind", "key")
        .order_by()
    )
    return positions, asked
