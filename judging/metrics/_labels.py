"""Label encoding: arbitrary hashable labels -> integer codes in an explicit label order.

``None`` is missing data (code -1). A value that is not in the label order raises ``ValueError``:
dropping it silently would change every statistic without a trace.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

MISSING = -1


def label_lookup(labels: Sequence[Hashable]) -> dict[Hashable, int]:
    """``{label: position}``; labels must be unique, hashable and not ``None``."""
    lookup: dict[Hashable, int] = {}
    for position, label in enumerate(labels):
        if label is None:
            raise ValueError("None cannot be a label: it marks missing data")
        if label in lookup:
            raise ValueError(f"duplicate label {label!r} in the label order")
        lookup[label] = position
    return lookup


def encode(values: Any, labels: Sequence[Hashable], *, what: str = "values") -> np.ndarray:
    """1-D int codes of ``values`` (index into ``labels``; -1 for ``None``)."""
    lookup = label_lookup(labels)
    if isinstance(values, np.ndarray) and values.dtype.kind in "biuUS":
        flat = values.ravel()
        uniques, inverse = np.unique(flat, return_inverse=True)
        codes = np.array([lookup.get(u.item(), -2) for u in uniques], dtype=np.intp)
        if (codes == -2).any():
            _raise_unknown([u.item() for u in uniques[codes == -2]], what)
        return codes[inverse.ravel()]
    if isinstance(values, np.ndarray):
        seq = values.ravel().tolist()
    elif isinstance(values, list | tuple):
        seq = values
    else:
        seq = list(values)
    getter = {**lookup, None: MISSING}.__getitem__
    try:
        return np.fromiter(map(getter, seq), dtype=np.intp, count=len(seq))
    except KeyError:
        _raise_unknown([v for v in seq if v is not None and v not in lookup], what)
        raise  # pragma: no cover - _raise_unknown always raises


def _raise_unknown(unknown: list[Any], what: str) -> None:
    shown = sorted({repr(v) for v in unknown})[:5]
    raise ValueError(
        f"{what} contain {len(set(map(repr, unknown)))} value(s) not in the label order, "
        f"e.g. {', '.join(shown)} (missing data must be None)"
    )


def encode_rows(
    rows: Any, labels: Sequence[Hashable], *, what: str
) -> tuple[np.ndarray, np.ndarray, int]:
    """Codes of (possibly ragged) rows: ``(row_index, code)`` per cell, and the row count."""
    if isinstance(rows, np.ndarray):
        if rows.ndim != 2:
            raise ValueError(f"{what} must be 2-D, got shape {rows.shape}")
        row_index = np.repeat(np.arange(rows.shape[0]), rows.shape[1])
        return row_index, encode(rows, labels, what=what), rows.shape[0]
    rows = [list(row) for row in rows]
    flat = [value for row in rows for value in row]
    row_index = np.repeat(np.arange(len(rows)), [len(row) for row in rows])
    return row_index, encode(flat, labels, what=what), len(rows)
