"""Evalsite beside Label Studio over loopback HTTP, in one run on one machine: ``make bench``.

``.venv/bin/python -m bench.side_by_side [--sizes 1000,100000] [--repeats 20] [--imports 3]
[--no-label-studio] [--databases sqlite,postgresql] [--no-load] [--no-label-studio-load]
[--load-raters 16] [--load-seconds 30] [--load-items 10000]``

Per size, the same seeded items (``bench/imports.py``) go to Label Studio (1.x from PyPI, its own
server, SQLite; ``bench/_label_studio.py``) and to Evalsite under gunicorn with production
settings on SQLite and on PostgreSQL (``bench/_evalsite_http.py``), each in a fresh database.
Timed over HTTP on 127.0.0.1: import (API, one request: items/s; the median of ``--imports``
imports, each into a fresh project, the targets in turn), item list first page, next item
(claim), save an answer, submit & next; medians of ``--repeats``. Prints one table with
the ratios (how many times Label Studio's time, or Evalsite's items/s over Label Studio's), the
acceptance targets at the largest size (issue #17), the machine, and the load average by each
target. Then the load step (issue #33; ``bench/_side_by_side_load.py``): ``--load-raters`` raters
for ``--load-seconds`` on a fresh project of ``--load-items`` items, on Label Studio (its own
users, next and save) and on Evalsite per database (``bench/load.py``), one table of answers/s,
save p95, errors, lost and over-assigned; then ``bench/load.py`` on PostgreSQL during an
import of the largest size. Every server is stopped at the end; nothing leaves loopback.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from bench import _side_by_side_load as load
from bench._evalsite_http import EvalsiteTarget
from bench._label_studio import LabelStudio, installed
from bench._servers import load_average
from bench.imports import item_records

ROWS = [  # key, label, unit; "rate" rows are better when larger
    ("import", "import items/s (API, one request)", "rate"),
    ("next", "next item (claim), ms", "ms"),
    ("list", "item list, first page, ms", "ms"),
    ("save", "save an answer, ms", "ms"),
    ("submit", "submit & next, ms", "ms"),
]
# Times Label Studio at the largest size: issue #33's acceptance (it raised #17's 2x and 10x).
TARGETS = {"import": 3, "next": 15, "list": 15, "save": 15}
STEPS = ("list", "next", "save", "submit")


def _bodies(size: int) -> tuple[bytes, bytes]:
    """The same items as Evalsite's JSONL body and as Label Studio's task list."""
    records = list(item_records(size))
    evalsite = "".join(json.dumps(r) + "\n" for r in records)
    tasks = [{"data": {k: v for k, v in r.items() if k != "type"}} for r in records]
    return evalsite.encode(), json.dumps(tasks).encode()


def ratio(key: str, peer: float | None, ours: float | None) -> float | None:
    if not peer or not ours:
        return None
    return ours / peer if key == "import" else peer / ours


def _cell(key: str, value: float | None, failed: str | None = None) -> str:
    if value is None:
        return f"failed ({failed})" if failed else "—"
    return f"{value:,.0f}" if key == "import" else f"{value:.1f}"


def table(results: dict, sizes: list[int], names: list[str]) -> list[str]:
    """Markdown rows: per size and figure, each target's median and its ratio to the peer."""
    peer = "Label Studio"
    ours = [n for n in names if n != peer]
    header = ["items", "figure", *([peer] if peer in names else [])]
    for name in ours:
        header += [name, "× LS"] if peer in names else [name]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for size in sizes:
        for key, label, _ in ROWS:
            row = [f"{size:,}", label]
            if peer in names:
                row.append(_cell(key, results[peer][size].get(key)))
            for name in ours:
                got = results[name][size]
                row.append(_cell(key, got.get(key), got.get(f"{key}_failed")))
                if peer in names:
                    r = ratio(key, results[peer][size].get(key), got.get(key))
                    row.append("—" if r is None else f"{r:.1f}×")
            lines.append("| " + " | ".join(row) + " |")
    return lines


def verdicts(results: dict, size: int, ours: list[str]) -> list[str]:
    lines = []
    for name in ours:
        for key, wanted in TARGETS.items():
            r = ratio(key, results["Label Studio"][size].get(key), results[name][size].get(key))
            got = "not measured" if r is None else f"{r:.1f}×"
            met = r is not None and r >= wanted
            lines.append(
                f"{name}, {key} at {size:,}: {got} (target ≥ {wanted}×): "
                f"{'met' if met else 'NOT met'}"
            )
            if r is not None:
                print(f"RESULT ratio_{key}_{name.split()[-1].lower()}_{size}={r:.2f}")
    return lines


def machine(peer_version: str) -> list[str]:
    memory = Path("/proc/meminfo").read_text().split("\n")[0].split()[1]
    pg = subprocess.run(
        ["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc", "show server_version"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return [
        f"machine: {subprocess.check_output(['nproc']).decode().strip()} cores, "
        f"{int(memory) / 1024**2:.1f} GiB memory, {platform.platform()}",
        f"versions: Python {platform.python_version()}, Django {version('django')}, "
        f"gunicorn {version('gunicorn')}, SQLite {sqlite3.sqlite_version}, "
        f"PostgreSQL {pg or 'unreachable'}, Label Studio {peer_version}",
    ]


def _interleaved(targets, repeats: int) -> dict:
    """Each request once per target in turn, so a change of load on the shared machine falls
    on every target alike. Every round is kept: no warm-up, a user's first request counts."""
    samples = {t.name: {key: [] for key in STEPS} for t in targets}

    def keep(target, key: str, n: int, ms: float | None) -> None:
        if ms is not None:
            samples[target.name][key].append(ms)

    rounds = range(repeats)
    for n in rounds:
        for target in targets:
            keep(target, "list", n, target.list())
    for n in rounds:
        for target in targets:
            keep(target, "next", n, target.next(n))
        for target in targets:
            keep(target, "save", n, target.save(n))
    for n in rounds:
        for target in targets:
            keep(target, "submit", n, target.submit(n))
    return samples


def _imports(targets, size: int, repeats: int, imports: int, opened: list, loads: list) -> dict:
    """Each target imports the `size` items `imports` times, in turn (a fresh project or
    database each time; the last one stays open for the requests): {name: median items/s}.
    One import is one sample of a noisy machine: the median of several is the figure."""
    evalsite_body, tasks_body = _bodies(size)
    rates: dict[str, list[float]] = {t.name: [] for t in targets}
    for round_ in range(imports):
        for target in targets:
            body = tasks_body if target.name == "Label Studio" else evalsite_body
            before = load_average()
            result = target.open(size, body, repeats)
            rates[target.name].append(result["import"])
            if round_ == imports - 1:
                opened.append(target)
            else:
                target.close(discard=True)
            loads.append(
                f"{target.name} import {round_ + 1} of {size:,}: {result['import']:,.0f} "
                f"items/s, load average {before}"
            )
            print(f"... {loads[-1]}", flush=True)
    return {name: statistics.median(r) for name, r in rates.items()}


def _measure(targets, sizes: list[int], repeats: int, imports: int = 3) -> tuple[dict, list[str]]:
    results = {t.name: {} for t in targets}
    loads = []
    for size in sizes:
        opened = []
        try:
            rates = _imports(targets, size, repeats, imports, opened, loads)
            for target in targets:
                results[target.name][size] = {"import": rates[target.name]}
            before = load_average()
            print(f"... {size:,} items: requests, interleaved", flush=True)
            samples = _interleaved(targets, repeats)
            loads.append(f"requests at {size:,}: load average {before} -> {load_average()}")
        finally:
            for target in opened:
                target.close()
        for target in targets:
            results[target.name][size].update(
                {
                    key: statistics.median(v) if v else None
                    for key, v in samples[target.name].items()
                }
            )
    return results, loads


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--imports", type=int, default=3, help="imports per target and size")
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--no-label-studio", action="store_true")
    parser.add_argument("--no-load", action="store_true")
    parser.add_argument("--no-label-studio-load", action="store_true")
    parser.add_argument("--load-raters", type=int, default=16)
    parser.add_argument("--load-seconds", type=float, default=30)
    # Enough that 16 raters on SQLite (116 answers/s on 2026-12-05) are still busy at 30 s.
    parser.add_argument("--load-items", type=int, default=10_000)
    parser.add_argument("--load-answers", type=int, default=320, help="during the import")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    available, peer_version = (False, "not asked for") if args.no_label_studio else installed()
    header = machine(peer_version if available else f"unavailable ({peer_version})")
    print("\n".join(header), f"\nload average at start: {load_average()}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="evalsite-side-by-side-"))
    peer_load = not (args.no_load or args.no_label_studio_load) and available
    loaded = {}
    try:
        targets = [EvalsiteTarget(db, work) for db in args.databases.split(",")]
        if available:
            with LabelStudio(work) as peer:
                results, loads = _measure([peer, *targets], sizes, args.repeats, args.imports)
                if peer_load:  # on the same server, after its single requests
                    load_options = (args.load_raters, args.load_seconds, args.load_items)
                    loaded[load.PEER] = load.peer_load(peer, *load_options)
        else:
            results, loads = _measure(targets, sizes, args.repeats, args.imports)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # the SQLite files and Label Studio's data
    names = list(results)
    print(
        f"\nmedians of {args.repeats} requests over loopback HTTP "
        f"(import: median of {args.imports} imports, each one request into a fresh project)"
    )
    print("\n".join(table(results, sizes, names)))
    print("\n".join(loads))
    if available:
        print("\n".join(verdicts(results, sizes[-1], [n for n in names if n != "Label Studio"])))
    else:
        print(f"Label Studio was unavailable ({peer_version}): no ratios claimed.")
    if not args.no_load:
        _load_step(args, sizes[-1], loaded)
    return results


def _load_step(args, largest: int, loaded: dict) -> None:
    """Evalsite under the load Label Studio had (if it ran), the table; then during an import."""
    for database in args.databases.split(","):
        options = (database, args.load_raters, args.load_seconds, args.load_items)
        loaded[load.NAMES[database]] = load.evalsite_load(*options)
    print(
        f"\n{args.load_raters} raters for {args.load_seconds:g} s each, "
        f"{args.load_items:,} items, at most one answer per item, over loopback HTTP"
    )
    print("\n".join(load.table(loaded)))
    if load.PEER in loaded:
        print("\n".join(load.verdicts(loaded)))
    load.run_load(["--answers", str(args.load_answers), "--during-import", str(largest)])


def _stop_on_sigterm(signum, frame) -> None:
    sys.exit(128 + signum)  # unwinds: every server started so far is stopped on the way out


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    main()
