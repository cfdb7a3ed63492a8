"""Importing FORMATS §4 typed records (JSONL, or CSV of one kind) and §3 `path,expected` tables.

Items are written in batches of BATCH (one lookup query, then one `executemany` INSERT per
table: items, slice links, events): a 100k-item file streams through in constant memory. Other
record kinds (criteria, verdicts, human labels, pairwise verdicts) are handled by whoever
registered them (`judging`); pending items are flushed first, so records may refer to items
earlier in the same file.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from reviews.evidence import EvidenceError
from reviews.formats import records as rec
from reviews.formats.canonical import canonical_rows, rows_sha256
from reviews.formats.detect import csv_flavour
from reviews.formats.errors import FormatError, iter_json_lines
from reviews.formats.reference import COLUMN_ALIASES, iter_reference_csv
from reviews.models import Authority, Event, Item, ItemSource, ItemStatus, Reference, Slice
from reviews.services.bulk_insert import PkSet, insert_rows
from reviews.services.documents import document_for_bytes, read_evidence
from reviews.services.imports import ImportContext, register_importer
from reviews.services.references import latest_reference, next_version

BATCH = 1000
_ID_MAX = Item._meta.get_field("external_id").max_length
_SLICE_NAME = Slice._meta.get_field("name")
RecordHandler = Callable[[Any, ImportContext, str], None]  # (record, context, "line N")
_RECORD_HANDLERS: dict[str, RecordHandler] = {}


def register_record_handler(kind: str, handler: RecordHandler) -> None:
    _RECORD_HANDLERS[kind] = handler


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
            kind="imported",
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
        Event.objects.create(item=item, actor=self.context.actor, kind="updated", data=data)
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


def _dispatch(records: Iterator[tuple[Any, str]], context: ImportContext) -> None:
    batch = ItemBatch(context)
    for record, where in records:
        context.tick()
        if isinstance(record, rec.Item):
            batch.add(record, where)
            continue
        batch.flush()
        handler = _RECORD_HANDLERS.get(record.type)
        if handler is None:
            raise FormatError(
                f"records of type {record.type!r} cannot be imported here",
                file=context.file,
                record=where,
                path="$.type",
            )
        handler(record, context, where)
    batch.flush()


def _jsonl_records(path: Path, context: ImportContext) -> Iterator[tuple[Any, str]]:
    with path.open("rb") as stream:
        for line, obj in iter_json_lines(stream, file=context.file):
            where = f"line {line}"
            yield rec.parse_record(obj, file=context.file, record=where), where


def import_jsonl_path(path: Path, context: ImportContext) -> None:
    _dispatch(_jsonl_records(path, context), context)


def import_csv_path(path: Path, context: ImportContext) -> None:
    with path.open("rb") as stream:
        head = stream.read(64 * 1024)
    if csv_flavour(head) == "reference" or _reference_missing_a_column(head, context):
        _import_reference_csv(path, context)
        return
    with path.open("rb") as stream:
        records = rec.iter_records_csv(stream, file=context.file, kind=context.options.get("kind"))
        _dispatch(((r, f"row {n}") for n, r in enumerate(records, start=1)), context)


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


def _import_reference_csv(path: Path, context: ImportContext) -> None:
    """§3 rows grouped by case become generated references (ground truth needs an approval)."""
    by_case: dict[str, list[dict]] = {}
    with path.open("rb") as stream:
        case_id = context.options.get("case_id")
        for row in iter_reference_csv(stream, file=context.file, case_id=case_id):
            context.tick()
            by_case.setdefault(row.case_id, []).append(
                {"path": row.path, "expected_value": row.expected_value}
            )
    for case_id, rows in by_case.items():
        rows = canonical_rows(rows)
        item, created = Item.objects.get_or_create(
            project=context.project,
            external_id=case_id,
            defaults={"title": case_id, "status": ItemStatus.RESOLVED},
        )
        previous = latest_reference(item, Authority.GENERATED)
        sha = rows_sha256(rows)
        if previous is not None and previous.sha256 == sha:
            context.counts["items_unchanged"] += 1
            continue
        Reference.objects.create(
            item=item,
            authority=Authority.GENERATED,
            version=next_version(item),
            supersedes=previous,
            rows=rows,
            sha256=sha,
            source_name=context.file,
            created_by=context.actor,
        )
        Event.objects.create(
            item=item,
            actor=context.actor,
            kind="imported",
            data={"file": context.file, "rows": len(rows)},
        )
        context.counts["references"] += 1
        context.counts["items_created" if created else "items_updated"] += 1


register_importer("jsonl", import_jsonl_path)
register_importer("csv", import_csv_path)
