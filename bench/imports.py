"""Import benchmark: ``.venv/bin/python -m bench.imports`` (or ``python -m bench imports``).

Generates generic FORMATS §4 ``item`` records (input object, output text, reference, 2-3 slices,
metadata; seeded) as JSONL into a temp folder and imports each file with ``file_import`` into a
fresh project of a fresh, migrated SQLite database (``bench/_django.py``; set ``DATABASE_URL`` to an
empty PostgreSQL database to measure there). Per size:
  * rate: wall time of ``file_import`` (one transaction, detection included), items/s;
  * CPU rate: items per CPU-second of this process plus, on PostgreSQL on this machine, its
    server backend (from /proc): what the import costs, whatever else shares the cores;
  * memory: the same file again into another fresh project under ``tracemalloc`` (Python heap
    peak during the import) -- a separate run, because tracing slows the import down;
  * ru_maxrss: growth of the process's resident high-water mark by the first run of each
    size (the small file runs first, so the large file's figure shows any excess).
Memory must be flat in file size: the 100k peak should match the 10k peak, not be 10x it.
Target: >= 10,000 items/s at 100k on SQLite (the peer, Label Studio, does 5,200 tasks/s).
``--profile`` prints the top of a cProfile of one timed import instead of measuring memory.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import pstats
import random
import resource
import statistics
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from bench._django import setup_django

MB = 1024 * 1024
SLICES = ["safety-sensitive", "long-input", "multilingual", "math", "code"]


def item_records(n: int, *, seed: int = 7) -> Iterator[dict]:
    """``n`` seeded FORMATS §4 item records (input object, output, reference, slices)."""
    rng = random.Random(seed)
    for i in range(n):
        slices = ["all", f"bucket-{i % 20}"]
        if rng.random() < 0.3:
            slices.append(rng.choice(SLICES))
        yield {
            "type": "item",
            "item_id": f"sample-{i:07d}",
            "input": {
                "question": f"What is {i} + {i % 97}?",
                "context": "x" * rng.randint(20, 200),
            },
            "output": f"The answer is {i + i % 97}.",
            "reference": str(i + i % 97),
            "slices": slices,
            "metadata": {"source": "bench", "difficulty": rng.randint(1, 5)},
        }


def write_items(path: Path, n: int, *, seed: int = 7) -> int:
    """Write ``n`` item records to ``path`` (JSONL); returns the file size in bytes."""
    with path.open("w", encoding="utf-8") as handle:
        for record in item_records(n, seed=seed):
            handle.write(json.dumps(record) + "\n")
    return path.stat().st_size


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def _server_cpu() -> float:
    """CPU seconds used so far by this connection's PostgreSQL backend, when the server runs on
    this machine (read from /proc); 0 on SQLite, whose work is this process's own."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return 0.0
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    stat = Path(f"/proc/{pid}/stat")
    if not stat.exists():
        return 0.0
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def _import(path: Path, slug: str):
    """Import `path` into a new project: (wall seconds, CPU seconds, report). CPU counts this
    process and, on PostgreSQL, its server backend: on a shared machine the wall clock mostly
    measures the wait for a core."""
    from reviews.models import Project
    from reviews.services.imports.pipeline import file_import

    project = Project.objects.create(slug=slug, name=slug)
    gc.collect()
    server = _server_cpu()
    wall, cpu = time.perf_counter(), time.process_time()
    report = file_import(actor=None, project=project, path=path)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu + _server_cpu() - server, report


def _timed(path: Path, n: int, slug: str) -> tuple[float, float]:
    wall, cpu, report = _import(path, slug)
    assert report.counts.get("items_created") == n, report.counts
    return wall, cpu


def _traced(path: Path, n: int, slug: str) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        *_, report = _import(path, slug)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert report.counts.get("items_created") == n, report.counts
    return peak / MB


def _profile(path: Path, slug: str, top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    _import(path, slug)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("cumulative")
    stats.print_stats(top)
    print(out.getvalue())
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).strip_dirs().sort_stats("tottime").print_stats(top)
    print(out.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000, help="the large file (default 100k)")
    parser.add_argument("--small", type=int, default=10_000, help="the small file (default 10k)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per size (median)")
    parser.add_argument("--profile", action="store_true", help="cProfile one large import")
    parser.add_argument("--top", type=int, default=30, help="rows of profile to print")
    # `python -m bench imports` calls main() with no arguments: never read the runner's argv.
    args = parser.parse_args([] if argv is None else argv)

    work = setup_django()
    from django.db import connection

    print(f"database {connection.settings_dict['NAME']} ({connection.vendor})")
    # Small first: its ru_maxrss growth is then its own, and the large run shows any excess.
    sizes = sorted({args.small, args.items})
    files = {}
    for n in sizes:
        files[n] = work / f"items-{n}.jsonl"
        size = write_items(files[n], n)
        print(f"generated {n:,} item records: {size / MB:,.1f} MB")

    if args.profile:
        _profile(files[args.items], "profiled", args.top)
        return 0
    rss_start = _maxrss_mb()

    # Timed runs first (interleaved sizes, so machine load hits both alike), traced runs after.
    walls: dict[int, list[float]] = {n: [] for n in sizes}
    cpus: dict[int, list[float]] = {n: [] for n in sizes}
    rss: dict[int, float] = {}
    for round_ in range(args.repeats):
        for n in sizes:
            wall, cpu = _timed(files[n], n, f"timed-{n}-{round_}")
            walls[n].append(wall)
            cpus[n].append(cpu)
            rss.setdefault(n, _maxrss_mb() - rss_start)  # growth after its first run
    peaks = {n: _traced(files[n], n, f"traced-{n}") for n in sorted(sizes)}

    print(f"{args.repeats} timed run(s) per size, each into a new project of the same database")
    print(
        f"{'items':>9} {'median s':>9} {'items/s':>9} {'best/s':>9} {'CPU items/s':>12} "
        f"{'tracemalloc peak MB':>20} {'ru_maxrss +MB':>14}"
    )
    rates = {}
    for n in sorted(sizes):
        wall = statistics.median(walls[n])
        rates[n] = n / wall
        print(
            f"{n:>9,} {wall:>9.2f} {rates[n]:>9,.0f} {n / min(walls[n]):>9,.0f} "
            f"{n / statistics.median(cpus[n]):>12,.0f} {peaks[n]:>20.1f} {rss[n]:>14.1f}"
        )
    large, small = args.items, args.small
    print(
        f"ru_maxrss +MB: growth of the process high-water mark ({rss_start:.1f} MB before "
        "the imports) after the first run of each size; CPU: this process"
        + (" + its PostgreSQL backend" if connection.vendor == "postgresql" else "")
    )
    print(
        f"peak memory {large:,} / {small:,} items: {peaks[large] / peaks[small]:.2f}x "
        f"(flat: about 1x; the file is {large / small:.0f}x larger)"
    )
    print(
        f"rate at {large:,}: {rates[large]:,.0f} items/s wall (median), "
        f"{large / statistics.median(cpus[large]):,.0f} items/s of CPU "
        "(target >= 10,000; peer 5,200)"
    )
    print(f"RESULT import_items_per_s={rates[large]:.0f}")
    print(f"RESULT import_items_per_cpu_s={large / statistics.median(cpus[large]):.0f}")
    print(f"RESULT import_peak_mb={peaks[large]:.1f}")
    print(f"RESULT import_peak_mb_small={peaks[small]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
