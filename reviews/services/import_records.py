"""Importing FORMATS §4 typed records (JSONL, or CSV of one kind) and §3 `path,expected` tables.

Items are written in batches (one query per batch for lookups, one bulk insert): a 100k-item
file streams through in constant memory at bulk-insert speed. Other record kinds (criteria,
verdicts, human labels, pairwise verdicts) are handled by whoever registered them (`judging`);
pending items are flushed first, so records may refer to items earlier in the same file.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from reviews.formats import records as rec
from reviews.formats.canonical import canonical_rows, rows_sha256
from reviews.formats.detect import csv_flavour
from reviews.formats.errors import FormatError, iter_json_lines
from reviews.formats.reference import COLUMN_ALIASES, iter_reference_csv
from reviews.models import Authority, Event, Item, ItemSource, ItemStatus, Reference, Slice
from reviews.services.documents import document_for_bytes, read_evidence
from reviews.services.evidence import EvidenceError
from reviews.services.imports import ImportContext, register_importer
from reviews.services.references import latest_reference, next_version

BATCH = 1000
RecordHandler = Callable[[Any, ImportContext, str], None]  # (record, context, "line N")
_RECORD_HANDLERS: dict[str, RecordHandler] = {}


def register_record_handler(kind: str, handler: RecordHandler) -> None:
    _RECORD_HANDLERS[kind] = handler


class ItemBatch:
    """Item records waiting to be written together."""

    def __init__(self, context: ImportContext):
        self.context = context
        self.pending: list[tuple[rec.Item, str]] = []
        self.slices: dict[str, Slice] = {
            s.name: s for s in Slice.objects.filter(project=context.project)
        }

    def add(self, record: rec.Item, where: str) -> None:
        self.pending.append((record, where))
        if len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        project = self.context.project
        ids = [r.item_id for r, _ in self.pending]
        existing = {i.external_id: i for i in Item.objects.filter(project=project, external_id__in=ids)}
        new, seen = [], {}
        for record, where in self.pending:
            if record.item_id in seen:
                raise FormatError(
                    f"item {record.item_id!r} appears twice (also on {seen[record.item_id]})",
                    file=self.context.file, record=where, path="$.item_id",
                )
            seen[record.item_id] = where
            if record.item_id in existing:
                self._update(existing[record.item_id], record)
            else:
                new.append(_new_item(project, record))
        Item.objects.bulk_create(new, batch_size=BATCH)
        created = {i.external_id: i for i in Item.objects.filter(project=project, external_id__in=[n.external_id for n in new])}
        self._link_slices(created)
        self._attach_evidence(created)
        Event.objects.bulk_create(
            Event(item=item, actor=self.context.actor, kind="imported", data={"file": self.context.file})
            for item in created.values()
        )
        self.context.counts["items_created"] += len(new)
        self.pending = []

    def _update(self, item: Item, record: rec.Item) -> None:
        fields = _item_fields(record)
        changed = {k: getattr(item, k) for k, v in fields.items() if getattr(item, k) != v}
        if not changed:
            self.context.counts["items_unchanged"] += 1
            return
        for key in changed:
            setattr(item, key, fields[key])
        item.save(update_fields=[*changed, "updated_at"])
        # The previous values stay in the timeline: an update never loses data silently.
        Event.objects.create(
            item=item, actor=self.context.actor, kind="updated",
            data={"file": self.context.file, "previous": changed},
        )
        self.context.counts["items_updated"] += 1

    def _slice(self, name: str) -> Slice:
        if name not in self.slices:
            self.slices[name] = Slice.objects.create(project=self.context.project, name=name)
        return self.slices[name]

    def _link_slices(self, created: dict[str, Item]) -> None:
        links = [
            Item.slices.through(item_id=created[r.item_id].pk, slice_id=self._slice(name).pk)
            for r, _ in self.pending
            if r.item_id in created
            for name in dict.fromkeys(r.slices)
        ]
        Item.slices.through.objects.bulk_create(links, batch_size=BATCH)

    def _attach_evidence(self, created: dict[str, Item]) -> None:
        base = self.context.base_dir
        for record, where in self.pending:
            if record.item_id not in created or not record.evidence:
                continue
            for index, relative in enumerate(record.evidence):
                path = f"$.evidence[{index}]"
                if base is None:
                    raise FormatError("evidence files cannot be read from here",
                                      file=self.context.file, record=where, path=path)
                document = _document(base, relative, self.context, where, path)
                ItemSource.objects.create(
                    item=created[record.item_id], artifact_id=relative, document=document,
                    path=relative, position=index,
                )


def _document(base: Path, relative: str, context: ImportContext, where: str, path: str):
    from reviews.formats.review_file import resolve_evidence_path

    try:
        target = resolve_evidence_path(base, relative)
        if not target.is_file():
            raise FormatError(f"evidence file {relative!r} not found", file=context.file,
                              record=where, path=path)
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


def _new_item(project, record: rec.Item) -> Item:
    # Generic items carry no disputed fields: they wait for criterion questions or verdicts.
    return Item(project=project, external_id=record.item_id, status=ItemStatus.RESOLVED,
                **_item_fields(record))


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
            raise FormatError(f"records of type {record.type!r} cannot be imported here",
                              file=context.file, record=where, path="$.type")
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
        for row in iter_reference_csv(stream, file=context.file, case_id=context.options.get("case_id")):
            context.tick()
            by_case.setdefault(row.case_id, []).append(
                {"path": row.path, "expected_value": row.expected_value}
            )
    for case_id, rows in by_case.items():
        rows = canonical_rows(rows)
        item, created = Item.objects.get_or_create(
            project=context.project, external_id=case_id,
            defaults={"title": case_id, "status": ItemStatus.RESOLVED},
        )
        previous = latest_reference(item, Authority.GENERATED)
        sha = rows_sha256(rows)
        if previous is not None and previous.sha256 == sha:
            context.counts["items_unchanged"] += 1
            continue
        Reference.objects.create(
            item=item, authority=Authority.GENERATED, version=next_version(item),
            supersedes=previous, rows=rows, sha256=sha, source_name=context.file,
            created_by=context.actor,
        )
        Event.objects.create(item=item, actor=context.actor, kind="imported",
                             data={"file": context.file, "rows": len(rows)})
        context.counts["references"] += 1
        context.counts["items_created" if created else "items_updated"] += 1


register_importer("jsonl", import_jsonl_path)
register_importer("csv", import_csv_path)
