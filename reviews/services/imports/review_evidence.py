"""Where a review file's evidence comes from (a folder beside it, or its .zip bundle), and
the item's sources stored from it: every way a cited file can be missing, damaged or different
from the one imported before is an error naming file, record and path."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path

from reviews.evidence import EvidenceError, inspect_evidence
from reviews.formats.bundle import ZIP_ERRORS, ReviewBundle, read_review_bundle
from reviews.formats.errors import FormatError
from reviews.formats.review_file import ReviewFile, resolve_evidence_path
from reviews.models import Item, ItemSource
from reviews.services.files.documents import document_for_bytes, read_evidence
from reviews.services.imports.pipeline import ImportContext

EvidenceOpener = Callable[[str], bytes]


def is_zip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == b"PK\x03\x04"


def folder_opener(base_dir: Path, context: ImportContext) -> EvidenceOpener:
    def read(relative: str) -> bytes:
        target = resolve_evidence_path(base_dir, relative)
        if not target.is_file():
            raise FileNotFoundError(relative)
        return read_evidence(target, name=relative)  # refused by size before it is read

    return read


def open_bundle(path: Path, context: ImportContext) -> ReviewBundle:
    try:
        return read_review_bundle(path, file=context.file)
    except zipfile.BadZipFile as error:
        raise FormatError(f"not a readable zip file ({error})", file=context.file) from None


def read_source(source, opener, *, file, record, where) -> bytes:
    """The cited evidence file's bytes; every way it can be missing or damaged is named."""
    try:
        return opener(source.path)
    except FileNotFoundError:
        reason = f"evidence file {source.path!r} not found"
        raise FormatError(reason, file=file, record=record, path=where) from None
    except ValueError as error:  # a path escaping its folder
        raise FormatError(str(error), file=file, record=record, path=where) from None
    except ZIP_ERRORS as error:
        reason = f"corrupt zip member {source.path!r} ({error})"
        raise FormatError(reason, file=file, record=record, path=where) from None


def item_sources(
    review: ReviewFile, item: Item, context, opener, record, file
) -> dict[str, ItemSource]:
    """The item's sources, new ones stored. Evidence is always read and checked: a source the
    item already has must come with the same content (a re-import compares, never swaps)."""
    by_artifact = {s.artifact_id: s for s in item.sources.select_related("document")}
    documents: dict[str, object] = {}
    for index, source in enumerate(review.sources):
        where = f"$.sources[{index}].path"
        if source.normalised_path not in documents:
            data = read_source(source, opener, file=file, record=record, where=where)
            stored = by_artifact.get(source.artifact_id)
            try:
                if stored is not None:
                    # Bad evidence is refused whatever the review says; other content too.
                    if inspect_evidence(data, name=source.path).sha256 != stored.document.sha256:
                        raise FormatError(
                            f"case {review.case_id!r} exists with other evidence "
                            f"({source.path!r} differs from the file imported before); import "
                            "it under a new case id or as a correction",
                            file=file,
                            record=record,
                            path=where,
                        )
                    continue
                document, created = document_for_bytes(
                    data, name=source.path, written=context.written
                )
            except EvidenceError as error:
                raise FormatError(str(error), file=file, record=record, path=where) from None
            documents[source.normalised_path] = document
            context.counts["documents"] += int(created)
            if created and context.staging:
                context.staging.documents.append(document.pk)
        if source.artifact_id in by_artifact:
            continue
        by_artifact[source.artifact_id] = ItemSource.objects.create(
            item=item,
            artifact_id=source.artifact_id,
            document=documents[source.normalised_path],
            path=source.path,
            page=source.metadata.page,
            authority=source.authority,
            metadata=source.metadata.model_dump(mode="json"),
            position=index,
        )
    return by_artifact
