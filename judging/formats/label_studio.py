"""Label Studio's JSON export (a top-level array of tasks) and its label config, read strictly.

No ORM here: `judging.services.imports.label_studio` writes what this module reads. Each task has
an integer `id`, a `data` object, `annotations` (each with `completed_by`, a user id or, in an
export snapshot with annotators written out, `{"id", "email", ...}`; `was_cancelled`; `result`
regions) and `predictions` (objects with `model_version`, `score` and `result`, or only their
ids in the project page's quick export). A region's `from_name` names its control; only
`choices`, `rating` and `textarea` regions are read, others are counted and left.

Every problem is a FormatError naming the file, the task (`task 3`) and the JSON path inside it
(`$.annotations[0].result[1].value.rating`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any
from xml.etree import ElementTree

from reviews.formats.errors import FormatError, loads_json

READ_TYPES = {"choices": "Choices", "rating": "Rating", "textarea": "TextArea"}  # type -> tag
LABEL_CHARS = 100  # a stored label's length (HumanLabel.label, Verdict.label)
DEFAULT_MAX_RATING = 5  # Label Studio's Rating without maxRating


@dataclass(frozen=True)
class Control:
    """A Choices, Rating or TextArea control of the label config: a criterion on import."""

    name: str
    tag: str
    labels: tuple[str, ...] = ()  # TextArea: none (free text)
    multiple: bool = False  # Choices with choice="multiple"


@dataclass(frozen=True)
class Mark:
    """One control's value in one annotation or prediction."""

    control: str
    tag: str
    label: str
    path: str  # JSON path inside the task, for errors


@dataclass
class Annotation:
    id: Any
    rater: str  # the annotator's e-mail when the export has it, else "label-studio user N"
    user_id: int | None
    marks: list[Mark]
    cancelled: bool
    lead_time: Any = None


@dataclass
class Prediction:
    id: Any
    model_version: str
    score: float | None
    marks: list[Mark]
    path: str


@dataclass
class Task:
    id: int
    data: dict[str, Any]
    meta: Any = None
    project: Any = None
    annotations: list[Annotation] = field(default_factory=list)
    predictions: list[Prediction] = field(default_factory=list)
    predictions_as_ids: int = 0

    @property
    def where(self) -> str:
        return f"task {self.id}"


@dataclass
class Export:
    tasks: list[Task]
    ignored: Counter = field(default_factory=Counter)  # result types not read, by type


def parse_label_config(xml: str, *, file: str) -> dict[str, Control]:
    """The Choices, Rating and TextArea controls of a label config, by name."""
    where = {"file": file, "record": "label config"}
    if "<!DOCTYPE" in xml or "<!ENTITY" in xml:  # what defusedxml forbids; no config has one
        raise FormatError("a label config has no DOCTYPE or ENTITY declarations", **where)
    try:
        # The stdlib parser: with no DTD there is no entity to expand, nothing external to fetch.
        root = ElementTree.fromstring(xml)  # noqa: S314
    except ElementTree.ParseError as error:
        raise FormatError(f"not a readable label config XML ({error})", **where) from None
    controls: dict[str, Control] = {}
    for element in root.iter():
        if element.tag not in READ_TYPES.values():
            continue
        name = element.get("name") or ""
        if not name:
            raise FormatError(f"a <{element.tag}> without a name", **where)
        if name in controls:
            raise FormatError(f"two controls named {name!r}", **where)
        controls[name] = _control(element, name, where)
    return controls


def _control(element, name: str, where: dict) -> Control:
    if element.tag == "Choices":
        labels = [c.get("alias") or c.get("value") or "" for c in element.iter("Choice")]
        if not labels or "" in labels:
            raise FormatError(f"Choices {name!r}: every <Choice> needs a value", **where)
        return Control(name, "Choices", tuple(labels), element.get("choice") == "multiple")
    if element.tag == "Rating":
        top = element.get("maxRating") or str(DEFAULT_MAX_RATING)
        if not top.isdigit() or int(top) < 1:
            raise FormatError(f"Rating {name!r}: maxRating {top!r} is not a whole number", **where)
        return Control(name, "Rating", tuple(str(n) for n in range(1, int(top) + 1)))
    return Control(name, "TextArea")


def parse_export(data: bytes, *, file: str) -> Export:
    """A whole JSON export, checked task by task."""
    top = loads_json(data, file=file)
    if not isinstance(top, list) or not top:
        raise FormatError("expected a non-empty JSON array of tasks", file=file, path="$")
    export = Export(tasks=[])
    seen: set[int] = set()
    for index, obj in enumerate(top):
        task = _task(obj, index, file, export.ignored)
        if task.id in seen:
            raise FormatError("a second task with this id", file=file, record=task.where)
        seen.add(task.id)
        export.tasks.append(task)
    return export


def _fail(reason: str, file: str, record: str, path: str) -> FormatError:
    return FormatError(reason, file=file, record=record, path=path)


def _task(obj: Any, index: int, file: str, ignored: Counter) -> Task:
    record = f"task at index {index}"
    if not isinstance(obj, dict):
        raise _fail(f"expected a task object, got {type(obj).__name__}", file, record, "$")
    if "data" not in obj and {"annotator", "annotation_id"} & obj.keys():
        raise _fail(
            "a JSON_MIN export (one flat row per annotation, no annotators' ids, no "
            "predictions): export JSON instead",
            file,
            record,
            "$",
        )
    task_id = obj.get("id")
    if not _whole(task_id):
        raise _fail("a task id must be a whole number", file, record, "$.id")
    record = f"task {task_id}"
    data = obj.get("data")
    if not isinstance(data, dict):
        raise _fail("expected the task's data object", file, record, "$.data")
    task = Task(id=task_id, data=data, meta=obj.get("meta"), project=obj.get("project"))
    for i, item in enumerate(_list(obj, "annotations", file, record)):
        task.annotations.append(_annotation(item, f"$.annotations[{i}]", file, record, ignored))
    for i, item in enumerate(_list(obj, "predictions", file, record)):
        if _whole(item):
            task.predictions_as_ids += 1
            continue
        task.predictions.append(_prediction(item, f"$.predictions[{i}]", file, record, ignored))
    return task


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _list(obj: dict, key: str, file: str, record: str, path: str = "$") -> list:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(f"expected a list, got {type(value).__name__}", file, record, f"{path}.{key}")
    return value


def _annotation(obj: Any, path: str, file: str, record: str, ignored: Counter) -> Annotation:
    if not isinstance(obj, dict):
        raise _fail("expected an annotation object", file, record, path)
    by = obj.get("completed_by")
    user_id = by.get("id") if isinstance(by, dict) else by
    if not (_whole(user_id) or by is None):
        raise _fail(
            "completed_by must be a user id or a user object with an id",
            file,
            record,
            f"{path}.completed_by",
        )
    email = by.get("email") if isinstance(by, dict) else None
    if email is not None and (not isinstance(email, str) or "@" not in email):
        raise _fail("not an e-mail address", file, record, f"{path}.completed_by.email")
    # A deleted user leaves completed_by null: the annotation is its own (unknown) rater.
    rater = email or (f"label-studio user {user_id}" if by is not None else None)
    rater = rater or f"label-studio annotation {obj.get('id')} (annotator deleted)"
    cancelled = obj.get("was_cancelled", False)
    if not isinstance(cancelled, bool):
        raise _fail("was_cancelled must be true or false", file, record, f"{path}.was_cancelled")
    return Annotation(
        id=obj.get("id"),
        rater=rater,
        user_id=user_id,
        marks=_marks(obj, path, file, record, ignored),
        cancelled=cancelled,
        lead_time=obj.get("lead_time"),
    )


def _prediction(obj: Any, path: str, file: str, record: str, ignored: Counter) -> Prediction:
    if not isinstance(obj, dict):
        raise _fail("expected a prediction object or id", file, record, path)
    version = obj.get("model_version")
    if version is not None and not isinstance(version, str | int):
        raise _fail("model_version must be text", file, record, f"{path}.model_version")
    score = obj.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
        raise _fail("score must be a number", file, record, f"{path}.score")
    return Prediction(
        id=obj.get("id"),
        model_version=str(version or ""),
        score=None if score is None else float(score),
        marks=_marks(obj, path, file, record, ignored),
        path=path,
    )


def _marks(obj: dict, path: str, file: str, record: str, ignored: Counter) -> list[Mark]:
    """The Choices, Rating and TextArea values of one result (one per control)."""
    marks: dict[str, Mark] = {}
    for i, region in enumerate(_list(obj, "result", file, record, path)):
        where = f"{path}.result[{i}]"
        if not isinstance(region, dict):
            raise _fail("expected a result region object", file, record, where)
        kind = region.get("type")
        if not isinstance(kind, str):
            raise _fail("expected the region's type", file, record, f"{where}.type")
        if kind.lower() not in READ_TYPES:
            ignored[kind] += 1
            continue
        name = region.get("from_name")
        if not isinstance(name, str) or not name:
            raise _fail("expected the control's name", file, record, f"{where}.from_name")
        if name in marks:
            raise _fail(
                f"control {name!r} has a second value in this result (also {marks[name].path})",
                file,
                record,
                f"{where}.from_name",
            )
        value = region.get("value")
        if not isinstance(value, dict):
            raise _fail("expected the region's value object", file, record, f"{where}.value")
        label, at = _label(kind.lower(), value, f"{where}.value", file, record)
        marks[name] = Mark(name, READ_TYPES[kind.lower()], label, at)
    return list(marks.values())


def _label(kind: str, value: dict, path: str, file: str, record: str) -> tuple[str, str]:
    if kind == "rating":
        rating = value.get("rating")
        if not _whole(rating):
            raise _fail("a rating must be a whole number", file, record, f"{path}.rating")
        return str(rating), f"{path}.rating"
    key = "choices" if kind == "choices" else "text"
    given = value.get(key)
    given = [given] if kind == "textarea" and isinstance(given, str) else given
    if not isinstance(given, list) or not given or not all(isinstance(v, str) for v in given):
        raise _fail("expected a non-empty list of strings", file, record, f"{path}.{key}")
    if kind == "choices" and len(given) > 1:
        raise _fail(
            f"{len(given)} choices selected ({', '.join(given)}): a criterion takes one label "
            "per rater, so a multiple-choice control cannot be imported",
            file,
            record,
            f"{path}.choices",
        )
    label = "\n".join(given).strip()
    if not label or len(label) > LABEL_CHARS:
        raise _fail(
            f"a label is 1 to {LABEL_CHARS} characters (this one has {len(label)}): longer "
            "TextArea answers cannot be labels",
            file,
            record,
            f"{path}.{key}",
        )
    return label, f"{path}.{key}"
