"""Importing FORMATS §4 typed records (JSONL, or CSV of one kind) and §3 `path,expected` tables.

Items are written by `item_batch.ItemBatch` (one lookup query, then one `executemany` INSERT per
table: items, slice links, events): a 100k-item file streams through in constant memory. Other
record kinds (criteria, verdicts, human labels, pairwise verdicts) belong to a `RecordSink`
another app registered (`judging`): the sink brings their schemas, gets their records in file
order and is told when the file ends; pending items are flushed first, so records may refer to
items earlier in the same file.
"""

from __future__ import annotations

import contextvars
import csv
import marshal
import pickle
import queue
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Protocol

from reviews.formats import records as rec
from reviews.formats.canonical import canonical_rows
from reviews.formats.detect import HEAD_BYTES, Sniffer, csv_flavour
from reviews.formats.errors import iter_json_lines
from reviews.formats.reference import COLUMN_ALIASES, iter_reference_csv
from reviews.models import (
    EventKind,
    Item,
    ItemStatus,
)
from reviews.services.approval.ground_truth import generated_add
from reviews.services.events import event_record
from reviews.services.imports.approved import csv_signature_notes
from reviews.services.imports.item_batch import ItemBatch, ItemRow
from reviews.services.imports.pipeline import ImportContext
from reviews.services.imports.registry import ImportKind, register_import, registered


class RecordSink(Protocol):
    """Another app's record kinds in a JSONL/CSV import. One instance per import, made when
    the first of its records comes: its caches and queued rows are its own."""

    schemas: ClassVar[rec.Schemas]  # the record kinds it takes, with their schemas

    def __init__(self, context: ImportContext) -> None: ...

    def add(self, record: rec.Record, where: str) -> None:
        """One record (checked against its schema), `where` is "line N"."""

    def finish(self) -> None:
        """The file ended: write what is queued, add notes to the report."""

    # Optional: `spool_rows`, {kind: function} turning a checked record of that kind into a
    # tuple of plain values (str, numbers, None, bool, and tuples, lists and dicts of them): the
    # validate step keeps that instead of the pickled record, and `add` gets the tuple back.
    # Pickling a record and loading it again cost more than checking it (issue #33).


def record_schemas() -> rec.Schemas:
    """Every record kind a JSONL/CSV import reads, with its schema (reviews' `item` is written
    by the import's ItemBatch, every other kind by the sink that registered it)."""
    return {kind: owner.schemas[kind] for kind, owner in registered(ImportKind.RECORDS).items()}


class _Spool:
    """The checked records of the validate step, kept in an unnamed temporary file for the
    write step, so each line is parsed and validated once (the second parse was a sixth of an
    import's time). Chunks of marshalled tuples: memory holds one chunk; the file is ours."""

    CHUNK = 1000

    def __init__(self, rows: dict[str, Callable[[rec.Record], tuple]]) -> None:
        # Closed by entries(); unnamed, so nothing is left behind if the import stops.
        self.file = tempfile.TemporaryFile(prefix="evalsite-import-")  # noqa: SIM115
        self.chunk: list[tuple] = []
        self.rows = rows  # kind -> its sink's `spool_rows` function

    def add(self, record: rec.Record, where: str) -> None:
        # Items, and the kinds a sink gives a `spool_rows` function, as a tuple of plain values
        # (marshal is 4x faster than pickle for them); other kinds, rare, as the pickled record.
        if isinstance(record, rec.Item):
            self.chunk.append(("item", where, tuple(ItemRow.of(record))))
        elif row := self.rows.get(record.type):
            self.chunk.append((record.type, where, row(record)))
        else:
            self.chunk.append((record.type, where, pickle.dumps(record)))
        if len(self.chunk) >= self.CHUNK:
            self._dump()

    def _dump(self) -> None:
        if self.chunk:
            # Length first: marshal.load from a file reads in many small calls; one read of the
            # whole chunk and marshal.loads is ten times faster.
            data = marshal.dumps(self.chunk)
            self.file.write(len(data).to_bytes(8, "little") + data)
            self.chunk = []

    def entries(self) -> Iterator[tuple[str, str, Any]]:
        """(kind, where, an ItemRow, a sink's tuple or the record), in file order; then
        closed."""
        self._dump()
        self.file.seek(0)
        with self.file:
            while size := int.from_bytes(self.file.read(8), "little"):
                yield from _payloads(marshal.loads(self.file.read(size)))  # noqa: S302 (ours)


def _payloads(chunk: list[tuple]) -> Iterator[tuple[str, str, Any]]:
    """A spooled chunk's entries as the write step takes them."""
    for kind, where, payload in chunk:
        if kind == "item":
            yield kind, where, ItemRow._make(payload)
        elif type(payload) is tuple:
            yield kind, where, payload
        else:
            yield kind, where, pickle.loads(payload)  # noqa: S301 (written by this import)


class _Stopped(Exception):
    """The write step ended first (it failed): the validating thread stops."""


class _LiveSpool(_Spool):
    """The validate step run beside the write step, for a streamed import written in ONE
    transaction (PostgreSQL): a thread parses and checks the body into chunks on a short
    queue while this thread writes the chunks before them, so the server stores batch n
    while the body's batch n+1 is parsed (in turn, the server sat idle through the whole
    validate step: bench/README.md). A bad record raises here as it did there, naming its
    line, before the commit: the transaction rolls back and nothing is written. Memory holds
    the queue's few chunks."""

    # Records parsed ahead of the write, at most: a little more than one write batch
    # (item_batch.BATCH), so the writer never waits for the parser after a batch's COPYs (with
    # 4 chunks it waited 0.6 s of a 100k-item import). A few MB.
    CHUNK, DEPTH = 200, 24

    def __init__(self, rows: dict, records: Iterator[tuple[rec.Record, str]]) -> None:
        self.chunk = []
        self.rows = rows
        self.queue: queue.Queue = queue.Queue(maxsize=self.DEPTH)
        self.stopped = threading.Event()
        # In the caller's context: the import's limits (`limits.overridden`) hold there too.
        run = contextvars.copy_context().run
        self.thread = threading.Thread(target=run, args=(self._fill, records), daemon=True)
        self.thread.start()

    def _fill(self, records: Iterator[tuple[rec.Record, str]]) -> None:
        try:
            for record, where in records:
                self.add(record, where)
            self._dump()
            self._put(None)  # the end of the body
        except _Stopped:
            return
        except BaseException as error:  # raised again by `entries`, in the importing thread
            try:
                self._put(error)
            except _Stopped:
                return

    def _dump(self) -> None:
        if self.chunk:
            self._put(self.chunk)
            self.chunk = []

    def _put(self, item: Any) -> None:
        while not self.stopped.is_set():
            try:
                return self.queue.put(item, timeout=0.1)
            except queue.Full:
                continue
        raise _Stopped

    def entries(self) -> Iterator[tuple[str, str, Any]]:
        try:
            while (chunk := self.queue.get()) is not None:
                if isinstance(chunk, BaseException):
                    raise chunk
                yield from _payloads(chunk)
        finally:
            self.stop()

    def stop(self) -> None:
        """Written or failed: the thread stops at its next chunk. It reads the request's
        body, so it ends before the request does."""
        self.stopped.set()
        self.thread.join()


class _Records:
    """The shared part of the JSONL and CSV importers: records to items and sinks."""

    def __init__(self, context: ImportContext):
        self.context = context
        self.schemas = record_schemas()
        self.owners = registered(ImportKind.RECORDS)  # record kind -> who writes it
        self.spool: _Spool | None = None

    def records(self, path: Path) -> Iterator[tuple[rec.Record, str]]:
        raise NotImplementedError

    def validate(self, path: Path) -> None:
        self._check(self.records(path))

    def _check(self, records: Iterator[tuple[rec.Record, str]], *, beside: bool = False) -> None:
        """Check every record into the spool; `beside`: in a thread, beside the write step
        (`_LiveSpool`)."""
        rows = {
            kind: rows[kind]
            for kind, owner in self.owners.items()
            if kind in (rows := getattr(owner, "spool_rows", {}))
        }
        if beside:
            self.spool = _LiveSpool(rows, records)
            return
        spool = _Spool(rows)
        for record, where in records:
            spool.add(record, where)
        self.spool = spool

    def close(self) -> None:
        """After the write step, whatever its outcome: a validating thread is stopped."""
        if isinstance(self.spool, _LiveSpool):
            self.spool.stop()

    def write(self, path: Path | None) -> None:
        """Write what `validate` checked (its spool: `path` is not read again)."""
        assert self.spool is not None, "write() runs after validate()"
        context = self.context
        batch = ItemBatch(context)
        sinks: dict[type[RecordSink], RecordSink] = {}
        try:
            for kind, where, payload in self.spool.entries():
                context.tick()
                if kind == "item":
                    batch.add(payload, where)
                    continue
                batch.flush()
                batch.settle()  # the sink writes on its own: the items before are stored
                owner = self.owners[kind]
                sink = sinks.get(owner) or sinks.setdefault(owner, owner(context))
                sink.add(payload, where)
            batch.flush()
            batch.settle()
        finally:
            batch.close()
        for sink in sinks.values():
            sink.finish()


class JsonlImporter(_Records):
    sniffer = Sniffer("jsonl", lambda obj: isinstance(obj.get("type"), str), lines=True)
    rank = 1

    def records(self, path: Path) -> Iterator[tuple[rec.Record, str]]:
        with path.open("rb") as stream:
            yield from self._read(stream)

    def validate_stream(self, stream: BinaryIO, *, beside: bool = False) -> None:
        """Check records as they are read from `stream` (`imports.stream_import`); `beside`:
        while the write step writes those before them (one transaction: `_LiveSpool`)."""
        self._check(self._read(stream), beside=beside)

    def _read(self, stream: BinaryIO) -> Iterator[tuple[rec.Record, str]]:
        for line, obj in iter_json_lines(stream, file=self.context.file):
            where = f"line {line}"
            record = rec.parse_record(
                obj, schemas=self.schemas, file=self.context.file, record=where
            )
            yield record, where


class CsvImporter(_Records):
    """Typed records of one kind, or a §3 `path,expected` table."""

    sniffer = Sniffer("csv", lambda obj: False, container="csv")
    rank = 2

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
    """§3 rows grouped by case become generated references (ground truth needs an approval);
    with an export's signature file beside it, each case's note says whether it verifies."""
    context.notes += csv_signature_notes(path, project=context.project, name=context.file)
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


register_import(ImportKind.FORMAT, JsonlImporter.sniffer.format, JsonlImporter)
register_import(ImportKind.FORMAT, CsvImporter.sniffer.format, CsvImporter)
for _kind in ItemBatch.schemas:
    register_import(ImportKind.RECORDS, _kind, ItemBatch)
