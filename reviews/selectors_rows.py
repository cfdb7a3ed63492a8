"""Row-level exports: every row of one kind in a project, for a team's own analysis.

Each kind is a `RowKind`: typed columns, a query with one row per export row and the fields it
reads, read with a database cursor in chunks (`iterator`) so that memory stays flat however many
rows there are.
Reviews registers its own kinds below (items, answers, resolutions, approvals, the audit log);
judging registers calls, verdicts and labels from `judging/apps.py` (reviews knows nothing of
judging). The writers are `reviews/formats/rows.py`; docs/formats.md lists every column.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.db.models import QuerySet
from django.http import StreamingHttpResponse

from reviews.formats.rows import CONTENT_TYPES, ROW_FORMATS, Column, RowFormatError, row_chunks
from reviews.models import Answer, Approval, Item, Project, ProjectEvent, Resolution

CHUNK = 2000  # rows fetched per round trip


class RowExportError(ValueError):
    """An unknown kind or format, or Parquet without pyarrow; the message says which."""


@dataclass(frozen=True)
class RowKind:
    name: str
    description: str
    columns: list[Column]
    # The project's rows as a queryset, one per export row (counted: past EXPORT_INLINE_MAX the
    # page's export is a background job, whose progress shows rows written of this count).
    query: Callable[[Project], QuerySet]
    # The ORM paths read from `query`, one per column unless `shape` joins or splits them.
    fields: list[str]
    # Rewrites the read tuples into column order, given the project (e.g. "NAME@VERSION").
    shape: Callable[[Project, Iterator[tuple]], Iterator[tuple]] | None = field(
        default=None, compare=False
    )
    # Called once before the rows are read: e.g. judging records a look at held-out items.
    on_export: Callable[..., None] | None = field(default=None, compare=False)

    def rows(self, project: Project) -> Iterator[tuple]:
        """The rows in id order, a chunk at a time (memory stays flat)."""
        read = self.query(project).order_by("pk").values_list(*self.fields)
        read = read.iterator(chunk_size=CHUNK)
        return read if self.shape is None else self.shape(project, read)


_KINDS: dict[str, RowKind] = {}


def row_kind_add(kind: RowKind) -> RowKind:
    """Add a kind of rows to the export (each app adds its own); a name is taken once."""
    if kind.name in _KINDS:
        raise ValueError(f"row kind {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def row_kinds() -> dict[str, RowKind]:
    return dict(_KINDS)


@dataclass(frozen=True)
class RowExport:
    kind: RowKind
    format: str
    chunks: Iterator[bytes]

    def response(self, slug: str) -> StreamingHttpResponse:
        """Streamed as it is read (the page and the API answer with it)."""
        response = StreamingHttpResponse(self.chunks, content_type=CONTENT_TYPES[self.format])
        name = f"{slug}-{self.kind.name}.{self.format}"
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response


def rows_more_than(*, project: Project, kind: str, limit: int) -> bool:
    """Whether `project` has more than `limit` rows of `kind` (reads at most limit + 1 index
    entries)."""
    found = _KINDS.get(kind)
    if found is None:
        return False
    return found.query(project).order_by().values("pk")[: limit + 1].count() > limit


def rows_count(*, project: Project, kind: str) -> int | None:
    found = _KINDS.get(kind)
    return None if found is None else found.query(project).count()


def _counted(rows: Iterator[tuple], progress: Callable[[int], None]) -> Iterator[tuple]:
    n = 0
    for n, row in enumerate(rows, 1):
        if n % CHUNK == 0:
            progress(n)
        yield row
    progress(n)


def rows_export(
    *, actor, project: Project, kind: str, format: str, progress: Callable[[int], None] = None
) -> RowExport:
    """Every `kind` row of `project` as `format` bytes, streamed; `progress(rows read)` every
    CHUNK rows if given. Access is the caller's (project admins: the pages that show these
    rows are theirs)."""
    found = _KINDS.get(kind)
    if found is None:
        raise RowExportError(f"kind: {kind!r} is not one of {', '.join(_KINDS)}")
    if format not in ROW_FORMATS:
        raise RowExportError(f"format: {format!r} is not one of {', '.join(ROW_FORMATS)}")
    rows = found.rows(project)
    try:
        chunks = row_chunks(
            format, found.columns, rows if progress is None else _counted(rows, progress)
        )
    except RowFormatError as error:
        raise RowExportError(str(error)) from None
    if found.on_export is not None:
        found.on_export(actor=actor, project=project, kind=kind)
    return RowExport(found, format, chunks)


_C = Column

ITEMS = [
    _C("item_id", "text", "the item's external id"),
    _C("revision", "int", "its content revision (1, then +1 each time an import changed it)"),
    _C("title", "text"),
    _C("status", "text", "open, in_review, resolved, approved"),
    _C("input", "json"),
    _C("output", "json"),
    _C("expected", "json", "the reference answer the import gave, if any"),
    _C("metadata", "json"),
    _C("created_at", "time"),
    _C("updated_at", "time"),
]
ANSWERS = [
    _C("answer_id", "int"),
    _C("item_id", "text"),
    _C("item_revision", "int", "the item's revision the rater saw"),
    _C("question_kind", "text", "field, criterion or pairwise"),
    _C("question_key", "text", "the field's path or the criterion's name"),
    _C("rater", "text", "username"),
    _C("seq", "int", "1 for the rater's first answer to the question, +1 per change"),
    _C("decision", "text"),
    _C("value", "json"),
    _C("flagged", "bool"),
    _C("note", "text"),
    _C("gold", "bool", "answered as a gold check"),
    _C("created_at", "time"),
]
RESOLUTIONS = [
    _C("resolution_id", "int"),
    _C("item_id", "text"),
    _C("item_revision", "int"),
    _C("question_kind", "text"),
    _C("question_key", "text"),
    _C("decision", "text"),
    _C("value", "json"),
    _C("method", "text", "unanimous, majority, adjudicated, imported, superseded"),
    _C("decided_by", "text", "the adjudicator's username (adjudicated only)"),
    _C("reason", "text"),
    _C("supersedes", "int", "the resolution_id this one replaced"),
    _C("created_at", "time"),
]
APPROVALS = [
    _C("approval_id", "int"),
    _C("item_id", "text"),
    _C("sequence", "int", "1, then 2 for the first correction, ..."),
    _C("reference_version", "int", "the ground-truth version it signed"),
    _C("sha256", "text", "SHA-256 of the signed rows"),
    _C("approver", "text", "e-mail or username, as exported"),
    _C("approved_at", "time"),
    _C("key_id", "text", "the signing key"),
    _C("algorithm", "text"),
    _C("signature", "text"),
    _C("imported_from", "text", "the signed file it came from, if imported"),
    _C("correction_reason", "text"),
]
AUDIT = [
    _C("event_id", "int"),
    _C("created_at", "time"),
    _C("actor", "text", "username; empty for the operator's console"),
    _C("action", "text"),
    _C("target", "text"),
    _C("before", "json", "the changed values before (never a secret)"),
    _C("after", "json"),
]


row_kind_add(RowKind(
    "items", "each item with its content revision", ITEMS,
    query=lambda project: Item.objects.filter(project=project),
    fields=["external_id", "revision", "title", "status", "input", "output", "expected",
            "metadata", "created_at", "updated_at"],
))  # fmt: skip
row_kind_add(RowKind(
    "answers", "every rater answer, each change a row", ANSWERS,
    query=lambda project: Answer.objects.filter(question__item__project=project),
    fields=["pk", "question__item__external_id", "revision", "question__kind", "question__key",
            "rater__username", "seq", "decision", "value", "flagged", "note",
            "assignment__gold", "created_at"],
))  # fmt: skip
row_kind_add(RowKind(
    "resolutions", "each question's settled answer, history kept", RESOLUTIONS,
    query=lambda project: Resolution.objects.filter(question__item__project=project),
    fields=["pk", "question__item__external_id", "revision", "question__kind", "question__key",
            "decision", "value", "method", "decided_by__username", "reason", "supersedes_id",
            "created_at"],
))  # fmt: skip
row_kind_add(RowKind(
    "approvals", "signed approvals of ground truth", APPROVALS,
    query=lambda project: Approval.objects.filter(item__project=project),
    fields=["pk", "item__external_id", "sequence", "reference__version", "sha256",
            "approver_name", "approved_at", "key_id", "algorithm", "signature",
            "imported_from", "correction_reason"],
))  # fmt: skip
row_kind_add(RowKind(
    "audit", "the project's audit log (ProjectEvent)", AUDIT,
    query=lambda project: ProjectEvent.objects.filter(project=project),
    fields=["pk", "created_at", "actor_name", "action", "target", "before", "after"],
))  # fmt: skip
