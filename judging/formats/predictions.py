"""Prediction records (docs/scoring.md): what a system under test produced for a case.

One JSON object per line:

    {"case_id": "inv-001", "prediction": {"invoice": {...}},
     "producer": {"provider": "openai", "model": "gpt-4o"},
     "stage_id": "extract", "operation": "extract_invoice", "depends_on": []}

Only `case_id` and `prediction` are required. `stage_id`/`depends_on` describe a pipeline: each
record is one stage of one case, and `depends_on` names the stages (of the same case and
producer) whose output it consumed. `fields` (optional, a list of JSON paths) says which
reference fields a record answers for; without it the record answers for every path of the
reference (a field it leaves out is missing), whether it is a stage or not.

No Django here: `parse_predictions` returns plain records or raises a FormatError naming the
file, the line and the JSON path. Duplicates and dependency cycles are refused here too, since
they are properties of the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from reviews.formats.canonical import JsonPath
from reviews.formats.errors import FormatError, error_from_validation, iter_json_lines


class Producer(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)

    @property
    def name(self) -> str:
        return f"{self.provider}/{self.model}"


class PredictionRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    case_id: str = Field(min_length=1, max_length=200)
    prediction: dict[str, Any]
    producer: Producer | None = None
    stage_id: str = Field(default="", max_length=200)
    operation: str = ""
    depends_on: list[str] = Field(default_factory=list)
    fields: list[JsonPath] | None = None

    @field_validator("depends_on")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("names a stage twice")
        if any(not v for v in value):
            raise ValueError("stage ids must not be empty")
        return value


@dataclass(frozen=True)
class Prediction:
    """One validated record and where it came from (for messages)."""

    line: int  # line of the file, or position in an API body's list (1-based)
    record: str  # "line 3" or "record 3", as messages name it
    case_id: str
    producer: str  # "provider/model", or "" when the file does not say
    stage_id: str
    operation: str
    depends_on: tuple[str, ...]
    fields: tuple[str, ...] | None
    prediction: dict[str, Any]

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.case_id, self.producer, self.stage_id)


def _record(lineno: int, obj: dict, file: str, unit: str) -> Prediction:
    where = {"file": file, "record": f"{unit} {lineno}"}
    try:
        record = PredictionRecord.model_validate(obj)
    except ValidationError as exc:
        raise error_from_validation(exc, **where) from None
    if record.depends_on and not record.stage_id:
        raise FormatError(
            "depends_on needs a stage_id on the same record", path="$.depends_on", **where
        )
    if record.stage_id in record.depends_on:
        raise FormatError(
            f"stage {record.stage_id!r} depends on itself", path="$.depends_on", **where
        )
    return Prediction(
        line=lineno,
        record=where["record"],
        case_id=record.case_id,
        producer=record.producer.name if record.producer else "",
        stage_id=record.stage_id,
        operation=record.operation,
        depends_on=tuple(record.depends_on),
        fields=tuple(record.fields) if record.fields is not None else None,
        prediction=record.prediction,
    )


def _check_pipelines(predictions: list[Prediction], file: str) -> None:
    """No record twice; a stage-less record alone in its case; no dependency cycle."""
    seen: dict[tuple[str, str, str], str] = {}
    stages: dict[tuple[str, str], dict[str, Prediction]] = {}
    for p in predictions:
        if p.key in seen:
            raise FormatError(
                f"case {p.case_id!r}, stage {p.stage_id or '(none)'!r}, producer "
                f"{p.producer or '(none)'!r} was already given on {seen[p.key]}",
                file=file,
                record=p.record,
                path="$.case_id",
            )
        seen[p.key] = p.record
        stages.setdefault((p.case_id, p.producer), {})[p.stage_id] = p
    for pipeline in stages.values():
        if "" in pipeline and len(pipeline) > 1:
            p = pipeline[""]
            raise FormatError(
                "this case has stages: every record of it needs a stage_id",
                file=file,
                record=p.record,
                path="$.stage_id",
            )
        _check_acyclic(pipeline, file)


def _check_acyclic(pipeline: dict[str, Prediction], file: str) -> None:
    done: set[str] = set()

    def visit(stage: str, path: tuple[str, ...]) -> None:
        if stage in path:
            p = pipeline[path[-1]]
            cycle = " -> ".join((*path[path.index(stage) :], stage))
            raise FormatError(
                f"dependency cycle: {cycle}", file=file, record=p.record, path="$.depends_on"
            )
        if stage in done or stage not in pipeline:
            return
        for upstream in pipeline[stage].depends_on:
            visit(upstream, (*path, stage))
        done.add(stage)

    for stage in pipeline:
        visit(stage, ())


def parse_prediction_records(
    records: Iterable[tuple[int, dict]], *, file: str, unit: str = "line"
) -> list[Prediction]:
    """Validate `(position, object)` pairs: a file's lines, or (`unit="record"`) an API body's
    list positions."""
    predictions = [_record(lineno, obj, file, unit) for lineno, obj in records]
    if not predictions:
        raise FormatError("no prediction records", file=file)
    _check_pipelines(predictions, file)
    return predictions


def parse_predictions(stream: Any, *, file: str) -> list[Prediction]:
    """Read a predictions JSONL stream (binary) into validated records, or raise FormatError."""
    return parse_prediction_records(iter_json_lines(stream, file=file), file=file)
