"""Item revisions: an import that changes an item's content numbers a new revision.

An item's content is its input, output, reference (`expected`) and evidence. Content is
compared as JSON values: an object's key order and the file's record order do not matter, a
list's order does, and `1` equals `1.0`. When it changes, the content being replaced is kept
as an `ItemRevision` row (history is append-only) and `Item.revision` counts on. Verdicts,
judge calls, human labels, answers and resolutions record the revision they were given on;
figures count only those on the current one, and the item's criterion questions are asked
of its raters again (`items.questions_ask_again`). Title, metadata and slices are not
content: changing them makes no revision.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from reviews.models import Item, ItemRevision

CONTENT_FIELDS = ("input", "output", "expected")


def content_sha256(*, input: Any, output: Any, expected: Any, evidence: Iterable[str]) -> str:
    """The content fingerprint: SHA-256 of the canonical JSON (sorted keys, no whitespace,
    UTF-8) of `{"input", "output", "reference", "evidence"}`, evidence as its sorted artifact
    ids (the order a file lists them in is not content)."""
    body = {
        "input": input,
        "output": output,
        "reference": expected,
        "evidence": sorted(set(evidence)),
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def content_changes(item: Item, fields: Mapping[str, Any], evidence_added: Sequence[str]) -> bool:
    """Whether setting `fields` and adding `evidence_added` changes `item`'s content."""
    return bool(evidence_added) or any(
        k in fields and getattr(item, k) != fields[k] for k in CONTENT_FIELDS
    )


def revision_keep(item: Item, *, evidence: Iterable[str], file: str = "") -> int:
    """Before new content is set on `item`: keep its current content (with its `evidence`
    artifact ids) as the revision it is, and number the next one on `item` (the caller
    saves `revision` with the new content). Returns the new revision number."""
    kept = sorted(set(evidence))
    ItemRevision.objects.create(
        item=item,
        number=item.revision,
        input=item.input,
        output=item.output,
        expected=item.expected,
        evidence=kept,
        sha256=content_sha256(
            input=item.input, output=item.output, expected=item.expected, evidence=kept
        ),
        replaced_by_file=file[:255],
    )
    item.revision += 1
    return item.revision


@dataclass(frozen=True)
class EarlierOutput:
    """An earlier revision's output beside the current one, for the item pages."""

    number: int
    replaced_at: datetime
    replaced_by_file: str
    diff: str  # unified diff, earlier -> current output


def _lines(value: Any) -> list[str]:
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    return (text or "").splitlines()


def earlier_outputs(item: Item) -> list[EarlierOutput]:
    """Each earlier revision of `item`, newest first, with the diff of its output to the
    current one (one query)."""
    current = _lines(item.output)
    return [
        EarlierOutput(
            number=kept.number,
            replaced_at=kept.replaced_at,
            replaced_by_file=kept.replaced_by_file,
            diff="\n".join(
                difflib.unified_diff(
                    _lines(kept.output),
                    current,
                    f"output, revision {kept.number}",
                    f"output, revision {item.revision} (current)",
                    lineterm="",
                )
            ),
        )
        for kept in item.revisions.order_by("-number")
    ]
