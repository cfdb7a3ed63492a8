"""FORMATS §4: typed records (criteria, items, verdicts, human labels, pairwise verdicts).

JSONL: one object per line, kind in ``"type"``; one file may mix kinds.
CSV: one kind per file, from a ``type`` column or the ``kind`` argument. Cell rules:
  * an empty cell is "not given" (the field's default, usually None; required fields then fail);
  * ``judge_provider``, ``judge_model``, ``judge_temperature``, ``judge_prompt_sha256`` (any
    ``judge_<key>``) build the nested ``judge`` object;
  * list columns (``slices``, ``evidence``, ``labels``, ``display_order``): a cell starting with
    ``[`` is a JSON array, anything else is split on ``|`` (items stripped, empties dropped);
  * object-or-string columns (``input``, ``output``, ``reference``) and ``metadata``: a cell
    starting with ``{`` is parsed as a JSON object, anything else is the literal string;
  * numbers and booleans use pydantic's lax parsing (``0.8``, ``true``/``false``, ``1``/``0``);
  * other columns are kept as extra string fields.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from .canonical import RelativePath
from .errors import (
    FormatError,
    PathValueError,
    error_from_validation,
    iter_csv_rows,
    iter_json_lines,
    loads_json,
)

__all__ = [
    "KINDS",
    "Criterion",
    "HumanLabel",
    "Item",
    "Judge",
    "PairwiseVerdict",
    "Record",
    "RECORD_ADAPTER",
    "Verdict",
    "iter_records_csv",
    "iter_records_jsonl",
    "parse_record",
]


Label = Annotated[str, Field(min_length=1)]


class _Record(BaseModel):
    # Numbers in text fields become strings: ordinal labels ("1".."5"), versions, numeric ids.
    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)


class Judge(_Record):
    provider: str = Field(min_length=1)
    model: str = Field(min_length=1)
    temperature: float | None = Field(default=None, ge=0)
    prompt_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")

    @property
    def name(self) -> str:
        """How reports name a judge: ``provider/model``."""
        return f"{self.provider}/{self.model}"


class Criterion(_Record):
    type: Literal["criterion"] = "criterion"
    name: str = Field(min_length=1)
    labels: list[Label] = Field(min_length=1)
    positive: Label | None = None
    ordinal: bool = False
    critical: bool = False
    version: Label | None = None
    text: str | None = None

    @model_validator(mode="after")
    def _positive_is_a_label(self) -> Criterion:
        if len(set(self.labels)) != len(self.labels):
            raise PathValueError(("labels",), f"duplicate labels in {self.labels}")
        if self.positive is not None and self.positive not in self.labels:
            raise PathValueError(
                ("positive",), f"{self.positive!r} is not one of the labels {self.labels}"
            )
        return self


class Item(_Record):
    type: Literal["item"] = "item"
    item_id: str = Field(min_length=1)
    input: Any = None  # string or object
    output: Any = None
    reference: Any = None
    slices: list[str] = Field(default_factory=list)
    evidence: list[RelativePath] = Field(default_factory=list)  # bundle-relative paths
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("input", "output", "reference")
    @classmethod
    def _string_or_object(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, str | dict):
            raise ValueError("must be a string or an object")
        return value


class Verdict(_Record):
    type: Literal["verdict"] = "verdict"
    item_id: str = Field(min_length=1)
    criterion: str = Field(min_length=1)
    label: Label
    judge: Judge
    sample: int = Field(default=0, ge=0)
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    explanation: str | None = None
    raw: str | None = None


class HumanLabel(_Record):
    type: Literal["human_label"] = "human_label"
    item_id: str = Field(min_length=1)
    criterion: str = Field(min_length=1)
    rater: str = Field(min_length=1)
    label: Label
    note: str | None = None


class PairwiseVerdict(_Record):
    type: Literal["pairwise_verdict"] = "pairwise_verdict"
    item_id: str = Field(min_length=1)
    criterion: str | None = None
    answer_a: str = Field(min_length=1)
    answer_b: str = Field(min_length=1)
    display_order: list[Literal["A", "B"]] = Field(default_factory=lambda: ["A", "B"])
    winner: Literal["A", "B", "tie"]  # names the ORIGINAL answer, not the displayed position
    judge: Judge

    @field_validator("display_order")
    @classmethod
    def _permutation(cls, value: list[str]) -> list[str]:
        if sorted(value) != ["A", "B"]:
            raise ValueError('display_order must be ["A", "B"] or ["B", "A"]')
        return value


Record = Annotated[
    Criterion | Item | Verdict | HumanLabel | PairwiseVerdict, Field(discriminator="type")
]
RECORD_ADAPTER: TypeAdapter[Record] = TypeAdapter(Record)
_MODELS: dict[str, type[_Record]] = {
    "criterion": Criterion,
    "item": Item,
    "verdict": Verdict,
    "human_label": HumanLabel,
    "pairwise_verdict": PairwiseVerdict,
}
KINDS = tuple(_MODELS)


def parse_record(
    obj: dict[str, Any], *, file: str | None, record: str | None, kind: str | None = None
) -> _Record:
    """Validate one record; the kind comes from ``obj["type"]`` or ``kind``."""
    given = obj.get("type", kind)
    if kind is not None and given != kind:
        raise FormatError(
            f"type {given!r} in a file of {kind!r} records", file=file, record=record, path="$.type"
        )
    if given is None:
        raise FormatError(
            f"missing type (one of: {', '.join(KINDS)})", file=file, record=record, path="$.type"
        )
    model = _MODELS.get(given) if isinstance(given, str) else None
    if model is None:
        raise FormatError(
            f"unknown type {given!r} (valid: {', '.join(KINDS)})",
            file=file,
            record=record,
            path="$.type",
        )
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise error_from_validation(exc, file=file, record=record) from None


def iter_records_jsonl(stream: IO[bytes], *, file: str) -> Iterator[_Record]:
    """Typed records, one line at a time (memory flat); errors name ``line N``."""
    for lineno, obj in iter_json_lines(stream, file=file):
        yield parse_record(obj, file=file, record=f"line {lineno}")


_LIST_COLUMNS = {"slices", "evidence", "labels", "display_order"}
_OBJECT_COLUMNS = {"input", "output", "reference", "metadata"}


def _cell(column: str, text: str, *, file: str, record: str) -> Any:
    if column in _LIST_COLUMNS:
        if text.lstrip().startswith("["):
            try:
                value = loads_json(text, file=file, record=record)
            except FormatError as exc:
                raise FormatError(exc.reason, file=file, record=record, path=column) from None
            if not isinstance(value, list):
                raise FormatError("expected a JSON array", file=file, record=record, path=column)
            return value
        return [part.strip() for part in text.split("|") if part.strip()]
    if column in _OBJECT_COLUMNS and text.lstrip().startswith("{"):
        try:
            return loads_json(text, file=file, record=record)
        except FormatError as exc:
            raise FormatError(exc.reason, file=file, record=record, path=column) from None
    return text


def iter_records_csv(
    stream: IO[bytes] | IO[str], *, file: str, kind: str | None = None
) -> Iterator[_Record]:
    """Records of one kind from CSV (see the module docstring for the cell rules)."""
    if kind is not None and kind not in _MODELS:
        raise FormatError(f"unknown kind {kind!r} (valid: {', '.join(KINDS)})", file=file)
    rows = iter_csv_rows(stream, file=file)
    try:
        _, header = next(rows)
    except StopIteration:
        raise FormatError("empty CSV file (no header)", file=file) from None
    header = [h.strip() for h in header]
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes or "" in header:
        raise FormatError(
            f"header has duplicate or empty column names: {dupes or ['']}",
            file=file,
            record="line 1",
        )
    if kind is None and "type" not in header:
        raise FormatError(
            f"missing column 'type' (or pass the kind: one of {', '.join(KINDS)})",
            file=file,
            record="line 1",
        )
    file_kind = kind
    for line, cells in rows:
        record = f"line {line}"
        if len(cells) != len(header):
            raise FormatError(
                f"{len(cells)} cells but the header has {len(header)}", file=file, record=record
            )
        obj: dict[str, Any] = {}
        judge: dict[str, Any] = {}
        for column, text in zip(header, cells, strict=True):
            if text == "":
                continue  # empty cell -> default
            if column.startswith("judge_"):
                judge[column[len("judge_") :]] = text
            else:
                obj[column] = _cell(column, text, file=file, record=record)
        if judge:
            obj["judge"] = judge
        file_kind = file_kind or obj.get("type")
        try:
            parsed = parse_record(obj, file=file, record=record, kind=file_kind)
        except FormatError as exc:
            raise FormatError(
                exc.reason, file=file, record=record, path=_column(exc.path)
            ) from None
        yield parsed


def _column(path: str | None) -> str | None:
    """Report CSV errors by column: ``$.judge.model`` -> ``judge_model``, ``$.slices[1]`` ->
    ``slices[1]``."""
    if not path or not path.startswith("$."):
        return path
    name = path[2:]
    return "judge_" + name[len("judge.") :] if name.startswith("judge.") else name
