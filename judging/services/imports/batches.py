"""Verdicts and human labels waiting to be written together.

A 100k-verdict file must not cost 100k INSERTs: records are checked one by one as they are read
(criterion, label set), then written per batch: one query to find the batch's items and their
current revisions, one to find what is already stored, one insert (`insert_rows`: COPY on
PostgreSQL, one executemany on SQLite; no model instance per row, which was most of an import's
time: bench/README.md, issue #33). Each row records the item's current revision
(reviews.services.revisions): it was given on that content.
Re-importing the same rows is a no-op (counted as unchanged); a row that contradicts one stored
on the same revision is refused, because verdicts and human labels are evidence, not settings
to overwrite. Rows given on an earlier revision stay as they are (stale, counted apart).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from judging.models import Criterion, HumanLabel, Judge, Verdict
from reviews.formats.errors import FormatError
from reviews.models import Item
from reviews.services.imports.bulk_insert import insert_rows, pks_by_key, rows_where_any
from reviews.services.imports.copy_text import JsonText
from reviews.services.imports.pipeline import ImportContext
from reviews.services.items import PairwiseConflict, items_pairwise_keep

# Records per batch: as reviews.services.imports.item_batch.BATCH, and for the same reason.
BATCH = 4000
_NO_EXTRA = JsonText("{}")  # the usual `extra`, dumped once


class ItemLookup:
    """External id -> item pk for one import, fetched a batch at a time with each item's
    current revision (one statement per batch). Only the last batch's ids are kept (and
    `known`, given up front), so memory stays flat however many items a file names: 2M
    verdicts on 1M items kept every id before (issue 33)."""

    def __init__(self, context: ImportContext, known: dict[str, int] | None = None):
        self.context = context
        self.known = known or {}
        self.pks: dict[str, int] = dict(self.known)
        self._revisions: dict[int, int] = {}

    def resolve(self, wanted: list[tuple[str, str]]) -> dict[str, int]:
        """`wanted` is `[(external_id, where)]`; an unknown id is an error naming its record.
        Read again for every batch: an item record since the last one may have changed an
        item's revision."""
        ids = list(
            {external_id: None for external_id, _ in wanted if external_id not in self.known}
        )
        found = pks_by_key(
            Item, "external_id", ids, also=("revision",), project=self.context.project.pk
        )
        self.pks = {**self.known, **{key: pk for key, (pk, _) in found.items()}}
        self._revisions = dict(found.values())
        for external_id, where in wanted:
            if external_id not in self.pks:
                raise FormatError(
                    f"unknown item {external_id!r}: import the item first (an item record "
                    "earlier in this file, or an earlier import)",
                    file=self.context.file,
                    record=where,
                    path="$.item_id",
                )
        return self.pks

    def revisions(self, pks) -> dict[int, int]:
        """Item pk -> its current revision, as `resolve` read it (the ids given up front: read
        here)."""
        wanted = set(pks)
        if missing := wanted - self._revisions.keys():
            self._revisions.update(rows_where_any(Item, ("id", "revision"), "id", missing))
        return self._revisions


class _Batch:
    """Records checked as they are read, written `BATCH` at a time by `flush`."""

    def __init__(self, context: ImportContext, items: ItemLookup):
        self.context = context
        self.items = items
        self.pending: list = []
        self.now = timezone.now()  # every row's created_at: the import's

    def add(self, record) -> None:
        self.pending.append(record)
        if len(self.pending) >= BATCH:
            self.flush()  # each subclass writes its own rows

    def refusal(self, record, path: str, message: str) -> FormatError:
        """The error refusing a pending `record` of this file at its field `path`."""
        return FormatError(message, file=self.context.file, record=record.where, path=path)


@dataclass(slots=True)
class PendingVerdict:
    item_id: str  # the item's external id
    criterion: Criterion
    judge: Judge
    label: str
    where: str
    sample: int = 0
    raw: str = ""
    explanation: str = ""
    confidence: float | None = None
    display_order: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    pair: dict[str, str] | None = None  # pairwise: {"A": answer_a, "B": answer_b}

    def key(self, item_pk: int, revision: int) -> tuple:
        return (
            item_pk,
            self.criterion.pk,
            self.judge.pk,
            self.sample,
            self.display_order,
            revision,
        )


_VERDICT_COLUMNS = (
    "item_id",
    "criterion_id",
    "judge_id",
    "sample",
    "label",
    "raw",
    "explanation",
    "confidence",
    "display_order",
    "extra",
    "revision",
)


class VerdictBatch(_Batch):
    def flush(self) -> None:
        if not self.pending:
            return
        pks = self.items.resolve([(v.item_id, v.where) for v in self.pending])
        revisions = self.items.revisions(pks[v.item_id] for v in self.pending)
        stored = self._stored(pks)
        new: dict[tuple, PendingVerdict] = {}
        for verdict in self.pending:
            pk = pks[verdict.item_id]
            key = verdict.key(pk, revisions[pk])
            previous = stored.get(key) or (
                (new[key].label, new[key].raw, f"first given on {new[key].where}")
                if key in new
                else None
            )
            if previous is None:
                new[key] = verdict
            elif previous[:2] == (verdict.label, verdict.raw):  # the same row again
                self.context.counts["verdicts_unchanged"] += 1
            else:
                raise self._conflict(verdict, previous)
        insert_rows(
            Verdict,
            _VERDICT_COLUMNS,
            [
                (
                    key[0],
                    key[1],
                    key[2],
                    v.sample,
                    v.label,
                    v.raw,
                    v.explanation,
                    v.confidence,
                    v.display_order,
                    v.extra or _NO_EXTRA,
                    key[5],
                )
                for key, v in new.items()
            ],
            source_name=self.context.file[:255],
            created_at=self.now,
        )
        self._store_pairs(pks)
        self.context.counts["verdicts"] += len(new)
        self.context.counts["pairwise_verdicts"] += sum(1 for v in new.values() if v.pair)
        self.pending = []

    def _stored(self, pks: dict[str, int]) -> dict[tuple, tuple[str, str, str]]:
        """The batch's items' stored verdicts of its criteria and judges, by key."""
        rows = rows_where_any(
            Verdict,
            ("item_id", "criterion_id", "judge_id", "sample", "display_order", "revision")
            + ("label", "raw"),
            "item_id",
            {pks[v.item_id] for v in self.pending},
        )
        return {row[:6]: (row[6], row[7], "already stored") for row in rows}

    def _conflict(self, verdict: PendingVerdict, previous: tuple[str, str, str]) -> FormatError:
        order = f", display order {verdict.display_order}" if verdict.display_order else ""
        return self.refusal(
            verdict,
            "$.label",
            f"judge {verdict.judge.name} already gave item {verdict.item_id!r} label "
            f"{previous[0]!r} for criterion {verdict.criterion.name!r} (sample {verdict.sample}"
            f"{order}; {previous[2]}); a changed verdict needs another sample index or "
            "judge configuration",
        )

    def _store_pairs(self, pks: dict[str, int]) -> None:
        """Keep pairwise answers on the item, where a pairwise question can show them."""
        pairs = [v for v in self.pending if v.pair]
        if not pairs:
            return
        try:
            items_pairwise_keep([(pks[v.item_id], v.criterion.name, v.pair) for v in pairs])
        except PairwiseConflict as conflict:
            verdict = pairs[conflict.index]
            raise self.refusal(
                verdict,
                "$.answer_a",
                f"item {verdict.item_id!r} already compares {conflict.current!r} for criterion "
                f"{verdict.criterion.name!r}, not {verdict.pair!r}",
            ) from None


@dataclass(slots=True)
class PendingLabel:
    item_id: str
    criterion: Criterion
    rater: str
    label: str
    where: str
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


_LABEL_COLUMNS = ("item_id", "criterion_id", "rater", "label", "note", "extra", "revision")


class HumanLabelBatch(_Batch):
    """A rater labels an item once per file: a second label is refused, found within the batch
    by its external id and in earlier batches among the rows this import stored (their
    `created_at` is the import's), so memory does not grow with the file (issue #33)."""

    def flush(self) -> None:
        if not self.pending:
            return
        pks = self.items.resolve([(p.item_id, p.where) for p in self.pending])
        revisions = self.items.revisions(pks[p.item_id] for p in self.pending)
        stored: dict[tuple, str] = {}
        earlier: set[tuple] = set()  # (item, criterion, rater) labelled by an earlier batch
        for item, criterion, rater, revision, label, created in rows_where_any(
            HumanLabel,
            ("item_id", "criterion_id", "rater", "revision", "label", "created_at"),
            "item_id",
            {pks[p.item_id] for p in self.pending},
        ):
            stored[(item, criterion, rater, revision)] = label
            if created == self.now:
                earlier.add((item, criterion, rater))
        batch: dict[tuple, str] = {}  # (item, criterion, rater) -> where, in this batch
        new = []
        for pending in self.pending:
            pk = pks[pending.item_id]
            self._once(pending, (pk, pending.criterion.pk, pending.rater), batch, earlier)
            previous = stored.get((pk, pending.criterion.pk, pending.rater, revisions[pk]))
            if previous is None:
                extra = pending.extra or _NO_EXTRA
                new.append(
                    (pk, pending.criterion.pk, pending.rater, pending.label, pending.note, extra)
                    + (revisions[pk],)
                )
            elif previous == pending.label:
                self.context.counts["human_labels_unchanged"] += 1
            else:
                raise self.refusal(
                    pending,
                    "$.label",
                    f"rater {pending.rater!r} already labelled item {pending.item_id!r} "
                    f"{previous!r} for criterion {pending.criterion.name!r} in an earlier "
                    "import, on the same revision of the item; human labels are never "
                    "overwritten",
                )
        insert_rows(
            HumanLabel,
            _LABEL_COLUMNS,
            new,
            source_name=self.context.file[:255],
            created_at=self.now,
        )
        self.context.counts["human_labels"] += len(new)
        self.pending = []

    def _once(self, label: PendingLabel, key: tuple, batch: dict, earlier: set) -> None:
        """Refuse a second label of one rater on one item and criterion in this file."""
        first = batch.get(key)
        if first is None and key not in earlier:
            batch[key] = label.where
            return
        also = first or "an earlier line"
        raise self.refusal(
            label,
            "$.rater",
            f"rater {label.rater!r} labels item {label.item_id!r} for criterion "
            f"{label.criterion.name!r} twice (also {also})",
        )
