"""FORMATS §2: the ground-truth review file of the ``visual_evals`` workflow.

Unknown keys are accepted at every level (``extra="allow"``) so a newer writer's file still
reads; an import stores only the known fields (``known_fields``) and reports the others. Cross-field rules
(cited sources exist, approved files are complete) live on ``ReviewFile`` itself, so the API's
schema enforces them too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import datetime
from typing import IO, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from .canonical import (
    JsonPath,
    RelativePath,
    UtcTime,
    canonical_rows,
    normalise_relative_path,
    resolve_evidence_path,
    rows_sha256,
)
from .errors import (
    FormatError,
    PathValueError,
    error_from_validation,
    iter_json_lines,
    join_path,
    loads_json,
)

Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


def _check_bbox(box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    x0, y0, x1, y1 = box
    if x0 > x1 or y0 > y1:
        raise ValueError(f"bbox must be [x0, y0, x1, y1] with x0 <= x1 and y0 <= y1, got {box}")
    return box


BBox = Annotated[tuple[float, float, float, float], AfterValidator(_check_bbox)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow")  # unknown keys are read (an import reports them)


class SourceMetadata(_Model):
    page: int | None = Field(default=None, ge=1, le=2**31 - 1)  # 1-based; the column's range


class Source(_Model):
    artifact_id: str = Field(min_length=1)
    path: RelativePath
    authority: str = "evidence"
    metadata: SourceMetadata = Field(default_factory=SourceMetadata)

    @property
    def normalised_path(self) -> str:
        return normalise_relative_path(self.path)


class Claim(_Model):
    """A consensus row. Fields spelled out (not inherited) so exports keep the spec's order."""

    path: JsonPath
    expected_value: Any
    reference_id: str | None = None
    evidence: str | None = None
    confidence: Confidence | None = None
    bbox: BBox | None = None  # PDF points, origin top-left, on the cited page
    providers: list[str] = Field(default_factory=list)


class Candidate(_Model):
    provider: str
    expected_value: Any
    reference_id: str | None = None
    evidence: str | None = None
    confidence: Confidence | None = None
    bbox: BBox | None = None


class ReviewItem(_Model):
    path: JsonPath
    reason: Literal["disagreement", "omitted_by_some", "omitted_by_all", "low_confidence"]
    candidates: list[Candidate] = Field(default_factory=list)
    decision: Literal["set", "omit"] | None = None
    value: Any = None
    note: str | None = None

    @model_validator(mode="after")
    def _decision_matches_value(self) -> ReviewItem:
        # `set` with null would be indistinguishable from "no decision yet" in the export.
        if self.decision == "set" and self.value is None:
            raise PathValueError(("value",), "decision 'set' needs a non-null value")
        if self.decision == "omit" and self.value is not None:
            raise PathValueError(("value",), "decision 'omit' must have value null")
        return self

    @property
    def resolved(self) -> bool:
        return self.decision is not None


class Approval(_Model):
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    signature: str = Field(min_length=1)
    algorithm: Literal["ed25519"] = "ed25519"
    key_id: str = Field(min_length=1)


class ReviewFile(_Model):
    case_id: str = Field(min_length=1)
    status: Literal["pending", "approved"] = "pending"
    approved_by: str | None = None
    approved_at: UtcTime | None = None
    expected_fields: list[JsonPath] = Field(default_factory=list)
    sources: list[Source] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    review_items: list[ReviewItem] = Field(default_factory=list)
    approval: Approval | None = None

    @model_validator(mode="after")
    def _cross_checks(self) -> ReviewFile:
        problem = next(self._problems(), None)
        if problem:
            raise PathValueError(*problem)
        return self

    def _problems(self) -> Iterator[tuple[tuple[str | int, ...], str]]:
        """Cross-field problems as ``(loc, reason)``; validation raises the first one."""
        ids: dict[str, int] = {}
        for i, src in enumerate(self.sources):
            if src.artifact_id in ids:
                yield ("sources", i, "artifact_id"), f"duplicate artifact_id {src.artifact_id!r}"
            ids.setdefault(src.artifact_id, i)
        cited = [(("claims", i), c) for i, c in enumerate(self.claims)] + [
            (("review_items", i, "candidates", j), c)
            for i, item in enumerate(self.review_items)
            for j, c in enumerate(item.candidates)
        ]
        for loc, row in cited:
            if row.reference_id is not None and row.reference_id not in ids:
                why = f"{row.reference_id!r} is not an artifact_id in sources (known: "
                yield (*loc, "reference_id"), f"reference_id {why}{', '.join(ids) or 'none'})"
        seen: dict[str, str] = {}
        for kind, rows in (("claims", self.claims), ("review_items", self.review_items)):
            for i, row in enumerate(rows):
                if row.path in seen:
                    yield (kind, i, "path"), f"{row.path!r} already appears at {seen[row.path]}"
                seen.setdefault(row.path, f"$.{kind}[{i}].path")
        if self.status != "approved":
            if self.approval is not None:
                yield ("approval",), "only an approved file carries an approval"
            return
        if not (self.approved_by or "").strip():
            yield ("approved_by",), "an approved file needs approved_by"
        for i, item in enumerate(self.review_items):
            if not item.resolved:
                why = f"{item.path} is unresolved: use 'set' with a value, or 'omit'"
                yield ("review_items", i, "decision"), f"an approved file must decide it ({why})"
        signable = self.is_resolved and len(seen) == len(self.claims) + len(self.review_items)
        if (
            self.approval
            and signable
            and self.approval.sha256 != rows_sha256(self.reference_rows())
        ):
            yield ("approval", "sha256"), "does not match the sha256 of the reference rows"

    @property
    def is_resolved(self) -> bool:
        return all(item.resolved for item in self.review_items)

    def reference_rows(self) -> list[dict[str, Any]]:
        """Claims plus items decided ``set``, sorted by path (what an approval signs)."""
        if not self.is_resolved:
            raise ValueError(f"case {self.case_id!r} has unresolved review items")
        rows = [{"path": c.path, "expected_value": c.expected_value} for c in self.claims]
        decided = [i for i in self.review_items if i.decision == "set"]
        rows += [{"path": i.path, "expected_value": i.value} for i in decided]
        return canonical_rows(rows)

    def approve(
        self, *, approved_by: str, approved_at: datetime, approval: Approval | None = None
    ) -> ReviewFile:
        """A validated approved copy (for export). Items must already carry decisions."""
        data = self.model_dump(mode="json", exclude_unset=True) | {
            "status": "approved",
            "approved_by": approved_by,
            "approved_at": approved_at.isoformat(),
            "approval": approval.model_dump(mode="json") if approval else None,
        }
        return ReviewFile.model_validate(data)

    def evidence_paths(self) -> list[str]:
        return sorted({s.normalised_path for s in self.sources})


# Top-level keys kept although §2 does not define them: `producer` ("provider/model" or
# {"provider", "model"}) names who made the prediction the case checks (ground-truth generation
# labels its readers against it). Kept keys are written back on export.
KEPT_EXTRAS = frozenset({"producer"})


def known_fields(review: ReviewFile) -> tuple[dict[str, Any], list[str]]:
    """The review as JSON with only the fields this schema defines (and KEPT_EXTRAS), and the
    JSON paths of the unknown keys left out (an import keeps the first, reports the second)."""
    data = review.model_dump(mode="json")
    unknown: list[str] = []

    def strip(model: Any, dumped: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(model, BaseModel) and isinstance(dumped, dict):
            for key in model.model_extra or {}:
                if not path and key in KEPT_EXTRAS:
                    continue
                dumped.pop(key, None)
                unknown.append(join_path((*path, key)))
            for name in type(model).model_fields:
                strip(getattr(model, name), dumped.get(name), (*path, name))
        elif isinstance(model, list | tuple) and isinstance(dumped, list):
            for index, (child, out) in enumerate(zip(model, dumped, strict=False)):
                strip(child, out, (*path, index))

    strip(review, data, ())
    return data, unknown


def _case_record(obj: Any) -> str | None:
    case = obj.get("case_id") if isinstance(obj, dict) else None
    return f'case "{case}"' if isinstance(case, str) and case else None


def validate_review(obj: Any, *, file: str | None, record: str | None = None) -> ReviewFile:
    """Validate an already-parsed object; errors become FormatError."""
    if not isinstance(obj, dict):
        raise FormatError(
            f"expected a JSON object, got {type(obj).__name__}", file=file, record=record, path="$"
        )
    try:
        return ReviewFile.model_validate(obj)
    except ValidationError as exc:
        raise error_from_validation(exc, file=file, record=record or _case_record(obj)) from None


def parse_review_json(data: bytes, *, file: str) -> ReviewFile:
    return validate_review(loads_json(data, file=file), file=file)


def iter_numbered_reviews(stream: IO[bytes], *, file: str) -> Iterator[tuple[int, ReviewFile]]:
    """(line number, review) for each review of a JSONL stream; a repeated case_id is an error."""
    seen: dict[str, int] = {}  # case ids only: memory stays small
    for lineno, obj in iter_json_lines(stream, file=file):
        review = validate_review(obj, file=file, record=f"line {lineno}")
        if review.case_id in seen:
            raise FormatError(
                f"duplicate case_id {review.case_id!r} (first on line {seen[review.case_id]})",
                file=file,
                record=f"line {lineno}",
                path="$.case_id",
            )
        seen[review.case_id] = lineno
        yield lineno, review


def iter_review_jsonl(stream: IO[bytes], *, file: str) -> Iterator[ReviewFile]:
    """One review object per line, read lazily; blank lines skipped; errors name the line."""
    for _, review in iter_numbered_reviews(stream, file=file):
        yield review


def dump_review_file(review: ReviewFile) -> bytes:
    """Deterministic export: 2-space indent, UTF-8, declared fields then kept extras.

    Only keys that were given are written (``exclude_unset``): a parsed file keeps its shape
    (absent ``bbox`` stays absent, explicit ``null`` stays), and objects built in code write
    exactly the keys passed to them. ``approve()`` sets the approval keys.
    """
    data = review.model_dump(mode="json", exclude_unset=True)
    text = json.dumps(data, indent=2, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def check_evidence_dir(
    review: ReviewFile, base_dir: str | os.PathLike[str], *, file: str, record: str | None = None
) -> None:
    """Loose .json/.jsonl: raise FormatError for the first source missing under ``base_dir``
    (the file's folder; see canonical.resolve_evidence_path)."""
    for i, src in enumerate(review.sources):
        try:
            found = resolve_evidence_path(base_dir, src.path).is_file()
            reason = None if found else f"evidence file {src.path!r} not found"
        except ValueError as exc:
            reason = str(exc)
        if reason:
            record = record or f'case "{review.case_id}"'
            raise FormatError(reason, file=file, record=record, path=f"$.sources[{i}].path")
