"""One entry point for every import: the CLI, the upload form and the API all call `import_file`.

An import is ONE transaction: the first bad record raises `ImportFailed` naming file, record,
JSON path and reason, and nothing is written (evidence files it stored are removed again).

Formats are pluggable: `reviews` handles review files, generic items and `path,expected`
tables; `judging` registers TextFlow and the judging record kinds in its AppConfig.ready(), so
reviews never imports judging.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction

from reviews.evidence import EvidenceError
from reviews.formats.detect import detect_format
from reviews.formats.errors import FormatError
from reviews.models import Project
from reviews.services.documents import StoredFiles
from reviews.signals import project_data_changed

FORMATS = ("review", "jsonl", "csv", "textflow")


class ImportFailed(Exception):
    """The file was refused; nothing was written."""

    def __init__(self, error: FormatError):
        super().__init__(str(error))
        self.error = error


@dataclass
class ImportContext:
    """What an importer needs besides the file: who, where, options, and bookkeeping."""

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

    def tick(self) -> None:
        """Count one record; report progress every 500 (cheap enough for 100k-line files)."""
        self.records_seen += 1
        if self.progress is not None and self.records_seen % 500 == 0:
            self.progress(self.records_seen)


@dataclass(frozen=True)
class ImportReport:
    file: str
    format: str
    counts: dict[str, int]
    notes: list[str]

    def summary(self) -> str:
        items = sum(
            self.counts.get(k, 0) for k in ("items_created", "items_updated", "items_unchanged")
        )
        extra = ", ".join(
            f"{n} {label}"
            for key, label in (
                ("verdicts", "verdicts"),
                ("human_labels", "human labels"),
                ("criteria", "criteria"),
                ("references", "references"),
            )
            if (n := self.counts.get(key))
        )
        unchanged = self.counts.get("items_unchanged", 0)
        line = f"imported {items} items" + (f" ({unchanged} unchanged)" if unchanged else "")
        line += f", {self.counts.get('questions', 0)} questions"
        return f"{line}{', ' + extra if extra else ''}, 0 errors"

    def as_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "format": self.format,
            "counts": self.counts,
            "notes": self.notes,
        }


Importer = Callable[[Path, ImportContext], None]
_IMPORTERS: dict[str, Importer] = {}


def register_importer(format_name: str, importer: Importer) -> None:
    _IMPORTERS[format_name] = importer


def choose_format(path: Path, *, name: str, requested: str | None) -> str:
    if requested:
        if requested not in FORMATS:
            raise FormatError(
                f"unknown format {requested!r} (choose one of: {', '.join(FORMATS)})", file=name
            )
        return requested
    with path.open("rb") as handle:
        head = handle.read(64 * 1024)
    return detect_format(name, head)


def import_file(
    *,
    actor,
    project: Project,
    path: Path,
    name: str | None = None,
    format: str | None = None,
    options: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import `path` into `project` in one transaction; raises ImportFailed and writes nothing."""
    name = name or path.name
    context = ImportContext(
        actor=actor,
        project=project,
        file=name,
        base_dir=path.parent,
        options=options or {},
        progress=progress,
    )
    try:
        chosen = choose_format(path, name=name, requested=format)
        importer = _IMPORTERS.get(chosen)
        if importer is None:
            raise FormatError(f"no importer for format {chosen!r}", file=name)
        with transaction.atomic():
            importer(path, context)
            transaction.on_commit(lambda: project_data_changed.send(Project, project=project))
    except FormatError as error:
        context.written.discard()
        raise ImportFailed(error) from None
    except EvidenceError as error:
        context.written.discard()
        raise ImportFailed(FormatError(error.reason, file=name, record=str(error.name))) from None
    except BaseException:
        context.written.discard()
        raise
    return ImportReport(file=name, format=chosen, counts=dict(context.counts), notes=context.notes)
