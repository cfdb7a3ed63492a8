"""Judging's part of the import pipeline: FORMATS §4 record kinds and the TextFlow format.

`reviews` reads JSONL/CSV files and writes item records itself; `criterion`, `verdict`,
`human_label` and `pairwise_verdict` records (schemas in `judging.formats.records`) go to the
`JudgingRecords` sink registered here (reviews never imports judging). The sink checks each
record as it comes (the criterion exists, the label is in its label set), queues rows in
batches and writes the rest when reviews says the file ended, all inside the import's single
transaction. TextFlow files have their own importer (`judging.services.imports.textflow`).

Label options (`manage.py import_items --map FROM=TO --clip`): a label is renamed by the map
first, then checked; a label still outside the criterion's label set is an error naming file,
line and value, unless `clip` drops the record. Both leave a note in the import report.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

from judging.formats import records as rec
from judging.models import Criterion, Judge
from judging.services.imports.batches import (
    HumanLabelBatch,
    ItemLookup,
    PendingLabel,
    PendingVerdict,
    VerdictBatch,
)
from judging.services.imports.criteria import (
    CriterionConflict,
    CriterionDefinition,
    criterion_ensure,
    default_pairwise_criterion,
    judge_ensure,
    latest_criterion,
    question_snapshot,
)
from judging.services.imports.textflow import TextflowImporter
from reviews.formats.errors import FormatError
from reviews.models import QuestionKind
from reviews.services.imports.pipeline import ImportContext
from reviews.services.imports.questions import QuestionSpec
from reviews.services.imports.registry import ImportKind, register_import


class LabelPolicy:
    """Applies `label_map` and `clip` to labels and counts what it did, for the report's notes."""

    def __init__(self, context: ImportContext):
        self.context = context
        self.label_map: dict[str, str] = dict(context.options.get("label_map") or {})
        self.clip = bool(context.options.get("clip"))
        self.mapped: Counter = Counter()
        self.clipped: Counter = Counter()

    def apply(
        self, label: str, criterion: Criterion, *, kind: str, where: str, path: str
    ) -> str | None:
        """The label to store, or None when `clip` drops the record."""
        mapped = self.label_map.get(label, label)
        if mapped != label:
            self.mapped[(label, mapped)] += 1
        if mapped in criterion.labels:
            return mapped
        if self.clip:
            self.clipped[(kind, criterion.name, label)] += 1
            return None
        renamed = f" (renamed from {label!r} by --map)" if mapped != label else ""
        raise FormatError(
            f"label {mapped!r}{renamed} is not in the label set of criterion "
            f"{criterion.name!r} {criterion.labels}; rename it with --map FROM=TO or drop such "
            "records with --clip",
            file=self.context.file,
            record=where,
            path=path,
        )

    def notes(self) -> list[str]:
        notes = []
        if self.mapped:
            renamed = ", ".join(f"{a!r} -> {b!r}: {n}" for (a, b), n in sorted(self.mapped.items()))
            notes.append(f"--map renamed {sum(self.mapped.values())} labels ({renamed})")
        if self.clipped:
            dropped = ", ".join(
                f"{kind} {label!r} on {name!r}: {n}"
                for (kind, name, label), n in sorted(self.clipped.items())
            )
            notes.append(
                f"--clip dropped {sum(self.clipped.values())} records whose label is outside the "
                f"criterion's label set ({dropped}); agreement figures cover only what was kept"
            )
        return notes


JudgeKey = tuple[str, str, float | None, str | None]  # provider, model, temperature, prompt


class VerdictRow(NamedTuple):
    """A checked `verdict` record as the validate step keeps it (plain values, marshalled)."""

    type: str
    item_id: str
    criterion: str
    label: str
    judge: JudgeKey
    sample: int
    confidence: float | None
    explanation: str | None
    raw: str | None
    extra: dict[str, Any]

    @classmethod
    def of(cls, record: rec.Verdict) -> tuple:
        judge = record.judge
        return (
            "verdict",
            record.item_id,
            record.criterion,
            record.label,
            (judge.provider, judge.model, judge.temperature, judge.prompt_sha256),
            record.sample,
            record.confidence,
            record.explanation,
            record.raw,
            record.model_extra or {},
        )


class LabelRow(NamedTuple):
    """A checked `human_label` record as the validate step keeps it."""

    type: str
    item_id: str
    criterion: str
    rater: str
    label: str
    note: str | None
    extra: dict[str, Any]

    @classmethod
    def of(cls, record: rec.HumanLabel) -> tuple:
        return (
            "human_label",
            record.item_id,
            record.criterion,
            record.rater,
            record.label,
            record.note,
            record.model_extra or {},
        )


class JudgingRecords:
    """One import's judging records: criteria and judges seen, verdicts and labels queued.
    Verdicts and human labels come as the tuples of `spool_rows` (the bulk of a large file);
    criteria and pairwise verdicts as records."""

    schemas = rec.SCHEMAS
    spool_rows = {"verdict": VerdictRow.of, "human_label": LabelRow.of}

    def __init__(self, context: ImportContext):
        self.context = context
        self.criteria: dict[str, Criterion] = {}
        self.judges: dict[str, Judge] = {}
        self.judge_keys: dict[JudgeKey, Judge] = {}  # a row's judge, looked up once
        self.items = ItemLookup(context)
        self.verdicts = VerdictBatch(context, self.items)
        self.labels = HumanLabelBatch(context, self.items)
        self.policy = LabelPolicy(context)

    def add(self, record: rec.Record | tuple, where: str) -> None:
        if type(record) is tuple:  # a kind of `spool_rows`, its kind first
            _ROW_HANDLERS[record[0]](record, self, where)
        else:
            _RECORD_HANDLERS[record.type](record, self, where)

    def criterion(self, name: str, where: str) -> Criterion:
        """Defined earlier in this file, else the newest stored version."""
        if name not in self.criteria:
            found = latest_criterion(project=self.context.project, name=name)
            if found is None:
                raise FormatError(
                    f"unknown criterion {name!r}: define it first (a criterion record earlier "
                    "in this file, or an earlier import)",
                    file=self.context.file,
                    record=where,
                    path="$.criterion",
                )
            self.criteria[name] = found
        return self.criteria[name]

    def verdict_add(self, record, criterion: Criterion, label: str, where: str, **details) -> None:
        """Queue a checked verdict (plain or pairwise) of `record`'s judge on its item."""
        given = record.judge
        judge = self.judge((given.provider, given.model, given.temperature, given.prompt_sha256))
        self.verdicts.add(PendingVerdict(record.item_id, criterion, judge, label, where, **details))

    def judge(self, given: JudgeKey) -> Judge:
        """The judge of `(provider, model, temperature, prompt_sha256)`, made if new."""
        if (found := self.judge_keys.get(given)) is not None:
            return found
        key = Judge.configuration_key(*given)
        if key not in self.judges:
            provider, model, temperature, prompt_sha256 = given
            judge, created = judge_ensure(
                project=self.context.project,
                provider=provider,
                model=model,
                temperature=temperature,
                prompt_sha256=prompt_sha256,
            )
            self.context.counts["judges"] += int(created)
            self.judges[key] = judge
        self.judge_keys[given] = self.judges[key]
        return self.judges[key]

    def finish(self) -> None:
        self.verdicts.flush()
        self.labels.flush()
        self.context.notes.extend(self.policy.notes())


def _is_pairwise(record: rec.Criterion) -> bool:
    """An explicit `"pairwise": true`, or the pairwise label set itself."""
    flag = (record.model_extra or {}).get("pairwise")
    return flag is True or str(flag).lower() == "true" or sorted(record.labels) == ["A", "B", "tie"]


def handle_criterion(record: rec.Criterion, state: JudgingRecords, where: str) -> None:
    context = state.context
    definition = CriterionDefinition(
        name=record.name,
        labels=list(record.labels),
        version=record.version or "1",
        positive_label=record.positive or "",
        ordinal=record.ordinal,
        critical=record.critical,
        pairwise=_is_pairwise(record),
        text=record.text or "",
    )
    try:
        criterion, created = criterion_ensure(project=context.project, definition=definition)
    except CriterionConflict as conflict:
        raise FormatError(
            str(conflict), file=context.file, record=where, path="$.version"
        ) from None
    context.counts["criteria" if created else "criteria_unchanged"] += 1
    state.criteria[criterion.name] = criterion


def handle_verdict(row: tuple, state: JudgingRecords, where: str) -> None:
    """A `VerdictRow`: checked against its criterion, queued."""
    _, item_id, name, given, judge, sample, confidence, explanation, raw, extra = row
    criterion = state.criteria.get(name) or state.criterion(name, where)
    if criterion.pairwise:
        raise FormatError(
            f"criterion {criterion.name!r} is pairwise: use pairwise_verdict records",
            file=state.context.file,
            record=where,
            path="$.criterion",
        )
    label = state.policy.apply(given, criterion, kind="verdict", where=where, path="$.label")
    if label is None:
        return
    state.verdicts.add(
        PendingVerdict(
            item_id,
            criterion,
            state.judge_keys.get(judge) or state.judge(judge),
            label,
            where,
            sample,
            raw or "",
            explanation or "",
            confidence,
            "",
            extra,
        )
    )


def handle_human_label(row: tuple, state: JudgingRecords, where: str) -> None:
    """A `LabelRow`: checked against its criterion, queued."""
    _, item_id, name, rater, given, note, extra = row
    criterion = state.criteria.get(name) or state.criterion(name, where)
    label = state.policy.apply(given, criterion, kind="human_label", where=where, path="$.label")
    if label is None:
        return
    state.labels.add(PendingLabel(item_id, criterion, rater, label, where, note or "", extra))


def _pairwise_sample(extra: dict, context: ImportContext, where: str) -> int:
    sample = extra.pop("sample", 0)
    if isinstance(sample, str) and sample.isdigit():
        sample = int(sample)
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        raise FormatError(
            "sample must be a whole number >= 0", file=context.file, record=where, path="$.sample"
        )
    return sample


def handle_pairwise_verdict(record: rec.PairwiseVerdict, state: JudgingRecords, where: str) -> None:
    """`winner` names the ORIGINAL answer; the order the judge saw is kept in `display_order`."""
    context = state.context
    if record.criterion:
        criterion = state.criterion(record.criterion, where)
    else:
        criterion, created = default_pairwise_criterion(project=context.project)
        context.counts["criteria"] += int(created)
        state.criteria.setdefault(criterion.name, criterion)
    if not criterion.pairwise:
        raise FormatError(
            f"criterion {criterion.name!r} is not pairwise (its labels are {criterion.labels})",
            file=context.file,
            record=where,
            path="$.criterion",
        )
    label = state.policy.apply(
        record.winner, criterion, kind="pairwise_verdict", where=where, path="$.winner"
    )
    if label is None:
        return
    extra = dict(record.model_extra or {})
    sample = _pairwise_sample(extra, context, where)
    pair = {"A": record.answer_a, "B": record.answer_b}
    extra.update(answer_a=record.answer_a, answer_b=record.answer_b)
    order = "".join(record.display_order)
    state.verdict_add(
        record, criterion, label, where, sample=sample, display_order=order, extra=extra, pair=pair
    )


_ROW_HANDLERS = {"verdict": handle_verdict, "human_label": handle_human_label}
_RECORD_HANDLERS = {"criterion": handle_criterion, "pairwise_verdict": handle_pairwise_verdict}


def criterion_question(project, name: str) -> QuestionSpec:
    """`criterion:NAME` on import: the newest version of the project's criterion."""
    criterion = latest_criterion(project=project, name=name)
    if criterion is None:
        known = ", ".join(
            sorted(set(Criterion.objects.filter(project=project).values_list("name", flat=True)))
        )
        raise ValueError(
            f"no criterion {name!r} in this project (known: {known or 'none'}); import a "
            "criterion record first"
        )
    if criterion.pairwise:
        raise ValueError(
            f"{name!r} is pairwise: its questions need answers A and B, use send_to_humans"
        )
    return QuestionSpec(kind=QuestionKind.CRITERION, **question_snapshot(criterion))


register_import(ImportKind.FORMAT, TextflowImporter.sniffer.format, TextflowImporter)
for _kind in JudgingRecords.schemas:
    register_import(ImportKind.RECORDS, _kind, JudgingRecords)
register_import(ImportKind.QUESTIONS, "criterion", criterion_question)
