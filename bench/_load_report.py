"""What bench/load.py (Evalsite) and bench/_label_studio_load.py (Label Studio) share: the
clock and answer budget of a many-rater run, and one report, so the two print alike
(a p50/p95 table per request kind, throughput, lost, over-assigned, errors and ``RESULT`` lines).
"""

from __future__ import annotations

import re
import statistics
import threading
import time

# The figures a load run ends with, by their RESULT names (after the prefix).
FIGURES = ("answers_per_s", "save_p95_ms", "errors", "lost", "over_assigned")


class Clock:
    """The timed part of the run: it starts once every rater is ready (`start`, the barrier's
    action), so signing in (16 password checks, PBKDF2, about a third of a second of CPU each)
    is not counted as answering time; `signed_in_s` says how long that took."""

    def __init__(self, seconds: float):
        self.seconds, self.begun = seconds, time.perf_counter()
        self.started = self.deadline = None

    def start(self) -> None:
        self.started = time.perf_counter()
        self.deadline = time.monotonic() + self.seconds

    @property
    def signed_in_s(self) -> float:
        return (self.started or time.perf_counter()) - self.begun

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - (self.started or self.begun)


class Budget:
    """How many answers are left to give, shared by the raters."""

    def __init__(self, n: int):
        self.left, self.lock = n, threading.Lock()

    def take(self) -> bool:
        with self.lock:
            self.left -= 1
            return self.left >= 0


def percentile(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else 0


def report(prefix: str, stats: dict, answers: int, elapsed: float, checked: dict) -> dict:
    """Prints the table and RESULT lines; `checked` has lost, over-assigned and the errors
    (a list of messages). Returns {figure: value} for FIGURES."""
    print(f"{'request':<16} {'n':>6} {'p50 ms':>9} {'p95 ms':>9}")
    figures = {"save_p95_ms": None}
    for kind, values in stats.items():
        p50, p95 = statistics.median(values), percentile(values, 95)
        name = f"{kind.replace(' & ', '_').replace(' ', '_')}_p95_ms"
        figures[name] = p95
        print(f"{kind:<16} {len(values):>6} {p50:>9.1f} {p95:>9.1f}")
        print(f"RESULT {prefix}_{name}={p95:.1f}")
    lost, over, errors = checked["lost"], checked["over_assigned"], checked["errors"]
    rate = answers / elapsed if elapsed else 0.0
    print(
        f"throughput {rate:.1f} answers/s; lost {lost}; over-assigned {over}; errors {len(errors)}"
    )
    figures.update(answers_per_s=rate, lost=lost, over_assigned=over, errors=len(errors))
    print(f"RESULT {prefix}_answers_per_s={rate:.2f}")
    for figure in ("lost", "over_assigned", "errors"):
        print(f"RESULT {prefix}_{figure}={figures[figure]}")
    for error in errors[:10]:
        print("error:", error)
    return {key: figures[key] for key in FIGURES}


def parse(output: str, prefix: str) -> dict:
    """{figure: value} from a load run's RESULT lines (a run in another process)."""
    found = dict(re.findall(rf"^RESULT {prefix}_(\w+)=([\d.]+)$", output, re.MULTILINE))
    return {key: float(found[key]) if key in found else None for key in FIGURES}
