"""The result types shared by every metric: a value, or "undefined" with a reason.

Pure Python: no Django import, no NumPy state. A ``Stat`` never stores NaN: a statistic that
cannot be computed is ``Stat.undefined("why")``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Stat:
    """A statistic: a finite ``value`` (optionally with a confidence interval ``ci``) or undefined.

    Invariant: exactly one of ``value`` / ``undefined_reason`` is set; ``value`` and ``ci`` bounds
    are finite Python floats (NaN or inf raise ``ValueError``); ``ci`` needs a defined value and
    ``low <= high``. ``ci is None`` on a defined value means "no interval computed/available".
    """

    value: float | None
    ci: tuple[float, float] | None = None
    undefined_reason: str | None = None

    def __post_init__(self) -> None:
        if self.value is None:
            if not self.undefined_reason:
                raise ValueError("an undefined Stat needs a non-empty undefined_reason")
            if self.ci is not None:
                raise ValueError("an undefined Stat cannot carry a confidence interval")
        else:
            if self.undefined_reason is not None:
                raise ValueError("a defined Stat cannot carry an undefined_reason")
            value = float(self.value)
            if not math.isfinite(value):
                raise ValueError(f"Stat value must be finite, got {value!r}; use Stat.undefined()")
            object.__setattr__(self, "value", value)
        if self.ci is not None:
            low, high = (float(bound) for bound in self.ci)
            if not (math.isfinite(low) and math.isfinite(high) and low <= high):
                raise ValueError(f"invalid confidence interval {self.ci!r}")
            object.__setattr__(self, "ci", (low, high))

    @classmethod
    def undefined(cls, reason: str) -> Stat:
        """An undefined statistic; ``reason`` is a non-empty human-readable explanation."""
        return cls(value=None, undefined_reason=reason)

    @property
    def is_defined(self) -> bool:
        return self.value is not None

    def with_ci(self, ci: tuple[float, float] | None) -> Stat:
        """The same value with ``ci`` attached (or removed when ``None``)."""
        return Stat(self.value, ci, self.undefined_reason)

    def as_dict(self) -> dict[str, Any]:
        """``{"value": float|None, "ci": [low, high]|None, "undefined_reason": str|None}``."""
        return {
            "value": self.value,
            "ci": None if self.ci is None else [self.ci[0], self.ci[1]],
            "undefined_reason": self.undefined_reason,
        }


def stat_from_float(value: float, reason_if_nan: str) -> Stat:
    """Wrap a float computed by a vectorised ``*_values`` function: NaN becomes undefined."""
    return Stat.undefined(reason_if_nan) if math.isnan(value) else Stat(value)
