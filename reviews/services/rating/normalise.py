"""When do two answers to a field say the same thing?

Raters type values by hand, so exact string equality would send trivial differences to
adjudication. Values are compared after this normalisation (documented in the README):

- text: surrounding whitespace removed, inner runs of whitespace folded to one space, case folded
  (`"  Northwind  Traders" == "northwind traders"`);
- numbers: a JSON number, or text that reads as a number (optional sign, thousands separators
  as `,` in groups of three, optional decimals), compares as a decimal number
  (`"1,200.00" == "1200" == 1200.0`); other text never turns into a number;
- `null`, booleans, lists and objects compare by their canonical JSON (lists and objects
  normalise their members the same way).

Answers that omit a field are equal to each other and to nothing else.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

_NUMBER = re.compile(r"^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?$")
_SPACES = re.compile(r"\s+")


def comparable(value: Any) -> Any:
    """A hashable stand-in for `value` under the rules above."""
    if isinstance(value, bool) or value is None:
        return ("literal", value)
    if isinstance(value, int | float):
        return ("number", _decimal(str(value)))
    if isinstance(value, str):
        text = _SPACES.sub(" ", value.strip())
        if _NUMBER.match(text):
            return ("number", _decimal(text.replace(",", "")))
        return ("text", text.casefold())
    if isinstance(value, list):
        return ("list", tuple(comparable(v) for v in value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((k, comparable(v)) for k, v in value.items())))
    return ("other", json.dumps(value, sort_keys=True, default=str))


def _decimal(text: str) -> Decimal:
    try:
        return Decimal(text).normalize()
    except InvalidOperation:  # pragma: no cover - _NUMBER only lets decimals through
        return Decimal("NaN")


def same_value(a: Any, b: Any) -> bool:
    return comparable(a) == comparable(b)
