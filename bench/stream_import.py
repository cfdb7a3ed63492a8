"""One streamed API import under gunicorn: ``.venv/bin/python -m bench.stream_import``.

``[--items 100000] [--database sqlite|postgresql]``. Generates N FORMATS §4 item records (the
generator of ``bench/imports.py``) as one JSONL file and posts it, in ONE request, to
``POST /api/projects/{slug}/items.jsonl?questions=criterion:correct`` of gunicorn (2 workers,
production settings, loopback only; the same set-up as ``make bench``). The client streams the
file; the server reads the body as it arrives, never as ``request.body``, so a 100k-item body
(34 MB) passes ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (10 MB). Prints the status, the seconds, the
items per second over HTTP, and the workers' peak resident memory (VmHWM) before and after:
memory must not grow with the body.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench._evalsite_http import PG_BASE, PG_PREFIX, ROOT, _environment
from bench._servers import HOST, Server, free_port, workers_peak_mb
from bench.imports import write_items

MB = 1024 * 1024


def run(items: int, database: str, work: Path) -> dict:
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
        start = time.perf_counter()
        with body.open("rb") as stream:
            response = httpx.post(
                f"{base}/api/projects/stream/items.jsonl?questions=criterion:correct",
                content=stream,
                headers={
                    "Authorization": f"Bearer {token}",
                    "Content-Type": "application/x-ndjson",
                    "Content-Length": str(size),
                },
                timeout=900,
            )
        seconds = time.perf_counter() - start
        after = workers_peak_mb(server.process.pid)
    counts = response.json().get("counts") if response.status_code == 201 else response.text
    print(f"{database}, gunicorn 2 workers: {items:,} items, one {size / MB:.1f} MB JSONL body")
    print(
        f"HTTP {response.status_code} in {seconds:.1f} s: {items / seconds:,.0f} items/s; {counts}"
    )
    print(f"workers' peak RSS: {before:.0f} MB before, {after:.0f} MB after the import")
    print(f"RESULT stream_import_items_per_s={items / seconds:.0f}")
    print(f"RESULT stream_import_worker_peak_mb={after:.0f}")
    return {"status": response.status_code, "counts": counts, "bytes": size, "peak_mb": after}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args([] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="evalsite-stream-") as folder:
        result = run(args.items, args.database, Path(folder))
    return 0 if result["status"] == 201 else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
