"""Writing imported items in batches: one lookup query, then one `executemany` INSERT per table
(items, slice links, events) for every BATCH records, so a 100k-item file streams through in
constant memory. The record importers (`import_records`) feed it; evidence a record cites is
read and stored here too.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii as _quoted  # json.dumps's own, for a str
from pathlib import Path
from typing import Any, NamedTuple

from django.core.exceptions import ValidationError
from django.utils import timezone

from reviews.evidence import EvidenceError
from reviews.formats import records as rec
from reviews.formats.errors import FormatError
from reviews.models import (
    Event,
    EventKind,
    Item,
    ItemSlice,
    ItemSource,
    ItemStatus,
    Slice,
)
from reviews.services.events import event_record
from reviews.services.files.documents import document_for_bytes, read_evidence
from reviews.services.imports.background_copies import background_copies
from reviews.services.imports.bulk_insert import (
    MadeLines,
    PkSet,
    insert_lines,
    insert_rows,
    made_lines,
    next_pks,
    pks_by_key,
)
from reviews.services.imports.copy_text import JsonText
from reviews.services.imports.pipeline import ImportContext
from reviews.services.items import questions_ask_again
from reviews.services.revisions import content_changes, revision_keep

# Records per batch: each batch costs a look-up, a draw of ids and three COPYs, each ending in a
# round trip and a statement trigger; 4000 rather than 1000 took the server's CPU for 100k items
# from 3.7 to 3.4 s (bench/README.md, issue #33), and holds a few MB of records.
BATCH = 4000


class ItemRow(NamedTuple):
    """An `item` record as the batch writes it (checked by the record's schema already)."""

    item_id: str
    input: Any
    output: Any
    reference: Any
    slices: list[str]
    evidence: list[str]
    metadata: dict[str, Any]  # extra top-level keys of the record included

    @classmethod
    def of(cls, record: rec.Item) -> ItemRow:
        extra = record.model_extra
        return cls(
            record.item_id,
            record.input,
            record.output,
            record.reference,
            record.slices,
            record.evidence,
            {**record.metadata, **extra} if extra else record.metadata,
        )


_ID_MAX = Item._meta.get_field("external_id").max_length
_SLICE_NAME = Slice._meta.get_field("name")


class ItemBatch:
    """Item records waiting to be written together.

    New items, their slice links and their `imported` events are written with one
    `executemany` of a plain INSERT per table and batch (`insert_rows`): building a model
    instance per row, as `bulk_create` does, was most of an import's time (bench/README.md).
    Items already in the project are compared and updated one by one (a re-import is mostly
    "unchanged"). A file naming one item twice is refused, wherever the two lines are.

    On PostgreSQL a batch's COPYs are sent by a helper thread (`BackgroundCopies`): `flush`
    returns while the server stores them, and the next records are read meanwhile. Whoever
    writes through anything else in between calls `settle()` first, and `close()` at the end.
    """

    schemas = rec.ITEM_SCHEMAS  # the record kinds it writes (the import registry's `item`)

    def __init__(self, context: ImportContext):
        self.context = context
        self.pending: list[tuple[ItemRow, str]] = []
        self.slices: dict[str, Slice] = {
            s.name: s for s in Slice.objects.filter(project=context.project)
        }
        self.seen = PkSet()  # items this file already named: a second mention is an error
        self.valid_names: set[str] = set()  # slice names checked, not yet created
        self.copies = background_copies()
        self.only_new = True  # every item of the file so far was new (see `_made_ahead`)

    def add(self, record: ItemRow, where: str) -> None:
        self._check(record, where)
        self.pending.append((record, where))
        if len(self.pending) >= BATCH:
            self.flush()

    def settle(self) -> None:
        """Every row written so far is stored (its COPY's error, if any, raised here)."""
        if self.copies is not None:
            self.copies.wait()

    def close(self) -> None:
        """Done (or failed): no COPY of this batch starts after this."""
        if self.copies is not None:
            self.copies.close()

    def flush(self) -> None:
        if not self.pending:
            return
        now = timezone.now()
        made = self._made_ahead(now)  # while the batches before are still being stored
        self.settle()  # the look-up must see the rows of the batches before
        project, file = self.context.project, self.context.file
        ids = [r.item_id for r, _ in self.pending]
        existing: dict[str, Item] = {}
        if known := pks_by_key(Item, "external_id", ids, project=project.pk):  # a re-import
            self.only_new = False
            found = Item.objects.filter(pk__in=known.values()).order_by()
            existing = {i.external_id: i for i in found.prefetch_related("slices", "sources")}
        new: list[tuple[ItemRow, str, str | None]] = []  # with its line made ahead, if made
        batch: dict[str, str] = {}
        for index, (record, where) in enumerate(self.pending):
            if record.item_id in batch:
                self._twice(record, where, batch[record.item_id])
            batch[record.item_id] = where
            item = existing.get(record.item_id)
            if item is None:
                new.append((record, where, made.lines[index] if made is not None else None))
                continue
            if not self.seen.add(item.pk):
                self._twice(record, where, _first_mention(item, file))
            self.context.items_named([item.pk])
            self._update(item, record, where)
        if new:
            self._create(new, now, made)
        self.pending = []

    def _made_ahead(self, now) -> MadeLines | None:
        """PostgreSQL, while every item of the file so far was new: the pending records' rows
        made into COPY text before the look-up says which are new, so that the server, still
        storing the batches before, is not left idle while they are made (issue #33,
        bench/README.md). A re-import's records are mostly not new: compared, not written."""
        if self.copies is None or not self.only_new:
            return None
        rows = (_item_values(record) for record, _ in self.pending)
        return made_lines(Item, ("external_id", *_FIELDS), rows, **self._constants(now))

    def _constants(self, now) -> dict[str, Any]:
        return {
            "project_id": self.context.project.pk,
            # Questions asked on import: every new item gets them (or the import fails), so
            # it is open from the start instead of updated afterwards.
            "status": ItemStatus.OPEN if self.context.every_item else ItemStatus.RESOLVED,
            "overlap": None,
            "revision": 1,
            "created_at": now,
            "updated_at": now,
        }

    def _check(self, record: ItemRow, where: str) -> None:
        """What the database would refuse (or PostgreSQL only): an over-long id, a slice name
        the Slice model does not allow. Checked here so the error names the spot."""
        file = self.context.file
        if len(record.item_id) > _ID_MAX:
            raise FormatError(
                f"item_id is {len(record.item_id)} characters long (at most {_ID_MAX})",
                file=file,
                record=where,
                path="$.item_id",
            )
        for index, name in enumerate(record.slices):
            if name in self.slices or name in self.valid_names:
                continue
            try:
                _SLICE_NAME.run_validators(name)
            except ValidationError as error:
                raise FormatError(
                    f"slice name {name!r} is not allowed: {' '.join(error.messages)}",
                    file=file,
                    record=where,
                    path=f"$.slices[{index}]",
                ) from None
            self.valid_names.add(name)

    def _twice(self, record: ItemRow, where: str, first: str) -> None:
        raise FormatError(
            f"item {record.item_id!r} appears twice (also on {first})",
            file=self.context.file,
            record=where,
            path="$.item_id",
        )

    def _create(self, new: list[tuple[ItemRow, str, str | None]], now, made) -> None:
        context, project = self.context, self.context.project
        ids = [record.item_id for record, *_ in new]
        for record, *_ in new:  # before the COPYs: a new slice is written by the ORM
            for name in record.slices:
                self._slice(name)
        drawn = next_pks(Item, len(new))  # PostgreSQL: no look-up after the COPY
        if made is not None:  # every line made ahead: each given its id
            lines = [f"{pk}\t{line}" for pk, (*_, line) in zip(drawn, new, strict=True)]
            insert_lines(Item, ("id", *made.columns), lines, copies=self.copies)
        else:
            columns = ("external_id", *_FIELDS)
            rows = (_item_values(record) for record, *_ in new)
            if drawn:
                rows = ((pk, *row) for pk, row in zip(drawn, rows, strict=True))
                columns = ("id", *columns)
            insert_rows(Item, columns, rows, copies=self.copies, **self._constants(now))
        pks = (
            dict(zip(ids, drawn, strict=True))
            if drawn
            else pks_by_key(Item, "external_id", ids, project=project.pk)  # SQLite: no copies
        )
        for pk in pks.values():
            self.seen.add(pk)
            context.created.add(pk)
        context.items_named(pks.values())
        insert_rows(
            ItemSlice,
            ("item_id", "slice_id"),
            (
                (pks[record.item_id], self._slice(name).pk)
                for record, *_ in new
                for name in dict.fromkeys(record.slices)
            ),
            copies=self.copies,
        )
        asked = ", ".join(context.asked)
        insert_rows(
            Event,
            ("item_id", "data"),
            (
                (pks[record.item_id], _imported(context.file, where, asked))
                for record, where, _ in new
            ),
            copies=self.copies,
            actor_id=context.actor.pk if context.actor else None,
            kind=EventKind.IMPORTED,
            created_at=now,
        )
        if any(record.evidence for record, *_ in new):
            self.settle()  # evidence rows are written by the ORM, after the items they name
        for record, where, _ in new:
            if record.evidence:
                self._attach_evidence(pks[record.item_id], record, where, have=set())
        context.counts["items_created"] += len(new)

    def _update(self, item: Item, record: ItemRow, where: str) -> None:
        """Changed fields are saved (previous values kept in the event); new slices and new
        evidence paths are added. Nothing is taken away: a slice or evidence file the record no
        longer lists stays (removing them is not an import's call)."""
        fields = _item_fields(record)
        changed = {k: getattr(item, k) for k, v in fields.items() if getattr(item, k) != v}
        tagged = {s.name for s in item.slices.all()}
        slices_added = [n for n in dict.fromkeys(record.slices) if n not in tagged]
        have = {s.artifact_id for s in item.sources.all()}
        evidence_added = [e for e in dict.fromkeys(record.evidence) if e not in have]
        if not (changed or slices_added or evidence_added):
            self.context.counts["items_unchanged"] += 1
            return
        # The previous values stay in the timeline: an update never loses data silently.
        data: dict[str, Any] = {"file": self.context.file, "record": where, "previous": changed}
        revised = content_changes(item, fields, evidence_added)
        if revised:
            data["revision"] = revision_keep(item, evidence=have, file=self.context.file)
        if changed or revised:
            for key in changed:
                setattr(item, key, fields[key])
            item.save(update_fields=[*changed, "revision", "updated_at"])
        if slices_added:
            item.slices.add(*(self._slice(name) for name in slices_added))
        if evidence_added:
            self._attach_evidence(item.pk, record, where, have=have)
        if revised:
            data["asked_again"] = questions_ask_again([item.pk]).get(item.pk, [])
            self.context.counts["items_revised"] += 1
        if slices_added:
            data["slices_added"] = slices_added
        if evidence_added:
            data["evidence_added"] = evidence_added
        event_record(item=item, actor=self.context.actor, kind=EventKind.UPDATED, data=data)
        self.context.counts["items_updated"] += 1

    def _slice(self, name: str) -> Slice:
        if name not in self.slices:
            self.slices[name] = Slice.objects.create(project=self.context.project, name=name)
        return self.slices[name]

    def _attach_evidence(self, item_pk: int, record: ItemRow, where: str, *, have: set) -> None:
        base = self.context.base_dir
        for index, relative in enumerate(record.evidence):
            path = f"$.evidence[{index}]"
            if relative in have:
                continue
            if base is None:
                raise FormatError(
                    "evidence files cannot be read from here",
                    file=self.context.file,
                    record=where,
                    path=path,
                )
            document = _document(base, relative, self.context, where, path)
            ItemSource.objects.create(
                item_id=item_pk,
                artifact_id=relative,
                document=document,
                path=relative,
                position=index,
            )
            have.add(relative)


def _imported(file: str, where: str, asked: str) -> JsonText:
    """An `imported` event's data, `{"file": file, "record": where}` and the questions asked on
    import (`"questions": "criterion:a, criterion:b"`: a new item gets them all, and this line
    says so instead of a `question_added` line each), dumped as json.dumps would (a dump per
    event was a tenth of a 100k-item import's client time)."""
    questions = f', "questions": {_quoted(asked)}' if asked else ""
    return JsonText(f'{{"file": {_quoted(file)}, "record": {_quoted(where)}{questions}}}')


def _first_mention(item: Item, file: str) -> str:
    """Where this file first named `item` (from its event), for the "appears twice" error."""
    events = Event.objects.filter(item=item, kind__in=("imported", "updated")).order_by("-pk")
    for data in events.values_list("data", flat=True)[:20]:
        if isinstance(data, dict) and data.get("file") == file and data.get("record"):
            return data["record"]
    return "an earlier line"


def _document(base: Path, relative: str, context: ImportContext, where: str, path: str):
    from reviews.formats.review_file import resolve_evidence_path

    try:
        target = resolve_evidence_path(base, relative)
        if not target.is_file():
            raise FormatError(
                f"evidence file {relative!r} not found", file=context.file, record=where, path=path
            )
        data = read_evidence(target, name=relative)  # refused by size before it is read
        document, created = document_for_bytes(data, name=relative, written=context.written)
    except (EvidenceError, ValueError) as error:
        raise FormatError(str(error), file=context.file, record=where, path=path) from None
    context.counts["documents"] += int(created)
    return document


def _item_fields(record: ItemRow) -> dict[str, Any]:
    return dict(zip(_FIELDS, _item_values(record)[1:], strict=True))


_FIELDS = ("title", "input", "output", "expected", "metadata")


def _item_values(record: ItemRow) -> tuple:
    """A new item's row for `insert_rows`: external_id, then the `_FIELDS`."""
    return (
        record.item_id,
        record.item_id[:300],
        record.input,
        record.output,
        record.reference,
        record.metadata,
    )
