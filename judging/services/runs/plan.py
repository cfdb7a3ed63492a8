"""What a judge run asks: one planned call per item, sample and (pairwise) display order.

A call's fingerprint is the SHA-256 of everything that decides its answer: provider, model,
temperature, sample index, the prompt version's SHA-256 and the rendered request (instructions,
data, the SHA-256 of every image's bytes, reply schema), and from an item's second revision on,
the revision (content changed back to an earlier one is asked again: its verdict must be on the
current revision). The same fingerprint is the same call: it is made once.

A visual judge's request carries the item's evidence pages as images after the data block
(run_evidence.py). A pairwise item without both answers cannot be judged: it is left out
(the runner counts it as skipped), never an error.
"""

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from judging.formats.replies import criterion_schema, pairwise_schema
from judging.models import JudgeVersion
from judging.providers import ModelRequest, Part
from judging.services.runs.evidence import SEEN_RULE, evidence_seen
from judging.services.runs.prompts import data_block, render_instructions
from reviews.models import Item

ORDERS = ("AB", "BA")


@dataclass(frozen=True)
class PlannedCall:
    item_id: int
    revision: int  # the item's, as the request shows it
    sample: int
    display_order: str
    fingerprint: str
    request: ModelRequest
    record: dict  # the request as stored (images by digest, never their bytes)


def fingerprint(version: JudgeVersion, sample: int, record: dict, revision: int = 1) -> str:
    identity = {
        "provider": version.provider,
        "model": version.model,
        "temperature": version.temperature,
        "sample": sample,
        "prompt_sha256": version.prompt_sha256,
        "request": record,
    }
    if revision > 1:  # revision 1 keeps the fingerprints calls had before revisions existed
        identity["item_revision"] = revision
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def request_record(request: ModelRequest) -> dict:
    return {
        "system": request.system,
        "parts": [
            {"image_sha256": hashlib.sha256(p.image).hexdigest(), "media_type": p.media_type}
            if p.is_image
            else {"text": p.text}
            for p in request.parts
        ],
        "schema": request.schema,
    }


def _instructions(version: JudgeVersion) -> str:
    criterion = version.criterion
    return render_instructions(
        version.prompt,
        {
            "criterion": criterion.name,
            "criterion_text": criterion.text,
            "labels": ", ".join(str(label) for label in criterion.labels),
        },
    )


def has_pair(metadata: dict | None, criterion_name: str) -> bool:
    """Does an item's metadata hold answers A and B for this pairwise criterion?"""
    pairs = (metadata or {}).get("pairwise")
    pair = pairs.get(criterion_name) if isinstance(pairs, dict) else None
    return isinstance(pair, dict) and "A" in pair and "B" in pair


def _data(item: Item, version: JudgeVersion, order: str) -> dict:
    data = {"input": item.input, "output": item.output, "reference": item.expected}
    if order:
        pair = item.metadata["pairwise"][version.criterion.name]
        data["first"], data["second"] = pair[order[0]], pair[order[1]]
    return data


def plan_calls(version: JudgeVersion, items: Iterator[Item]) -> Iterator[PlannedCall]:
    """Lazily, item by item (a 10k-item run never holds every request at once). Pairs without
    both answers are left out (the runner counts them as `skipped`)."""
    criterion = version.criterion
    system = _instructions(version)
    schema = pairwise_schema() if criterion.pairwise else criterion_schema(criterion.labels)
    orders = ORDERS if criterion.pairwise else ("",)
    pages: dict = {}  # rendered pages, shared by items of one document
    for item in items:
        if criterion.pairwise and not has_pair(item.metadata, criterion.name):
            continue
        seen = evidence_seen(item, version, pages)
        for order in orders:
            data = _data(item, version, order)
            parts = (Part(text=data_block(data | (seen.data if seen else {}))),)
            if seen:
                parts += seen.images
            request = ModelRequest(
                system=system + (SEEN_RULE if seen else ""),
                parts=parts,
                schema=schema,
                temperature=version.temperature,
            )
            record = request_record(request)
            for sample in range(version.samples):
                yield PlannedCall(
                    item.pk,
                    item.revision,
                    sample,
                    order,
                    fingerprint(version, sample, record, item.revision),
                    request,
                    record,
                )
