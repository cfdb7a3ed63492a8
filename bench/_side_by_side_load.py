"""bench/side_by_side.py's load step (issue #33): the same many-rater load on Label Studio and
on Evalsite, one table of answers/s, save p95, errors, lost and over-assigned.

Label Studio's load runs in this process against the server the single requests used
(``bench/_label_studio_load.py``); Evalsite's is ``bench/load.py`` in a process of its own per
database (its own Django set-up), stopped by time, not by an answer count, as Label Studio's is.
"""

from __future__ import annotations

import json
import subprocess
import sys

import httpx

from bench import _label_studio_load
from bench._load_report import parse
from bench._servers import load_average
from bench.imports import item_records

PEER = "Label Studio"
NAMES = {"sqlite": "Evalsite SQLite", "postgresql": "Evalsite PostgreSQL"}
ROWS = [  # figure, label, how Evalsite's compares ("rate": ours / peer, "ms": peer / ours)
    ("answers_per_s", "answers/s", "rate"),
    ("save_p95_ms", "save p95, ms", "ms"),
    ("errors", "errors", None),
    ("lost", "lost answers", None),
    ("over_assigned", "over-assigned items", None),
]
TARGET_RATE, TARGET_SAVE_P95_MS = 10, 150  # issue #33, on every database


def peer_load(peer, raters: int, seconds: float, items: int) -> dict | None:
    """A fresh project of `items` tasks on the running Label Studio, `raters` new annotators."""
    print(f"\n... {PEER} under load: {raters} raters for {seconds:g} s, {items:,} tasks "
          f"(load average {load_average()})", flush=True)  # fmt: skip
    tasks = [{"data": {k: v for k, v in r.items() if k != "type"}} for r in item_records(items)]
    try:
        peer.open(items, json.dumps(tasks).encode(), raters)
        tokens = peer.annotators(raters)
        return _label_studio_load.run(peer.api, peer.pk, tokens, seconds)
    except (RuntimeError, httpx.HTTPError) as error:  # reported in the table as not measured
        print(f"{PEER} load failed: {error}")
        return None


def evalsite_load(database: str, raters: int, seconds: float, items: int) -> dict:
    """bench/load.py on `database` until `seconds` have passed: its figures."""
    options = ["--database", database, "--raters", str(raters), "--seconds", f"{seconds:g}",
               "--items", str(items), "--answers", "1000000000"]  # fmt: skip
    return parse(run_load(options), "load")


def run_load(options: list[str]) -> str:
    """bench/load.py in its own process, its output printed here and returned."""
    print(f"\n$ python -m bench.load {' '.join(options)}   (load average {load_average()})")
    done = subprocess.run(
        [sys.executable, "-m", "bench.load", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
        timeout=1800,
    )
    print(done.stdout, end="", flush=True)
    return done.stdout


def _cell(figure: str, value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}" if figure in ("answers_per_s", "save_p95_ms") else f"{value:.0f}"


def _ratio(kind: str | None, peer: float | None, ours: float | None) -> str:
    if kind is None or not peer or not ours:
        return "—"
    return f"{(ours / peer if kind == 'rate' else peer / ours):.1f}×"


def table(figures: dict[str, dict | None]) -> list[str]:
    """Markdown rows: each figure per target, and Evalsite's over Label Studio's."""
    ours = [name for name in figures if name != PEER]
    peer = figures.get(PEER) or {}
    header = ["figure", PEER] + [h for name in ours for h in (name, "× LS")]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for figure, label, kind in ROWS:
        row = [label, _cell(figure, peer.get(figure))]
        for name in ours:
            got = (figures[name] or {}).get(figure)
            row += [_cell(figure, got), _ratio(kind, peer.get(figure), got)]
        lines.append("| " + " | ".join(row) + " |")
    return lines


def verdicts(figures: dict[str, dict | None]) -> list[str]:
    """Issue #33's targets, per Evalsite database."""
    peer = (figures.get(PEER) or {}).get("answers_per_s")
    lines = []
    for name, got in figures.items():
        if name == PEER:
            continue
        got = got or {}
        rate, p95 = got.get("answers_per_s"), got.get("save_p95_ms")
        times = rate / peer if rate and peer else None
        checks = {
            f"answers/s ≥ {TARGET_RATE}× {PEER}'s": times is not None and times >= TARGET_RATE,
            f"save p95 ≤ {TARGET_SAVE_P95_MS} ms": p95 is not None and p95 <= TARGET_SAVE_P95_MS,
            "0 errors, 0 lost, 0 over-assigned": all(
                got.get(k) == 0 for k in ("errors", "lost", "over_assigned")
            ),
        }
        for check, met in checks.items():
            lines.append(f"{name}, {check}: {'met' if met else 'NOT met'}")
        if times is not None:
            print(f"RESULT load_ratio_{name.split()[-1].lower()}={times:.2f}")
    return lines
