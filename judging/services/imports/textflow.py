"""Importing TextFlow evaluated results (FORMATS §1): one item per sample, three verdicts each.

- Item: external id `<key>/<question_id>` (file keys "0", "1", … are only positions, so a
  re-ordered file maps to the same items); input = question, output = response, expected =
  answer (upstream) or answers (derived); `metadata["textflow"]` keeps the flowchart key,
  question id, file key, variant and the flags below. New items wait without questions
  (status resolved) until `items_send_to_humans` asks for labels.
- Criterion `correctness` (Correct / Incorrect, positive Correct), created or reused.
- Upstream variant: the three decisions are samples 0, 1, 2 of ONE judge, `openai/gpt-4o` at
  temperature 0.2 (TextFlow's evaluation script always samples at 0.2), or `options["judge"]`
  ("provider/model"). Derived variant: one judge per model named in the decision objects
  (`model`/`judge`, optional `provider`; "provider/model" is split), temperature unknown; when
  a file does not name them, the three positions are three separate judges `textflow/decision1`
  … `textflow/decision3` (the variant says they are different models, so they are not samples
  of one). Each verdict keeps the raw text in `raw` and the normalised label in `label`
  (`Correct`, `Incorrect` or `unparsed`).
- Flags: `split_vote`, `three_way_split`, and `final_decision_disagrees` when the file's
  `final_decision` is not the majority of the normalised decisions (`majority`, None for a tie).
- Evidence `images/<key>.png` (or `.jpeg`) next to the file is attached when present.
- A file Evalsite exported from its own run (records with an `evalsite` block) brings its
  criterion (created or reused, by name and version) and its judge (provider/model at the run's
  temperature): decisionN is sample N-1 and its label is the criterion's label it names.
Re-importing the same file changes nothing (items unchanged, verdicts unchanged).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from judging.formats.textflow import TextflowFile, TextflowRecord, parse_textflow
from judging.metrics import group_vote
from judging.models import Criterion, Judge
from judging.services.imports.batches import ItemLookup, PendingVerdict, VerdictBatch
from judging.services.imports.criteria import (
    CriterionDefinition,
    criterion_ensure,
    judge_ensure,
    latest_criterion,
)
from reviews.evidence import EvidenceError
from reviews.formats.canonical import resolve_evidence_path
from reviews.formats.detect import Sniffer
from reviews.formats.errors import FormatError, check_json_size
from reviews.models import (
    ItemSource,
    ItemStatus,
)
from reviews.services.files.documents import document_for_bytes
from reviews.services.imports.pipeline import ImportContext
from reviews.services.items import items_upsert, source_attach

CORRECTNESS = CriterionDefinition(
    name="correctness",
    labels=["Correct", "Incorrect"],
    positive_label="Correct",
    text="Is the response correct, given the reference answer? (TextFlow evaluation)",
)
DEFAULT_JUDGE = "openai/gpt-4o"
TEXTFLOW_TEMPERATURE = 0.2
_SAFE_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _where(record: TextflowRecord) -> str:
    return f'key "{record.file_key}"'


def majority_label(record: TextflowRecord) -> str | None:
    """The judge's majority over normalised decisions (`unparsed` abstains); None on a tie."""
    return group_vote([None if v == "unparsed" else v for v in record.verdicts])


def record_flags(record: TextflowRecord) -> dict[str, Any]:
    majority = majority_label(record) if record.has_decisions else None
    final = record.final_decision
    return {
        "majority": majority,
        "split_vote": record.split_vote,
        "three_way_split": record.three_way_split,
        "final_decision_disagrees": final is not None and record.label_of(final) != majority,
    }


def _item_fields(record: TextflowRecord, variant: str) -> dict[str, Any]:
    textflow = {
        "flowchart_key": record.key,
        "question_id": record.question_id,
        "file_key": record.file_key,
        "variant": variant,
        "final_decision": record.final_decision,
        **record_flags(record),
        "extra": record.extra,
    }
    if record.evalsite is not None:  # kept so that exporting this project writes it back
        textflow["evalsite"] = record.evalsite
    return {
        "title": f"{record.key} · question {record.question_id}"[:300],
        "input": record.question,
        "output": record.response,
        "expected": record.answer if variant == "upstream" else record.answers,
        "metadata": {"textflow": textflow},
    }


def _definition(parsed: TextflowFile) -> CriterionDefinition:
    """`correctness`, or the criterion an Evalsite export names."""
    block = parsed.records[0].evalsite
    if block is None:
        return CORRECTNESS
    return CriterionDefinition(
        name=block["criterion"],
        labels=list(block["labels"]),
        version=str(block.get("criterion_version") or "1"),
        positive_label=block.get("positive_label") or "",
        text=block.get("criterion_text") or "",
    )


def _criterion(parsed: TextflowFile, context: ImportContext) -> Criterion:
    definition = _definition(parsed)
    existing = latest_criterion(project=context.project, name=definition.name)
    if existing is None:
        criterion, _ = criterion_ensure(project=context.project, definition=definition)
        context.counts["criteria"] += 1
        return criterion
    if not set(definition.labels) <= set(existing.labels):
        raise FormatError(
            f"criterion {definition.name!r} exists with labels {existing.labels}; the file's "
            f"verdicts need {definition.labels}",
            file=context.file,
        )
    return existing


def _upsert_items(parsed: TextflowFile, context: ImportContext) -> dict[str, int]:
    """Create or update one item per record (through reviews); returns external id -> pk."""
    upserted = items_upsert(
        actor=context.actor,
        project=context.project,
        rows=[(r.item_id, _item_fields(r, parsed.variant)) for r in parsed.records],
        source={"file": context.file},
        new_status=ItemStatus.RESOLVED,  # no questions until send_to_humans asks for labels
    )
    for what in ("created", "updated", "revised", "unchanged"):
        context.counts[f"items_{what}"] += upserted.counts[what]
    return upserted.pks


def _image_path(key: str, base: Path | None) -> str | None:
    if base is None or not _SAFE_KEY.match(key):
        return None  # no folder to look in, or a key that is no plain file name
    for candidate in (f"images/{key}.png", f"images/{key}.jpeg"):
        if resolve_evidence_path(base, candidate).is_file():
            return candidate
    return None


def _attach_images(parsed: TextflowFile, pks: dict[str, int], context: ImportContext) -> None:
    """Optional evidence: `images/<key>.png` (or `.jpeg`) relative to the file, if it exists."""
    found = {key: _image_path(key, context.base_dir) for key in {r.key for r in parsed.records}}
    wanted = [(r, found[r.key]) for r in parsed.records if found[r.key]]
    if not wanted:
        return
    attached = set(
        ItemSource.objects.filter(item_id__in=[pks[r.item_id] for r, _ in wanted]).values_list(
            "item_id", "artifact_id"
        )
    )
    documents = {}
    for record, relative in wanted:
        if (pks[record.item_id], relative) in attached:
            continue
        if relative not in documents:
            try:
                data = resolve_evidence_path(context.base_dir, relative).read_bytes()
                documents[relative], created = document_for_bytes(
                    data, name=relative, written=context.written
                )
            except (EvidenceError, ValueError) as error:
                raise FormatError(
                    str(error), file=context.file, record=_where(record), path="$.key"
                ) from None
            context.counts["documents"] += int(created)
        source_attach(
            item_id=pks[record.item_id], artifact_id=relative, document=documents[relative]
        )


class TextflowJudges:
    """Which judge gave which decision: one model group (upstream) or one judge per model."""

    def __init__(self, parsed: TextflowFile, context: ImportContext):
        self.context = context
        self.variant = parsed.variant
        self.evalsite = parsed.records[0].evalsite
        self.cache: dict[tuple, Judge] = {}
        named = [r.judge_models for r in parsed.records if r.has_decisions]
        self.models_named = all(m is not None for models in named for m in models)

    def _judge(self, provider: str, model: str, temperature: float | None) -> Judge:
        key = (provider, model, temperature)
        if key not in self.cache:
            judge, created = judge_ensure(
                project=self.context.project,
                provider=provider,
                model=model,
                temperature=temperature,
            )
            self.context.counts["judges"] += int(created)
            self.cache[key] = judge
        return self.cache[key]

    def upstream_judge(self) -> Judge:
        name = self.context.options.get("judge") or DEFAULT_JUDGE
        temperature = TEXTFLOW_TEMPERATURE
        if self.evalsite is not None:  # the run's own judge
            name, temperature = self.evalsite["judge"], self.evalsite.get("temperature")
        provider, sep, model = name.partition("/")
        if not (sep and provider and model):
            raise FormatError(f"judge {name!r}: write it as provider/model", file=self.context.file)
        return self._judge(provider, model, temperature)

    def for_decisions(self, record: TextflowRecord) -> list[tuple[Judge, int]]:
        """(judge, sample index) for each of the record's three decisions."""
        if self.variant == "upstream":
            judge = self.upstream_judge()
            return [(judge, index) for index in range(len(record.raw_decisions))]
        out, seen = [], {}
        for position, obj in enumerate(record.decision_objects or []):
            judge = self._derived_judge(obj, position)
            seen[judge.pk] = seen.get(judge.pk, -1) + 1
            out.append((judge, seen[judge.pk]))
        return out

    def _derived_judge(self, obj: dict[str, Any], position: int) -> Judge:
        if not self.models_named:
            return self._judge("textflow", f"decision{position + 1}", None)
        model = obj.get("model") or obj.get("judge")
        provider = obj.get("provider") if isinstance(obj.get("provider"), str) else None
        if provider is None:
            provider, sep, rest = model.partition("/")
            provider, model = (provider, rest) if sep and rest else ("unknown", model)
        return self._judge(provider, model, None)

    def notes(self) -> list[str]:
        if self.evalsite is not None:
            block = self.evalsite
            return [
                f"Evalsite run of {block.get('judge_name')} v{block.get('judge_version')}: judge "
                f"{self.upstream_judge().name}, criterion {block['criterion']!r}, one "
                "decision per sample (one model group)"
            ]
        if self.variant == "upstream":
            return [
                f"judge: {self.upstream_judge().name} at temperature 0.2, three samples "
                "per item (one model group)"
            ]
        names = sorted({j.name for j in self.cache.values()})
        why = (
            ""
            if self.models_named
            else " (the file does not name the models: one judge per decision position)"
        )
        return [f"derived variant: decisions from {len(names)} judges {names}{why}"]


def _queue_verdicts(
    parsed: TextflowFile,
    criterion: Criterion,
    judges: TextflowJudges,
    batch: VerdictBatch,
    context: ImportContext,
) -> None:
    for record in parsed.records:
        context.tick()
        if not record.has_decisions:
            continue  # an answers-only record: an item without verdicts
        objects = record.decision_objects or [{} for _ in record.raw_decisions]
        pairs = judges.for_decisions(record)
        for raw, label, obj, (judge, sample) in zip(
            record.raw_decisions, record.verdicts, objects, pairs, strict=True
        ):
            explanation = obj.get("explanation")
            batch.add(
                PendingVerdict(
                    item_id=record.item_id,
                    criterion=criterion,
                    judge=judge,
                    label=label,
                    where=_where(record),
                    sample=sample,
                    raw=raw,
                    explanation=explanation if isinstance(explanation, str) else "",
                    extra={k: v for k, v in obj.items() if k not in {"verdict", "explanation"}},
                )
            )
    batch.flush()


def _summary_notes(parsed: TextflowFile) -> list[str]:
    records = [r for r in parsed.records if r.has_decisions]
    flags = {r.file_key: record_flags(r) for r in records}
    notes = []
    splits = [k for k, f in flags.items() if f["split_vote"]]
    if splits:
        notes.append(
            f"{len(splits)} split votes (the judge's decisions disagree): the first "
            "candidates for human review"
        )
    three_way = [k for k, f in flags.items() if f["three_way_split"]]
    if three_way:
        notes.append(
            f"{len(three_way)} three-way splits flagged ambiguous: keys {', '.join(three_way)}"
        )
    disagree = [
        f'key "{k}" (final {r.final_decision!r}, majority {flags[k]["majority"] or "none: a tie"})'
        for r in records
        if flags[(k := r.file_key)]["final_decision_disagrees"]
    ]
    if disagree:
        notes.append(
            f"{len(disagree)} final_decision values are not the majority of the "
            f"normalised decisions (flagged in item metadata): {'; '.join(disagree)}"
        )
    if parsed.accuracy is not None:
        judged = [r for r in records if r.final_decision is not None]
        majorities = Counter(flags[r.file_key]["majority"] for r in records)
        positive = parsed.records[0].positive
        labels = _definition(parsed).labels
        counted = ", ".join(f"{majorities[label]} {label}" for label in labels)
        notes.append(
            f"{'Pass rate' if parsed.records[0].evalsite else 'TextFlow accuracy'} "
            f'(final_decision exactly "{positive}"): {sum(r.correct for r in judged)}/'
            f"{len(judged)} = {parsed.accuracy:.3f}; recomputed majority: {counted}, "
            f"{majorities[None]} without a majority"
        )
    return notes


def _looks_like_textflow(obj: dict) -> bool:
    """A first value that is an object with `decision1` or `response`."""
    first = next(iter(obj.values()), None)
    return isinstance(first, dict) and bool({"decision1", "response"} & first.keys())


class TextflowImporter:
    """FORMATS §1 file -> items, the `correctness` criterion and the judge's verdicts."""

    sniffer = Sniffer("textflow", _looks_like_textflow)
    rank = 4

    def __init__(self, context: ImportContext):
        self.context = context
        self.parsed: TextflowFile | None = None

    def validate(self, path: Path) -> None:
        check_json_size(path.stat().st_size, file=self.context.file)
        self.parsed = parse_textflow(path.read_bytes(), file=self.context.file)

    def write(self, path: Path) -> None:
        context, parsed = self.context, self.parsed
        if parsed is None:
            raise RuntimeError("validate() first: it parses the file")
        criterion = _criterion(parsed, context)
        pks = _upsert_items(parsed, context)
        context.items_named(pks.values())
        _attach_images(parsed, pks, context)
        lookup = ItemLookup(context, known=pks)
        judges = TextflowJudges(parsed, context)
        _queue_verdicts(parsed, criterion, judges, VerdictBatch(context, lookup), context)
        context.notes.append(f"TextFlow {parsed.variant} variant, {len(parsed.records)} samples")
        if any(r.has_decisions for r in parsed.records):
            context.notes.extend(judges.notes())
        context.notes.extend(_summary_notes(parsed))
        if context.options.get("label_map") or context.options.get("clip"):
            context.notes.append(
                "--map and --clip do not apply to TextFlow files (labels are "
                "normalised to Correct / Incorrect / unparsed)"
            )
