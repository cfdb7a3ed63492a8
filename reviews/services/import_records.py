"""Importing FORMATS §4 typed records (JSONL, or CSV of one kind) and §3 `path,expected` tables.

Items are written in batches of BATCH (one lookup query, then one `executemany` INSERT per
table: items, slice links, events): a 100k-item file streams through in constant memory. Other
record kinds (criteria, verdicts, human labels, pairwise verdicts) belong to a `RecordSink`
another app registered (`judging`): the sink brings their schemas, gets their records in file
order and is told when the file ends; pending items are flushed first, so records may refer to
items earlier in the same file.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar, Protocol

from django.core.exceptions import ValidationError
from django.utils import timezone

from reviews.evidence import EvidenceError
from reviews.formats import records as rec
from reviews.formats.canonical import canonical_rows
from reviews.formats.detect import HEAD_BYTES, Sniffer, csv_flavour
from reviews.formats.errors import FormatError, iter_json_lines
from reviews.formats.reference import COLUMN_ALIASES, iter_reference_csv
from reviews.models import (
    Event,
    EventKind,
    Item,
    ItemSource,
    ItemStatus,
    Slice,
)
from reviews.services.bulk_insert import PkSet, insert_rows
from reviews.services.documents import document_for_bytes, read_evidence
from reviews.services.events import event_record
from reviews.services.ground_truth import generated_add
from reviews.services.imports import ImportContext, register_importer

BATCH = 1000
_ID_MAX = Item._meta.get_field("external_id").max_length
_SLICE_NAME = Slice._meta.get_field("name")


class RecordSink(Protocol):
    """Another app's record kinds in a JSONL/CSV import. One instance per import, made when
    the first of its records comes: its caches and queued rows are its own."""

    schemas: ClassVar[rec.Schemas]  # the record kinds it takes, with their schemas

    def __init__(self, context: ImportContext) -> None: ...

    def add(self, record: rec.Record, where: str) -> None:
        """One record (checked against its schema), `where` is "line N"."""

    def finish(self) -> None:
        """The file ended: write what is queued, add notes to the report."""


_SINKS: dict[str, type[RecordSink]] = {}  # record kind -> the sink that takes it


def register_record_sink(sink: type[RecordSink]) -> type[RecordSink]:
    """Add record kinds (usable as a class decorator); each kind has one owner."""
    for kind in sink.schemas:
        if kind in rec.ITEM_SCHEMAS or _SINKS.get(kind, sink) is not sink:
            raise ValueError(f"record kind {kind!r} is already registered")
        _SINKS[kind] = sink
    return sink


def record_schemas() -> rec.Schemas:
    """Every record kind a JSONL/CSV import reads, with its schema."""
    return {**rec.ITEM_SCHEMAS, **{k: sink.schemas[k] for k, sink in _SINKS.items()}}


class ItemBatch:
    """Item records waiting to be written together.

    New items, their slice links and their `imported` events are written with one
    `executemany` of a plain INSERT per table and batch (`insert_rows`): building a model
    instance per row, as `bulk_create` does, was most of an import's time (bench/README.md).
    Items already in the project are compared and updated one by one (a re-import is mostly
    "unchanged"). A file naming one item twice is refused, wherever the two lines are.
    """

    def __init__(self, context: ImportContext):
        self.context = context
        self.pending: list[tuple[rec.Item, str]] = []
        self.slices: dict[str, Slice] = {
            s.name: s for s in Slice.objects.filter(project=context.project)
        }
        self.seen = PkSet()  # items this file already named: a second mention is an error
        self.valid_names: set[str] = set()  # slice names checked, not yet created

    def add(self, record: rec.Item, where: str) -> None:
        self._check(record, where)
        self.pending.append((record, where))
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        project, file = self.context.project, self.context.file
        ids = [r.item_id for r, _ in self.pending]
        # order_by(): Item's default ordering (project name, id) joins the project and makes
        # SQLite walk every item of the project instead of the (project, external_id) index.
        found = Item.objects.filter(project=project, external_id__in=ids).order_by()
        existing = {i.external_id: i for i in found.prefetch_related("slices", "sources")}
        new: list[tuple[rec.Item, str]] = []
        batch: dict[str, str] = {}
        for record, where in self.pending:
            if record.item_id in batch:
                self._twice(record, where, batch[record.item_id])
            batch[record.item_id] = where
            item = existing.get(record.item_id)
            if item is None:
                new.append((record, where))
                continue
            if not self.seen.add(item.pk):
                self._twice(record, where, _first_mention(item, file))
            self.context.items_named([item.pk])
            self._update(item, record, where)
        if new:
            self._create(new)
        self.pending = []

    def _check(self, record: rec.Item, where: str) -> None:
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

    def _twice(self, record: rec.Item, where: str, first: str) -> None:
        raise FormatError(
            f"item {record.item_id!r} appears twice (also on {first})",
            file=self.context.file,
            record=where,
            path="$.item_id",
        )

    def _create(self, new: list[tuple[rec.Item, str]]) -> None:
        context, project = self.context, self.context.project
        now = timezone.now()
        insert_rows(
            Item,
            ("external_id", "title", "input", "output", "expected", "metadata"),
            (_item_values(record) for record, _ in new),
            project_id=project.pk,
            status=ItemStatus.RESOLVED,
            overlap=None,
            created_at=now,
            updated_at=now,
        )
        created = Item.objects.filter(project=project, external_id__in=[r.item_id for r, _ in new])
        pks = dict(created.order_by().values_list("external_id", "pk"))
        for pk in pks.values():
            self.seen.add(pk)
        context.items_named(pks.values())
        insert_rows(
            Item.slices.through,
            ("item_id", "slice_id"),
            (
                (pks[record.item_id], self._slice(name).pk)
                for record, _ in new
                for name in dict.fromkeys(record.slices)
            ),
        )
        insert_rows(
            Event,
            ("item_id", "data"),
            (
                (pks[record.item_id], {"file": context.file, "record": where})
                for record, where in new
            ),
            actor_id=context.actor.pk if context.actor else None,
            kind=EventKind.IMPORTED,
            created_at=now,
        )
        for record, where in new:
            if record.evidence:
                self._attach_evidence(pks[record.item_id], record, where, have=set())
        context.counts["items_created"] += len(new)

    def _update(self, item: Item, record: rec.Item, where: str) -> None:
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
        if changed:
            for key in changed:
                setattr(item, key, fields[key])
            item.save(update_fields=[*changed, "updated_at"])
        if slices_added:
            item.slices.add(*(self._slice(name) for name in slices_added))
        if evidence_added:
            self._attach_evidence(item.pk, record, where, have=have)
        # The previous values stay in the timeline: an update never loses data silently.
        data: dict[str, Any] = {"file": self.context.file, "record": where, "previous": changed}
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

    def _attach_evidence(self, item_pk: int, record: rec.Item, where: str, *, have: set) -> None:
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


def _item_fields(record: rec.Item) -> dict[str, Any]:
    return {
        "title": record.item_id[:300],
        "input": record.input,
        "output": record.output,
        "expected": record.reference,
        "metadata": {**record.metadata, **(record.model_extra or {})},
    }


def _item_values(record: rec.Item) -> tuple:
    """A new item's row for `insert_rows` (same values as `_item_fields`)."""
    metadata = {**record.metadata, **record.model_extra} if record.model_extra else record.metadata
    return (
        record.item_id,
        record.item_id[:300],
        record.input,
        record.output,
        record.reference,
        metadata,
    )


class _Records:
    """The shared part of the JSONL and CSV importers: records to items and sinks."""

    def __init__(self, context: ImportContext):
        self.context = context
        self.schemas = record_schemas()

    def records(self, path: Path) -> Iterator[tuple[rec.Record, str]]:
        raise NotImplementedError

    def validate(self, path: Path) -> None:
        for _ in self.records(path):
            pass

    def write(self, path: Path) -> None:
        context = self.context
        batch = ItemBatch(context)
        sinks: dict[type[RecordSink], RecordSink] = {}
        for record, where in self.records(path):
            context.tick()
            if isinstance(record, rec.Item):
                batch.add(record, where)
                continue
            batch.flush()
            owner = _SINKS[record.type]
            sink = sinks.get(owner) or sinks.setdefault(owner, owner(context))
            sink.add(record, where)
        batch.flush()
        for sink in sinks.values():
            sink.finish()


@register_importer
class JsonlImporter(_Records):
    sniffer = Sniffer("jsonl", lambda obj: isinstance(obj.get("type"), str), lines=True)

    def records(self, path: Path) -> Iterator[tuple[rec.Record, str]]:
        with path.open("rb") as stream:
            for line, obj in iter_json_lines(stream, file=self.context.file):
                where = f"line {line}"
                record = rec.parse_record(
                    obj, schemas=self.schemas, file=self.context.file, record=where
                )
                yield record, where


@register_importer
class CsvImporter(_Records):
    """Typed records of one kind, or a §3 `path,expected` table."""

    sniffer = Sniffer("csv", lambda obj: False, container="csv")

    def _is_reference(self, path: Path) -> bool:
        with path.open("rb") as stream:
            head = stream.read(HEAD_BYTES)
        return csv_flavour(head) == "reference" or _reference_missing_a_column(head, self.context)

    def records(self, path: Path) -> Iterator[tuple[rec.Record, str]]:
        with path.open("rb") as stream:
            records = rec.iter_records_csv(
                stream,
                file=self.context.file,
                schemas=self.schemas,
                kind=self.context.options.get("kind"),
            )
            yield from ((r, f"row {n}") for n, r in enumerate(records, start=1))

    def validate(self, path: Path) -> None:
        if self._is_reference(path):
            _reference_rows(path, self.context)
        else:
            super().validate(path)

    def write(self, path: Path) -> None:
        if self._is_reference(path):
            _import_reference_csv(path, self.context)
        else:
            super().write(path)


def _reference_missing_a_column(head: bytes, context: ImportContext) -> bool:
    """A `path` column, no `type` column and no --kind: a §3 table with a column missing.

    Its reader then names the missing column (e.g. `expected_value`), instead of the records
    reader asking for a `type` column the table was never meant to have.
    """
    if context.options.get("kind"):
        return False
    line = head.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()[:1]
    names = {h.strip().lower() for h in next(csv.reader(line), [])}
    return "type" not in names and bool(names & set(COLUMN_ALIASES["path"]))


def _reference_rows(path: Path, context: ImportContext) -> dict[str, list[dict]]:
    """§3 rows grouped by case."""
    by_case: dict[str, list[dict]] = {}
    with path.open("rb") as stream:
        case_id = context.options.get("case_id")
        for row in iter_reference_csv(stream, file=context.file, case_id=case_id):
            context.tick()
            by_case.setdefault(row.case_id, []).append(
                {"path": row.path, "expected_value": row.expected_value}
            )
    return by_case


def _import_reference_csv(path: Path, context: ImportContext) -> None:
    """§3 rows grouped by case become generated references (ground truth needs an approval)."""
    for case_id, rows in _reference_rows(path, context).items():
        rows = canonical_rows(rows)
        item, created = Item.objects.get_or_create(
            project=context.project,
            external_id=case_id,
            defaults={"title": case_id, "status": ItemStatus.RESOLVED},
        )
        context.items_named([item.pk])
        _, changed = generated_add(item, rows, actor=context.actor, source_name=context.file)
        if not changed:
            context.counts["items_unchanged"] += 1
            continue
        event_record(
            item=item,
            actor=context.actor,
            kind=EventKind.IMPORTED,
            data={"file": context.file, "rows": len(rows)},
        )
        context.counts["references"] += 1
        context.counts["items_created" if created else "items_updated"] += 1
