"""What a judge run asks: one planned call per item, sample and (pairwise) display order.

A call's fingerprint is the SHA-256 of everything that decides its answer: provider, model,
temperature, sample index, the prompt version's SHA-256 and the rendered request (instructions,
data, image digests, reply schema), and from an item's second revision on, the revision (content
changed back to an earlier one is asked again: its verdict must be on the current revision). The
same fingerprint is the same call: it is made once.
"""

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

from judging.formats.replies import criterion_schema, pairwise_schema
from judging.models import JudgeVersion
from judging.providers import ModelRequest, Part
from judging.services.runs.prompts import data_block, render_instructions
from reviews.models import Item

ORDERS = ("AB", "BA")


class PlanError(ValueError):
    """The run cannot be planned (an item lacks what the judge needs); names the item."""


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


def _data(item: Item, version: JudgeVersion, order: str) -> dict:
    data = {"input": item.input, "output": item.output, "reference": item.expected}
    if not order:
        return data
    pair = (item.metadata or {}).get("pairwise", {}).get(version.criterion.name)
    if not pair:
        raise PlanError(
            f"item {item.external_id!r} has no answers A and B for pairwise criterion "
            f"{version.criterion.name!r}"
        )
    data["first"], data["second"] = pair[order[0]], pair[order[1]]
    return data


def plan_calls(version: JudgeVersion, items: Iterator[Item]) -> Iterator[PlannedCall]:
    """Lazily, item by item (a 10k-item run never holds every request at once)."""
    criterion = version.criterion
    system = _instructions(version)
    schema = pairwise_schema() if criterion.pairwise else criterion_schema(criterion.labels)
    orders = ORDERS if criterion.pairwise else ("",)
    for item in items:
        for order in orders:
            parts = (Part(text=data_block(_data(item, version, order))),)
            request = ModelRequest(
                system=system, parts=parts, schema=schema, temperature=version.temperature
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
