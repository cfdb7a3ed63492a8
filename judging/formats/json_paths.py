"""JSON paths as tuples of steps, so `$.a.b`, `$['a'].b` and `$["a"]["b"]` are one path.

Reference rows use the path grammar of `reviews.formats.canonical.check_json_path`; predictions
are flattened here into the same tuples, and both print back with `join_path` (the form error
messages use), so a path reads the same in every report.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from reviews.formats.canonical import check_json_path
from reviews.formats.errors import join_path

Path = tuple[str | int, ...]

_STEP = re.compile(
    r"""\.(?P<name>[^.\[\]\s'"]+)|\[(?P<index>\d+)\]|\['(?P<single>(?:[^'\\]|\\.)*)'\]"""
    r"""|\[(?P<double>"(?:[^"\\]|\\.)*")\]"""
)


def parse_path(text: str) -> Path:
    """`$.items[0]['unit price']` -> `("items", 0, "unit price")`; ValueError if malformed."""
    check_json_path(text)
    steps: list[str | int] = []
    for match in _STEP.finditer(text, 1):
        if match["name"] is not None:
            steps.append(match["name"])
        elif match["index"] is not None:
            steps.append(int(match["index"]))
        elif match["single"] is not None:
            steps.append(re.sub(r"\\(.)", r"\1", match["single"]))
        else:
            steps.append(json.loads(match["double"]))
    return tuple(steps)


def show_path(path: Path) -> str:
    return join_path(path)


def leaves(value: Any, prefix: Path = ()) -> Iterator[Path]:
    """Every leaf path of a JSON value (scalars, and empty lists or objects)."""
    if isinstance(value, dict) and value:
        for key, member in value.items():
            yield from leaves(member, (*prefix, key))
    elif isinstance(value, list) and value:
        for index, member in enumerate(value):
            yield from leaves(member, (*prefix, index))
    else:
        yield prefix


ABSENT = object()  # what `lookup` returns for a path the value does not have


def lookup(value: Any, path: Path) -> Any:
    """The value at `path`, or `ABSENT`."""
    for step in path:
        in_list = isinstance(step, int) and isinstance(value, list) and step < len(value)
        in_object = isinstance(step, str) and isinstance(value, dict) and step in value
        if not (in_list or in_object):
            return ABSENT
        value = value[step]
    return value


def is_under(path: Path, prefix: Path) -> bool:
    return path[: len(prefix)] == prefix
