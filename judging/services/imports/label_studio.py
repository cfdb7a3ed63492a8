"""Importing a Label Studio project: its JSON export (docs/formats.md §10).

- Item per task, external id `label-studio-<task id>`, title `Label Studio task <id>`; the task
  id (and its Label Studio project) stay in `metadata["label_studio"]`, linking back. `--map
  input=KEY`, `output=KEY`, `reference=KEY` choose the item's input, output and reference from
  the task's `data`; the data fields no map names are the input (or, when `input` is mapped,
  kept in the metadata): none is dropped. New items wait without questions (status resolved).
- Criteria, human labels and verdicts: `label_studio_labels`.
- Media: a data value that is an http(s) URL stays as written, and is listed under `links`; a
  Label Studio storage path (`/data/upload/...`, `/data/local-files/?d=...`) or a relative path
  naming a file shipped in the .zip beside the export becomes the item's evidence (its source
  named after the data field). Without the file it stays a link, with a note; in a .zip, a
  missing file is an error.
- A .zip holds the export (one .json), optionally its label config (one .xml: used unless
  `label_config` is given) and the media files, read, never extracted.
Re-importing the same export changes nothing.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import parse_qs, urlparse

from judging.formats.label_studio import Control, Export, Task, parse_export, parse_label_config
from judging.services.imports.label_studio_labels import LabelStudioLabels
from reviews.evidence import EvidenceError, inspect_evidence
from reviews.formats.bundle import zip_members
from reviews.formats.detect import Sniffer
from reviews.formats.errors import FormatError, check_json_size
from reviews.models import ItemSource, ItemStatus
from reviews.services.files.documents import document_for_bytes, read_evidence
from reviews.services.imports.pipeline import ImportContext
from reviews.services.imports.registry import ImportKind, register_import
from reviews.services.items import items_upsert, source_attach

FORMAT = "label-studio"
ITEM_FIELDS = {"input": "input", "output": "output", "reference": "expected"}  # --map NAME=KEY
_STORAGE = "/data/"  # Label Studio serves uploads and local files under this path


def external_id(task: Task) -> str:
    return f"label-studio-{task.id}"


def _looks_like(first: dict) -> bool:
    """A task (`data`, `annotations` or `predictions`: whichever key comes first, the head may
    end inside its value), or a JSON_MIN row (refused by the importer, which says to export
    JSON)."""
    return bool({"data", "annotations", "predictions", "annotator", "annotation_id"} & first.keys())


@dataclass
class _Source:
    """What the file holds: the export, a label config (.zip) and media files (.zip)."""

    export: bytes
    config: str | None = None
    config_name: str = ""
    media: dict[str, zipfile.ZipInfo] = field(default_factory=dict)


@dataclass(frozen=True)
class _Evidence:
    task: Task
    key: str  # the data field: the item's source is named after it
    member: str  # the file in the .zip


class LabelStudioImporter:
    """A Label Studio JSON export (or a .zip of it with its label config and media)."""

    sniffer = Sniffer(FORMAT, _looks_like, array=True)
    rank = 5

    def __init__(self, context: ImportContext):
        self.context = context
        self.export: Export | None = None
        self.fields: dict[str, str] = {}
        self.evidence: list[_Evidence] = []
        self.links: dict[int, dict[str, str]] = {}
        self.unshipped = 0

    def validate(self, path: Path) -> None:
        context = self.context
        self.fields = _field_map(context)
        with _opened(path, context.file) as (source, zf):
            self.export = parse_export(source.export, file=context.file)
            config = _config(source, context)
            self.labels = LabelStudioLabels(context, set(self.fields))
            self.labels.check(self.export, config)
            for task in self.export.tasks:
                self._fields_of(task)
                self._media(task, source, zf)

    def write(self, path: Path) -> None:
        context, export = self.context, self.export
        if export is None:
            raise RuntimeError("validate() first: it parses the file")
        upserted = items_upsert(
            actor=context.actor,
            project=context.project,
            rows=[(external_id(t), self._fields_of(t)) for t in export.tasks],
            source={"file": context.file},
            new_status=ItemStatus.RESOLVED,  # no questions until they are asked for
        )
        for what in ("created", "updated", "revised", "unchanged"):
            context.counts[f"items_{what}"] += upserted.counts[what]
        context.items_named(upserted.pks.values())
        context.records_seen += len(export.tasks)
        if self.evidence:
            with _opened(path, context.file) as (_source, zf):
                self._attach(zf, upserted.pks)
        self.labels.write(upserted.pks, external_id)
        self._report(export)

    def _fields_of(self, task: Task) -> dict[str, Any]:
        data = dict(task.data)
        fields: dict[str, Any] = {"title": f"Label Studio task {task.id}"}
        for name, key in self.fields.items():
            if key not in data:
                raise FormatError(
                    f"no data field {key!r} (--map {name}={key}); this task's fields: "
                    f"{', '.join(sorted(task.data)) or 'none'}",
                    file=self.context.file,
                    record=task.where,
                    path=f"$.data.{key}",
                )
            fields[ITEM_FIELDS[name]] = data.pop(key)
        if "input" not in self.fields:
            fields["input"], data = data, {}
        block: dict[str, Any] = {"task_id": task.id, "project": task.project}
        block.update({"data": data} if data else {})
        block.update({"meta": task.meta} if task.meta else {})
        block.update({"links": self.links[task.id]} if self.links.get(task.id) else {})
        fields["metadata"] = {"label_studio": block}
        return fields

    def _media(self, task: Task, source: _Source, zf: zipfile.ZipFile | None) -> None:
        """Each data value that is a URL (a link) or a shipped file (evidence, checked now)."""
        for key, value in task.data.items():
            if not isinstance(value, str):
                continue
            if value.startswith(("http://", "https://")):
                self.links.setdefault(task.id, {})[key] = value
                continue
            member = _member(value, source.media)
            if member is not None:
                self._check_evidence(zf, source.media[member], task, key)
                self.evidence.append(_Evidence(task, key, member))
            elif value.startswith(_STORAGE):
                if zf is not None:
                    raise FormatError(
                        f"{value!r} names a file that is not in the .zip",
                        file=self.context.file,
                        record=task.where,
                        path=f"$.data.{key}",
                    )
                self.links.setdefault(task.id, {})[key] = value
                self.unshipped += 1

    def _check_evidence(self, zf, info: zipfile.ZipInfo, task: Task, key: str) -> None:
        try:
            with zf.open(info) as stream:
                data = read_evidence(stream, name=info.filename, size=info.file_size)
            inspect_evidence(data, name=info.filename)
        except EvidenceError as error:
            raise FormatError(
                str(error), file=self.context.file, record=task.where, path=f"$.data.{key}"
            ) from None

    def _attach(self, zf: zipfile.ZipFile, pks: dict[str, int]) -> None:
        media = zip_members(zf, file=self.context.file)
        attached = set(
            ItemSource.objects.filter(item_id__in=pks.values()).values_list(
                "item_id", "artifact_id"
            )
        )
        for one in self.evidence:
            pk = pks[external_id(one.task)]
            if (pk, one.key) in attached:
                continue
            info = media[one.member]
            with zf.open(info) as stream:
                data = read_evidence(stream, name=one.member, size=info.file_size)
            document, created = document_for_bytes(
                data, name=one.member, written=self.context.written
            )
            self.context.counts["documents"] += int(created)
            source_attach(item_id=pk, artifact_id=one.key, document=document, path=one.member)

    def _report(self, export: Export) -> None:
        context = self.context
        annotations = [a for t in export.tasks for a in t.annotations]
        cancelled = sum(a.cancelled for a in annotations)
        empty = sum(not a.cancelled and not a.marks for a in annotations)
        raters = sorted({a.rater for a in annotations if not a.cancelled and a.marks})
        context.notes.append(
            f"Label Studio export: {len(export.tasks)} tasks, {len(annotations)} annotations "
            f"by {len(raters)} annotators ({', '.join(raters) or 'none'}), kept as raters' "
            "names (no site account is made for them)"
        )
        context.counts["cancelled_annotations"] += cancelled
        context.counts["empty_annotations"] += empty
        if cancelled or empty:
            context.notes.append(
                f"not labels: {cancelled} cancelled (skipped) and {empty} empty annotations"
            )
        context.notes.extend(self.labels.notes)
        as_ids = sum(t.predictions_as_ids for t in export.tasks)
        if as_ids:
            context.notes.append(
                f"{as_ids} predictions are only ids in this export (the project page's quick "
                "export): export a snapshot with predictions written out to import them"
            )
        if export.ignored:
            kinds = ", ".join(f"{kind}: {n}" for kind, n in sorted(export.ignored.items()))
            context.notes.append(
                f"result regions not read (not Choices, Rating or TextArea): {kinds}"
            )
        if self.unshipped:
            context.notes.append(
                f"{self.unshipped} media paths point into Label Studio's storage: kept as "
                "links; zip the files with the export to import them as evidence"
            )


def _field_map(context: ImportContext) -> dict[str, str]:
    """`--map input=KEY` (output, reference): which data field fills which item field."""
    given = context.options.get("label_map") or {}
    chosen = {name: key for name, key in given.items() if name in ITEM_FIELDS}
    for name, key in chosen.items():
        if not key:
            raise FormatError(f"--map {name}= names no data field", file=context.file)
    return chosen


def _config(source: _Source, context: ImportContext) -> dict[str, Control] | None:
    given = context.options.get("label_config")
    if given:
        return parse_label_config(
            given, file=context.options.get("label_config_name", "label config")
        )
    if source.config is not None:
        return parse_label_config(source.config, file=f"{context.file}/{source.config_name}")
    return None


def _member(value: str, media: dict[str, zipfile.ZipInfo]) -> str | None:
    """The shipped file a data value names: its path as written, under Label Studio's storage
    (`/data/upload/1/x.png` is `upload/1/x.png`), a local file's `?d=` path, or (once only)
    its file name."""
    if not media:
        return None
    parsed = urlparse(value)
    candidates = [value.lstrip("/"), parsed.path.removeprefix(_STORAGE)]
    candidates += parse_qs(parsed.query).get("d", [])
    for candidate in candidates:
        if candidate in media:
            return candidate
    name = PurePosixPath(parsed.path).name
    named = [m for m in media if PurePosixPath(m).name == name]
    return named[0] if name and len(named) == 1 else None


class _opened:
    """The export as bytes, and the open .zip (or None) while the block runs."""

    def __init__(self, path: Path, file: str):
        self.path, self.file = path, file
        self.zf: zipfile.ZipFile | None = None

    def __enter__(self) -> tuple[_Source, zipfile.ZipFile | None]:
        if not zipfile.is_zipfile(self.path):
            check_json_size(self.path.stat().st_size, file=self.file)
            return _Source(export=self.path.read_bytes()), None
        self.zf = zipfile.ZipFile(self.path)
        try:
            return _zipped(self.zf, self.file), self.zf
        except BaseException:
            self.zf.close()
            raise

    def __exit__(self, *exc) -> None:
        if self.zf is not None:
            self.zf.close()


def _zipped(zf: zipfile.ZipFile, file: str) -> _Source:
    members = zip_members(zf, file=file)
    exports = sorted(n for n in members if n.lower().endswith(".json"))
    configs = sorted(n for n in members if n.lower().endswith(".xml"))
    if len(exports) != 1 or len(configs) > 1:
        raise FormatError(
            "a .zip of a Label Studio project holds one export (.json), at most one label "
            f"config (.xml) and its media files; found {exports or 'no .json'} {configs}",
            file=file,
        )
    check_json_size(members[exports[0]].file_size, file=f"{file}/{exports[0]}")
    source = _Source(export=zf.read(members[exports[0]]))
    if configs:
        source.config_name = configs[0]
        source.config = zf.read(members[configs[0]]).decode("utf-8", errors="replace")
    source.media = {n: i for n, i in members.items() if n not in (*exports, *configs)}
    return source


register_import(ImportKind.FORMAT, FORMAT, LabelStudioImporter)
