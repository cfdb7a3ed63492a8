"""One import pipeline: the CLI, the upload form and the API all call `file_import` (the API's
streamed JSONL body calls `stream_import`, the same steps over a request stream).

Every format is an importer class in the import registry (`registry.py: register_import`); the
pipeline runs it in four steps:

1. **detect**: the format is chosen from the name and first bytes, each importer saying what
   its files look like (`Importer.sniffer`);
2. **validate**: `importer.validate(path)` parses and checks the whole file, writing nothing,
   outside any transaction (a refused file never takes the write lock). A streamed body on
   PostgreSQL is checked beside step 3 instead, by a thread (`records._LiveSpool`): the
   server stores what was checked while the rest is parsed, and a refused record rolls the
   one transaction back;
3. **write**: `importer.write(path)` inside ONE transaction: the first problem raises
   `FormatError` and nothing is written (evidence files stored on the way are removed again).
   On SQLite an importer with `write_staged` writes new items in short transactions under a
   holding project instead and publishes them in a quick last one (`import_staging.py`), so
   a long import never holds the database's one write lock for long; all-or-nothing holds;
4. **report**: counts and notes, gathered on the `ImportContext`, become an `ImportReport`.

An importer is created per import and keeps its own state; the context holds only what every
importer shares. `reviews` registers review files and JSONL/CSV records; `judging` registers
TextFlow, its record kinds and its question source through the same `register_import`, so
reviews never imports judging.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, ClassVar, Protocol

from django.db import connection, transaction

from evalsite.planner_statistics import planner_statistics_refresh
from reviews.evidence import EvidenceError
from reviews.formats.detect import Sniffer
from reviews.formats.errors import FormatError
from reviews.models import Project
from reviews.services.files.documents import StoredFiles
from reviews.services.files.gc import evidence_lock
from reviews.services.imports.bulk_insert import PkSet
from reviews.services.imports.choice import (  # noqa: F401 (step 1, re-exported)
    FILES,
    choose_format,
    detect,
    import_formats,
    importers,
)
from reviews.services.imports.questions import questions_add_to_items, resolve, split_requests
from reviews.services.imports.staging import (
    Staging,
    holding_discard,
    holding_open,
    holdings_abandoned_discard,
    staged_writes,
)
from reviews.services.projects.data import project_data_touch
from reviews.signals import project_data_changed


class ImportFailed(Exception):
    """The file was refused; nothing was written."""

    def __init__(self, error: FormatError):
        super().__init__(str(error))
        self.error = error


@dataclass
class ImportContext:
    """What every importer needs besides the file: who, where, options, and bookkeeping."""

    actor: Any
    project: Project
    file: str  # the name errors use
    base_dir: Path | None  # evidence paths are relative to this folder (None: no evidence)
    options: dict[str, Any] = field(default_factory=dict)
    written: StoredFiles = field(default_factory=StoredFiles)
    counts: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    progress: Callable[[int], None] | None = None
    records_seen: int = 0
    items: set[int] = field(default_factory=set)  # items the file named (see items_named)
    every_item: bool = False  # keep every pk (questions to add), else the first few (memory)
    created: PkSet = field(default_factory=PkSet)  # items this import created (no questions yet)
    asked: list[str] = field(default_factory=list)  # questions for every item, "kind:name"
    staging: Staging | None = None  # on SQLite: where new items wait until published

    @property
    def new_items_project(self) -> Project:
        """Where an item the project lacks is created: the holding project while staged."""
        staged = self.staging is not None and not self.staging.published
        return self.staging.holding if staged else self.project

    def items_named(self, pks: Iterable[int]) -> None:
        """Note the items the file named: all of them when questions are to be added to them,
        else only the first SHOWN_ITEMS the result page links to (memory stays flat)."""
        if self.every_item:
            self.items.update(pks)
            return
        for pk in pks:
            if len(self.items) >= SHOWN_ITEMS:
                return
            self.items.add(pk)

    def tick(self) -> None:
        """Count one record; report progress every 500 (cheap enough for 100k-line files)."""
        self.records_seen += 1
        if self.progress is not None and self.records_seen % 500 == 0:
            self.progress(self.records_seen)


class Importer(Protocol):
    """One import format. A new instance per import: its state is its own."""

    sniffer: ClassVar[Sniffer]  # the format's name and what its files look like
    rank: ClassVar[int]  # where the format stands in the choices offered (lowest first)

    def __init__(self, context: ImportContext) -> None: ...

    def validate(self, path: Path) -> None:
        """Parse and check the whole file; write nothing (runs outside the transaction)."""

    def write(self, path: Path | None) -> None:
        """Write the file's rows (runs inside the import's one transaction); `path` is None
        for a streamed import, whose importer keeps what `validate_stream` read."""

    # Optional: `close()`, called after the write step whatever its outcome.
    # Optional: `write_staged(path, staging, finish)` writes new items through `staging` in
    # short transactions, then calls `staging.publish` and `finish()` in one last transaction.


# What the report's counts mean, in words (the result page shows these, not the keys).
COUNT_WORDS = {
    "items_created": "new items",
    "items_updated": "items updated",
    "items_unchanged": "items unchanged",
    "items_revised": "of them with changed content (a new revision)",
    "questions": "questions added",
    "documents": "evidence files stored",
    "references": "generated reference versions",
    "ground_truth": "approved references imported",
    "criteria": "criteria defined",
    "criteria_unchanged": "criteria already defined",
    "judges": "judges added",
    "verdicts": "verdicts",
    "verdicts_unchanged": "verdicts already there",
    "pairwise_verdicts": "of them pairwise",
    "human_labels": "human labels",
    "human_labels_unchanged": "human labels already there",
    "cancelled_annotations": "cancelled (skipped) annotations: not labels",
    "empty_annotations": "empty annotations: not labels",
}
SHOWN_ITEMS = 20  # items the result page links to by name


def count_rows(counts: dict[str, int]) -> list[tuple[str, int]]:
    """The report's counts as (words, number), in a fixed order."""
    known = [(COUNT_WORDS[k], counts[k]) for k in COUNT_WORDS if counts.get(k)]
    return known + [(k.replace("_", " "), n) for k, n in counts.items() if k not in COUNT_WORDS]


@dataclass(frozen=True)
class ImportReport:
    file: str
    format: str
    counts: dict[str, int]
    notes: list[str]
    items: list[int] = field(default_factory=list)  # the first SHOWN_ITEMS items imported

    def summary(self) -> str:
        items = sum(
            self.counts.get(k, 0) for k in ("items_created", "items_updated", "items_unchanged")
        )
        extra = ", ".join(
            f"{n} {one if n == 1 else many}"
            for key, one, many in (
                ("verdicts", "verdict", "verdicts"),
                ("human_labels", "human label", "human labels"),
                ("criteria", "criterion", "criteria"),
                ("references", "reference", "references"),
            )
            if (n := self.counts.get(key))
        )
        unchanged = self.counts.get("items_unchanged", 0)
        revised = self.counts.get("items_revised", 0)
        kinds = [f"{unchanged} unchanged"] if unchanged else []
        kinds += [f"{revised} with changed content"] if revised else []
        line = f"imported {_plural(items, 'item')}" + (f" ({', '.join(kinds)})" if kinds else "")
        line += f", {_plural(self.counts.get('questions', 0), 'question')}"
        return f"{line}{', ' + extra if extra else ''}, 0 errors"

    def as_dict(self) -> dict[str, Any]:
        """What an import job keeps and the API answers, its one-line summary included."""
        return {
            "file": self.file,
            "format": self.format,
            "counts": self.counts,
            "notes": self.notes,
            "items": self.items,
            "summary": self.summary(),
        }


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _question_requests(context: ImportContext) -> list[str]:
    return split_requests(
        [*context.project.import_questions, *context.options.get("questions", [])]
    )


def _questions_on_import(context: ImportContext) -> None:
    """The questions the project and the caller ask for, on every item the file named (resolved
    after the rows: the file may define the criterion it asks about)."""
    if context.asked and context.items:
        specs = resolve(context.project, context.asked, file=context.file)
        added = questions_add_to_items(
            context.items, specs, actor=context.actor, file=context.file, fresh=context.created
        )
        context.counts["questions"] += added


def import_options(**given: Any) -> dict[str, Any]:
    """An import's options as a caller collected them (command line, form, API) without the
    ones left empty: the importers read a missing option as its default."""
    return {name: value for name, value in given.items() if value}


def file_import(
    *,
    actor,
    project: Project,
    path: Path | Sequence[Path],
    name: str | None = None,
    format: str | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    on_store: Callable[[str], None] | None = None,
) -> ImportReport:
    """Import `path` into `project` in one transaction; raises ImportFailed and writes nothing.
    Several paths, or a folder, are images and PDFs (format `files`: an item each).
    `on_store` is told each evidence file stored (a background job journals them)."""
    if not isinstance(path, Path) and len(path) == 1:
        path = path[0]
    several = not isinstance(path, Path)
    name = name or (f"{len(path)} files" if several else path.name)
    context = ImportContext(
        actor=actor,
        project=project,
        file=name,
        base_dir=None if several else path.parent,
        options=options or {},
        progress=progress,
        written=StoredFiles(on_store=on_store),
    )

    def validate() -> tuple[str, Importer]:
        chosen = choose_format(path, name=name, requested=format)
        importer = importers()[chosen](context)
        importer.validate(path)
        return chosen, importer

    return _run(context, validate, path)


def stream_import(
    *,
    actor,
    project: Project,
    stream: BinaryIO,
    name: str,
    options: dict[str, Any] | None = None,
) -> ImportReport:
    """Import a JSONL body as it arrives (the API's one-request import), in one transaction.

    The validate step parses and checks the stream line by line as it arrives, keeping the
    checked records in a temporary file (a bad record is refused as soon as it arrives, and
    memory stays flat whatever the body's size); the write step then writes them. Evidence
    files cannot come this way (no folder)."""
    context = ImportContext(
        actor=actor, project=project, file=name, base_dir=None, options=options or {}
    )

    def validate() -> tuple[str, Importer]:
        importer = importers()["jsonl"](context)
        # One transaction (PostgreSQL): the body is checked beside the write, which the
        # rollback undoes if a record is refused. SQLite's staged writes validate first.
        importer.validate_stream(stream, beside=not staged_writes())
        return "jsonl", importer

    return _run(context, validate, None)


def _run(
    context: ImportContext, validate: Callable[[], tuple[str, Importer]], path: Path | None
) -> ImportReport:
    """Steps 2-4 for one import: `validate()` (detecting the format) writes nothing; then the
    write in one transaction; any failure removes stored evidence and raises ImportFailed."""
    if staged_writes():
        holdings_abandoned_discard()  # before validating: a refused file ends the job too
    context.asked = _question_requests(context)
    context.every_item = bool(context.asked)
    name = context.file
    try:
        with _old_objects_frozen():
            chosen, importer = validate()
            context.records_seen = 0  # progress counts the writing pass
            try:
                _write(context, importer, path)
            finally:
                getattr(importer, "close", _nothing)()
    except FormatError as error:
        context.written.discard()
        raise ImportFailed(error) from None
    except EvidenceError as error:
        context.written.discard()
        raise ImportFailed(FormatError(error.reason, file=name, record=str(error.name))) from None
    except BaseException:
        context.written.discard()
        raise
    planner_statistics_refresh(after=f"importing {name}")  # the first page as fast as the next
    return ImportReport(
        file=name,
        format=chosen,
        counts=dict(context.counts),
        notes=context.notes,
        items=sorted(context.items)[:SHOWN_ITEMS],
    )


def _nothing() -> None:
    pass


def _write(context: ImportContext, importer: Importer, path: Path | None) -> None:
    """Step 3: the importer's rows and the questions asked for, in one transaction (or, on
    SQLite, in short ones published by a last one: import_staging)."""
    project = context.project

    def finish() -> None:
        _questions_on_import(context)
        # Every importer's rows (items and their revisions, resolutions, verdicts, labels)
        # are written by now, in this transaction: it is the project's new data version.
        project_data_touch(project)
        transaction.on_commit(lambda: project_data_changed.send(Project, project=project))

    if staged_writes() and hasattr(importer, "write_staged"):
        staging = context.staging = holding_open(project)
        try:
            importer.write_staged(path, staging, finish)
        except BaseException:
            holding_discard(staging)
            raise
        return
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        evidence_lock(exclusive=False)  # evidence_gc waits until this import is done
        if outermost:  # the setting lasts until the transaction ends: only in the import's own
            _references_checked_as_written()
        importer.write(path)
        finish()


def _references_checked_as_written() -> None:
    """PostgreSQL: this transaction's foreign keys are checked at the end of each statement,
    not all at the COMMIT (Django makes them DEFERRABLE INITIALLY DEFERRED). The same checks,
    as strict, only sooner: each COPY's rows are checked while the rows they name are still
    in the server's buffers (at the COMMIT of 1M items, the item table was read again and
    every row's page written again for its lock: 37 s of one COMMIT, bench/README.md), and
    the checks run while the body's next records are parsed (`records._LiveSpool`) instead
    of after the last. The import writes a row's references before the row."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


@contextmanager
def _old_objects_frozen() -> Iterator[None]:
    """The cyclic garbage collector leaves alone the objects that were there before the import
    (`gc.freeze`) until it ends: each of its full collections scanned every one of them again,
    ~0.7 s of a 100k-item import's ~3.5 s of Python (bench/README.md). What the import itself
    allocates is collected as usual; the frozen objects go back to the collector afterwards."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
