"""Importing `visual_evals` review files (FORMATS §2): one .json, a .jsonl, or a .zip bundle.

Per case: the item, its evidence sources, consensus claims (the generated reference's rows),
one `field` question per review item with its candidate claims. The original record is kept on
the item so an export writes back every key it came with.

Re-importing a case is idempotent; if its consensus rows changed, a new generated reference
version supersedes the old one, and new disputed paths get new questions. An approved, signed
file imports as ground truth (an imported Approval) with the same SHA-256.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from reviews.formats.bundle import BundleCase, ReviewBundle
from reviews.formats.canonical import canonical_rows
from reviews.formats.detect import Sniffer
from reviews.formats.errors import FormatError, check_json_size
from reviews.formats.review_file import (
    ReviewFile,
    iter_review_jsonl,
    known_fields,
    parse_review_json,
)
from reviews.formats.signed import citations_of, format_approved_at
from reviews.models import (
    Claim,
    Decision,
    EventKind,
    Item,
    ItemStatus,
    Question,
    QuestionKind,
    QuestionStatus,
    Reference,
    Resolution,
)
from reviews.services.approval.ground_truth import approval_import, generated_add
from reviews.services.events import event_record
from reviews.services.files.documents import read_evidence
from reviews.services.imports.approved import Outcome, approved_record_decision
from reviews.services.imports.pipeline import ImportContext
from reviews.services.imports.registry import ImportKind, register_import
from reviews.services.imports.review_evidence import (
    EvidenceOpener,
    folder_opener,
    is_zip,
    item_sources,
    open_bundle,
)
from reviews.services.imports.staging import Staging, in_short_transactions
from reviews.services.items import places_given_back
from reviews.services.rating.resolution import item_status_refresh


def _looks_like_review(obj: dict) -> bool:
    return "review_items" in obj or (
        "case_id" in obj and bool(obj.keys() & {"sources", "claims", "expected_fields"})
    )


class ReviewImporter:
    """A review .json, a .jsonl of them, or a .zip bundle with their evidence."""

    sniffer = Sniffer("review", _looks_like_review, lines=True, container="zip")
    rank = 0  # the first format offered

    def __init__(self, context: ImportContext):
        self.context = context

    def validate(self, path: Path) -> None:
        if is_zip(path):
            open_bundle(path, self.context).close()
        else:
            for _ in self._reviews(path):
                pass

    def write(self, path: Path) -> None:
        with self._cases(path) as cases:
            for case in cases:
                case.write(self.context)

    def write_staged(self, path: Path, staging: Staging, finish: Callable[[], None]) -> None:
        """New cases in short transactions into the holding project; the cases of items the
        project has (and approved files, whose signatures name the project) in the last one,
        which publishes the new items: see import_staging."""
        context = self.context
        with self._cases(path) as cases:
            fresh, deferred = staging.split_new(
                cases,
                key=lambda case: case.review.case_id,
                later=lambda case: case.review.status == "approved",
            )
            in_short_transactions(fresh, lambda case: case.write(context))
            with transaction.atomic():
                staging.publish(file=context.file)
                for case in deferred:
                    case.write(context)
                finish()

    @contextmanager
    def _cases(self, path: Path) -> Iterator[Iterator[_Case]]:
        """The file's cases in order, each with the opener of its evidence."""
        if is_zip(path):
            with open_bundle(path, self.context) as bundle:
                yield (_bundle_case(bundle, case, self.context) for case in bundle.cases)
            return
        opener = folder_opener(path.parent, self.context)
        yield (
            _Case(review, opener, f'case "{review.case_id}"', self.context.file)
            for review in self._reviews(path)
        )

    def _reviews(self, path: Path) -> Iterator[ReviewFile]:
        file = self.context.file
        if path.suffix.lower() == ".jsonl" or file.lower().endswith(".jsonl"):
            with path.open("rb") as stream:
                yield from iter_review_jsonl(stream, file=file)
        else:
            check_json_size(path.stat().st_size, file=file)
            yield parse_review_json(path.read_bytes(), file=file)


@dataclass(frozen=True)
class _Case:
    """One review case of a file, with where its evidence comes from and how errors name it."""

    review: ReviewFile
    opener: EvidenceOpener
    record: str
    file: str

    def write(self, context: ImportContext) -> None:
        import_review(self.review, context, opener=self.opener, record=self.record, file=self.file)


def _bundle_case(bundle: ReviewBundle, case: BundleCase, context: ImportContext) -> _Case:
    def read(relative: str) -> bytes:
        size = bundle.evidence_size(relative)  # refused by size before it is inflated
        with bundle.open_evidence(relative) as stream:
            return read_evidence(stream, name=relative, size=size)

    record = f'case "{case.review.case_id}"'
    return _Case(case.review, read, record, f"{context.file}/{case.member}")


def _claim(item, sources, cited, *, path, providers, position, question=None) -> Claim:
    """The claim one cited value makes for `path` (a consensus row or a question's candidate)."""
    source = sources.get(cited.reference_id) if cited.reference_id else None
    return Claim(
        item=item,
        question=question,
        path=path,
        value=cited.expected_value,
        providers=providers,
        source=source,
        page=source.page if source else None,
        quote=cited.evidence or "",
        bbox=list(cited.bbox) if cited.bbox else None,
        confidence=cited.confidence,
        position=position,
    )


def _generated_rows(review: ReviewFile) -> list[dict]:
    return canonical_rows(
        {"path": c.path, "expected_value": c.expected_value} for c in review.claims
    )


def import_review(
    review: ReviewFile,
    context: ImportContext,
    *,
    opener: EvidenceOpener,
    record: str,
    file: str | None = None,
) -> Item:
    file = file or context.file
    context.tick()
    item, created = Item.objects.get_or_create(
        project=context.new_items_project,
        external_id=review.case_id,
        defaults={"title": review.case_id},
    )
    context.items_named([item.pk])
    sources = item_sources(review, item, context, opener, record, file)
    generated, changed = generated_add(
        item,
        _generated_rows(review),
        actor=context.actor,
        source_name=context.file,
        reason="" if created else "re-imported with changed consensus rows",
    )
    if changed:
        context.counts["references"] += 1
        item.claims.filter(question__isnull=True).delete()  # consensus claims follow the rows
        Claim.objects.bulk_create(
            _claim(item, sources, c, path=c.path, providers=c.providers, position=i)
            for i, c in enumerate(review.claims)
        )
    new_questions = _questions(review, item, sources, context)
    if new_questions and not created:
        places_given_back([item.pk])
    known = _kept_fields(review, context, record)
    if created or changed or new_questions:
        _item_imported(item, context, known=known, generated=generated, created=created)
    else:
        context.counts["items_unchanged"] += 1
    if review.status == "approved":
        _import_approved(review, item, context, record=record, file=file)
    else:
        _questions_settled(review, item, context)
    _refresh_status(item, new_questions=bool(new_questions))
    return item


def _kept_fields(review: ReviewFile, context: ImportContext, record: str) -> dict:
    """The record's keys that an export writes back; the import notes the unknown ones."""
    known, unknown = known_fields(review)
    if unknown:
        shown = ", ".join(unknown[:5]) + (
            f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        )
        context.notes.append(f"{record}: unknown keys not kept: {shown}")
    return known


def _item_imported(
    item: Item, context: ImportContext, *, known: dict, generated: Reference, created: bool
) -> None:
    """A new or changed item keeps the record (`known`) and gets an `imported` event."""
    item.metadata = {**item.metadata, "review_file": known}
    item.save(update_fields=["metadata", "updated_at"])
    event_record(
        item=item,
        actor=context.actor,
        kind=EventKind.IMPORTED,
        data={"file": context.file, "generated_version": generated.version, "new": created},
    )
    context.counts["items_created" if created else "items_updated"] += 1


def _questions(review, item, sources, context) -> list[Question]:
    existing = set(item.questions.filter(kind=QuestionKind.FIELD).values_list("key", flat=True))
    created = []
    for position, disputed in enumerate(review.review_items):
        if disputed.path in existing:
            continue
        question = Question.objects.create(
            item=item,
            kind=QuestionKind.FIELD,
            key=disputed.path,
            reason=disputed.reason,
            position=position,
        )
        Claim.objects.bulk_create(
            _claim(
                item,
                sources,
                c,
                path=disputed.path,
                providers=[c.provider],
                position=i,
                question=question,
            )
            for i, c in enumerate(disputed.candidates)
        )
        created.append(question)
    context.counts["questions"] += len(created)
    return created


def _import_approved(review, item, context, *, record, file) -> None:
    """An approved file: ground truth only if the policy accepts its signature (see
    approved_imports); otherwise refused, or with `as_generated` its rows become a generated
    reference and its questions stay open for review here."""
    rows = review.reference_rows()
    block = review.approval.model_dump(mode="json") if review.approval else None
    claims = {
        "approved_by": review.approved_by,
        "approved_at": format_approved_at(review.approved_at),
    }
    decision = approved_record_decision(
        project=context.project,
        item=item,
        case_id=review.case_id,
        rows=rows,
        block=block,
        claims=claims,
        citations=citations_of(review, (row["path"] for row in rows)),
    )
    if decision.outcome == Outcome.SAME:
        return
    if decision.outcome == Outcome.REFUSE:
        if not context.options.get("as_generated"):
            raise FormatError(
                f"not imported as ground truth: {decision.reason}. Import it with "
                "--as-generated to review and approve it here",
                file=file,
                record=record,
                path="$.approval",
            )
        _, changed = generated_add(
            item,
            rows,
            actor=context.actor,
            source_name=context.file,
            reason=f"approved file imported as generated: {decision.reason}",
        )
        context.counts["references"] += int(changed)
        context.notes.append(f"{record}: imported as generated ({decision.reason})")
        return
    _resolve_from_file(review, item, context)
    approval_import(
        actor=context.actor,
        item=item,
        rows=rows,
        block=block,
        signer=decision.signer,
        source_name=context.file,
    )
    context.counts["ground_truth"] += 1


def _resolve_from_file(review, item, context) -> None:
    """The signed decisions settle the item's open questions (method `imported`)."""
    questions = {q.key: q for q in item.questions.filter(kind=QuestionKind.FIELD)}
    for disputed in review.review_items:
        question = questions[disputed.path]
        if question.status == QuestionStatus.RESOLVED:
            continue
        Resolution.objects.create(
            question=question,
            decision=Decision.SET if disputed.decision == "set" else Decision.OMIT,
            value=disputed.value if disputed.decision == "set" else None,
            method=Resolution.Method.IMPORTED,
            reason=f"decided in {context.file}" + (f": {disputed.note}" if disputed.note else ""),
            revision=item.revision,
        )
        question.status = QuestionStatus.RESOLVED
        question.save(update_fields=["status"])


def _questions_settled(review, item, context) -> None:
    """An earlier question on a path this file settles (a consensus row, no longer disputed:
    a later second read agreed, say) is closed: a `superseded` resolution with the file's
    value and the reason, and a timeline line. Answers already given stay in the history."""
    settled = {c.path: c.expected_value for c in review.claims}
    disputed = {d.path for d in review.review_items}
    still_open = (
        item.questions.filter(kind=QuestionKind.FIELD, key__in=settled.keys() - disputed)
        .exclude(status=QuestionStatus.RESOLVED)
        .order_by("pk")
    )
    for question in still_open:
        reason = f"superseded: {context.file} settles {question.key} (no longer disputed)"
        Resolution.objects.create(
            question=question,
            decision=Decision.SET,
            value=settled[question.key],
            method=Resolution.Method.SUPERSEDED,
            reason=reason,
        )
        question.status = QuestionStatus.RESOLVED
        question.save(update_fields=["status"])
        event_record(
            item=item,
            actor=context.actor,
            kind=EventKind.RESOLVED,
            data={
                "question": question.key,
                "method": "superseded",
                "decision": "set",
                "reason": reason,
            },
        )
        context.counts["questions_superseded"] += 1


def _refresh_status(item: Item, *, new_questions: bool) -> None:
    """An approved item stays approved unless the file disputes a field it never asked: then it
    opens for its raters again, and its next approval is a correction."""
    if item.status != ItemStatus.APPROVED or new_questions:
        item_status_refresh(item)


register_import(ImportKind.FORMAT, ReviewImporter.sniffer.format, ReviewImporter)
