"""One streamed API import under gunicorn: ``.venv/bin/python -m bench.stream_import``.

``[--items 100000] [--database sqlite|postgresql] [--kind items|verdicts|labels]``. Generates N FORMATS §4 item records (the generator of
``bench/imports.py``) as one JSONL file and posts it, in ONE request, to
``POST /api/projects/{slug}/items.jsonl?questions=criterion:correct`` of gunicorn (2 workers,
production settings, loopback only; the same set-up as ``make bench``). The client streams the
file; the server reads the body as it arrives, never as ``request.body``, so a 100k-item body
(34 MB) passes ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (10 MB). Prints the status, the seconds, the
items per second over HTTP, and the workers' peak resident memory (VmHWM) before and after:
memory must not grow with the body.

``--kind verdicts`` (or ``labels``) then posts, in a second ONE request to the same endpoint,
2 judge verdicts (two judges) or 2 human labels (two raters) for each of the N items (200k
records for 100k items, as 2M for a 1M-item project), and prints records per second beside the
items' rate of the same run (issue #33: at least as fast per record as items).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench._evalsite_http import PG_BASE, PG_PREFIX, ROOT, _environment
from bench._servers import HOST, Server, free_port, workers_peak_mb
from bench.imports import write_items

MB = 1024 * 1024


JUDGES = [
    {"provider": "openai", "model": "gpt-4o-mini", "temperature": 0},
    {"provider": "anthropic", "model": "claude-haiku", "temperature": 0},
]
RATERS = ["ana", "ben"]


def judging_records(kind: str, items: int) -> Iterator[dict]:
    """2 verdicts (one per judge) or 2 human labels (one per rater) for each bench item, on
    the set-up's criterion ``correct`` (pass/fail), seeded."""
    rng = random.Random(11)
    for i in range(items):
        item_id = f"sample-{i:07d}"
        for n in range(2):
            label = "pass" if rng.random() < 0.7 else "fail"
            if kind == "labels":
                yield {"type": "human_label", "item_id": item_id, "criterion": "correct",
                       "rater": RATERS[n], "label": label}  # fmt: skip
                continue
            yield {
                "type": "verdict", "item_id": item_id, "criterion": "correct", "label": label,
                "judge": JUDGES[n], "confidence": round(rng.random(), 3),
                "explanation": f"The output {'matches' if label == 'pass' else 'misses'} the "
                "reference.", "raw": label,
            }  # fmt: skip


def write_judging(path: Path, kind: str, items: int) -> int:
    with path.open("w", encoding="utf-8") as handle:
        for record in judging_records(kind, items):
            handle.write(json.dumps(record) + "\n")
    return path.stat().st_size


def _post(base: str, token: str, body: Path, query: str = "") -> tuple[httpx.Response, float]:
    size = body.stat().st_size
    start = time.perf_counter()
    with body.open("rb") as stream:
        response = httpx.post(
            f"{base}/api/projects/stream/items.jsonl{query}",
            content=stream,
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/x-ndjson",
                "Content-Length": str(size),
            },
            timeout=900,
        )
    return response, time.perf_counter() - start


def _report(what: str, response: httpx.Response, seconds: float, count: int) -> None:
    counts = response.json().get("counts") if response.status_code == 201 else response.text
    print(
        f"HTTP {response.status_code} in {seconds:.1f} s: {count / seconds:,.0f} {what}/s; {counts}"
    )


def _judging_post(base, token, work, kind, items, server, before) -> tuple[httpx.Response, float]:
    """The second request of ``--kind verdicts|labels``: 2 records per item, timed."""
    records = work / f"{kind}.jsonl"
    size = write_judging(records, kind, items)
    response, seconds = _post(base, token, records)
    peak = workers_peak_mb(server.process.pid)
    print(f"then {2 * items:,} {kind}, one {size / MB:.1f} MB JSONL body")
    _report(kind, response, seconds, 2 * items)
    print(f"workers' peak RSS: {before:.0f} MB before, {peak:.0f} MB after the import")
    print(f"RESULT stream_import_{kind}_per_s={2 * items / seconds:.0f}")
    print(f"RESULT stream_import_{kind}_worker_peak_mb={peak:.0f}")
    return response, peak


def run(items: int, database: str, work: Path, kind: str = "items"):
    url = (
        f"{PG_BASE}/{PG_PREFIX}_stream"
        if database == "postgresql"
        else f"sqlite:///{work / 'stream.sqlite3'}"
    )
    (work / "static").mkdir(parents=True, exist_ok=True)
    env = _environment(url, work)
    setup = subprocess.run(
        [sys.executable, "-m", "bench._evalsite_setup", "--slug", "stream", "--raters", "0"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if setup.returncode:
        raise RuntimeError(f"set-up failed: {setup.stderr[-2000:]}")
    token = json.loads(setup.stdout.strip().splitlines()[-1])["token"]
    body = work / "items.jsonl"
    size = write_items(body, items)
    port = free_port()
    argv = [
        str(ROOT / ".venv/bin/gunicorn"), "evalsite.wsgi", "--bind", f"{HOST}:{port}",
        "--workers", "2", "--timeout", "900", "--log-level", "warning",
    ]  # fmt: skip
    with Server(argv, env=env, log=work / "gunicorn.log", cwd=ROOT) as server:
        base = f"http://{HOST}:{port}"
        server.wait_until_up(f"{base}/accounts/login/", seconds=120)
        before = workers_peak_mb(server.process.pid)
        response, seconds = _post(base, token, body, "?questions=criterion:correct")
        after = workers_peak_mb(server.process.pid)
        print(f"{database}, gunicorn 2 workers: {items:,} items, one {size / MB:.1f} MB JSONL body")
        _report("items", response, seconds, items)
        print(f"workers' peak RSS: {before:.0f} MB before, {after:.0f} MB after the import")
        print(f"RESULT stream_import_items_per_s={items / seconds:.0f}")
        print(f"RESULT stream_import_worker_peak_mb={after:.0f}")
        if kind != "items" and response.status_code == 201:
            response, after = _judging_post(base, token, work, kind, items, server, after)
    counts = response.json().get("counts") if response.status_code == 201 else response.text
    return {"status": response.status_code, "counts": counts, "bytes": size, "peak_mb": after}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--kind", choices=("items", "verdicts", "labels"), default="items")
    args = parser.parse_args([] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="evalsite-stream-") as folder:
        result = run(args.items, args.database, Path(folder), args.kind)
    return 0 if result["status"] == 201 else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
