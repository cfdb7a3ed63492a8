"""Request and response bodies.

Batch records are NOT validated here: they go, as written, through the same importer as a file
(`reviews.services.imports.pipeline.file_import`), so the API refuses exactly what an upload refuses,
with the same message. The OpenAPI document still shows their real schemas (the pydantic
models of `reviews.formats`), for documentation only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from evalsite_client.models import ImportReport
from ninja import Field, Schema
from pydantic import WithJsonSchema, model_validator

from reviews.formats.records import record_adapter
from reviews.formats.review_file import ReviewFile
from reviews.services.imports.records import record_schemas


def _inlined(schema: dict) -> dict:
    """`schema` with its `$defs` written in place: pydantic would try to resolve any `$ref`
    handed to `WithJsonSchema` against the enclosing model, and fail."""
    defs = schema.pop("$defs", {})

    def walk(node):
        if isinstance(node, dict):
            if "$ref" in node:
                target = defs[node["$ref"].rsplit("/", 1)[-1]]
                return walk({**target, **{k: v for k, v in node.items() if k != "$ref"}})
            # A discriminator's mapping names $defs entries that no longer exist.
            return {
                k: walk(v)
                for k, v in node.items()
                if not (k == "discriminator" and isinstance(v, dict) and "mapping" in v)
            }
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


RecordList = Annotated[
    list[Any],
    WithJsonSchema(
        {
            "type": "array",
            "items": _inlined(record_adapter(record_schemas()).json_schema()),
            "description": "FORMATS §4 typed records, one per JSONL line of an import file.",
        }
    ),
]
ReviewList = Annotated[
    list[Any],
    WithJsonSchema(
        {
            "type": "array",
            "items": _inlined(ReviewFile.model_json_schema()),
            "description": "FORMATS §2 review objects (one case each).",
        }
    ),
]


class ItemsBatchIn(Schema):
    format: Literal["jsonl", "review"]
    as_generated: bool = Field(
        default=False,
        description=(
            "Approved reviews whose signature this project does not accept (untrusted key, "
            "format 1, another project or case, not newer than the current version) are "
            "refused; with true their rows come in as a generated reference to review again."
        ),
    )
    records: RecordList | None = None
    reviews: ReviewList | None = None
    questions: list[str] = Field(
        default_factory=list,
        description="Questions every imported item gets, as `criterion:NAME` (besides the "
        "project's own import questions).",
    )
    evidence: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Evidence files by the relative path records cite (`sources[].path`, item "
            "`evidence`), base64-encoded. Optional; the request body is limited in size."
        ),
    )

    @model_validator(mode="after")
    def _one_list_for_the_format(self) -> ItemsBatchIn:
        wanted, other = ("records", "reviews") if self.format == "jsonl" else ("reviews", "records")
        if getattr(self, wanted) is None:
            raise ValueError(f"format {self.format!r} needs a {wanted!r} list")
        if getattr(self, other) is not None:
            raise ValueError(f"format {self.format!r} takes {wanted!r}, not {other!r}")
        return self

    @property
    def objects(self) -> list[Any]:
        return self.records if self.format == "jsonl" else self.reviews


# The import report is the client package's model: one definition for server and client.
ImportReportOut = ImportReport


class QuestionOut(Schema):
    kind: str
    key: str
    status: str
    answers: int | None = Field(
        None, description="Raters who answered (adjudicators, approvers, admins only)."
    )


class GroundTruthOut(Schema):
    version: int
    sha256: str
    approved_at: datetime | None


class ItemOut(Schema):
    external_id: str
    title: str
    status: str
    slices: list[str]
    questions: list[QuestionOut]
    assignments: dict[str, int] | None = Field(
        None, description="Assignments per status (adjudicators, approvers, admins only)."
    )
    ground_truth: GroundTruthOut | None = Field(
        None, description="The current ground-truth version, once approved."
    )
    created_at: datetime
    updated_at: datetime


class ReferenceSummary(Schema):
    case_id: str
    version: int
    sha256: str
    approved_at: datetime
    approved_by: str
    etag: str


class ReferencePage(Schema):
    items: list[ReferenceSummary]
    next_after: str | None = Field(
        None, description="Pass as `after` for the next page; null on the last page."
    )
