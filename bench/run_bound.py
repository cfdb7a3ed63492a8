"""A judge run against a model of fixed latency: how near the concurrency/latency bound it gets.

    .venv/bin/python -m bench.run_bound                      # 2,000 calls, concurrency 16, 100 ms
    .venv/bin/python -m bench.run_bound --workers 2          # the same run shared by 2 db_workers
    .venv/bin/python -m bench.run_bound --workers 2 --database postgresql

The stub model server (judging/stub_model.py) runs in its own process on 127.0.0.1, answers
every call after `--model-ms`, and counts the calls it answered and when. With `--workers 1` the
run executes in this process (`run_execute`, as `manage.py run_judge` does); with more, the run
is started as the site starts one (RUN_WORKERS=N, N tasks queued) and N real `manage.py
db_worker` processes share it. calls/s is counted at the model: calls answered / (last answer -
first request), against the bound concurrency / latency (160 calls/s at 16 and 100 ms). A fresh
database each time: SQLite in a temporary folder, or PostgreSQL's `evalsite_bench_run_bound`
(dropped and created on 127.0.0.1 as user postgres); no manual step.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from bench._django import setup_django
from bench._evalsite_http import PG_BASE, PG_PREFIX
from bench._evalsite_setup import fresh_postgres
from bench._servers import load_average

ROOT = Path(__file__).resolve().parent.parent
STUB = """
import sys, threading, time
from judging.stub_model import make_server
delay = float(sys.argv[1])
server = make_server(delay=delay)
answered = []
class Counting(server.RequestHandlerClass):
    def do_POST(self):
        super().do_POST()
        answered.append(time.time())
server.RequestHandlerClass = Counting
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.readline()
print(len(answered), min(answered, default=0) - delay, max(answered, default=0), flush=True)
"""


def _stub(delay: float) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-c", STUB, str(delay)], cwd=ROOT, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)  # fmt: skip
    return proc, int(proc.stdout.readline())


def _stub_count(proc: subprocess.Popen) -> tuple[int, float]:
    """(calls answered, seconds from the first request to the last answer)."""
    proc.stdin.write("\n")
    proc.stdin.flush()
    n, first, last = proc.stdout.readline().split()
    proc.wait()
    return int(n), float(last) - float(first)


def _run(calls: int, concurrency: int, url: str, workers: int):
    from django.conf import settings

    from bench.runs import build
    from judging.services.judges.configs import JudgeSettings, judge_config_save
    from judging.services.runs.control import run_create
    from judging.services.runs.runner import run_execute
    from judging.tasks import run_enqueue

    project = build(calls)
    judge = JudgeSettings(provider="openai-compatible", model="stub", criterion="faithful",
                          prompt="Judge {{ labels }}", base_url=url)  # fmt: skip
    config = judge_config_save(project=project, name="bound", settings=judge).config
    settings.RUN_WORKERS = workers
    run = run_create(config=config, split="all", concurrency=concurrency, confirm_held_out=True,
                     from_site=workers > 1)  # fmt: skip
    if workers == 1:
        return run_execute(run)
    run_enqueue(run)
    argv = [sys.executable, "manage.py", "db_worker", "--no-reload", "--no-startup-delay",
            "--interval", "0.1"]  # fmt: skip
    env = {**os.environ, "JUDGE_ALLOWED_HOSTS": ",".join(settings.JUDGE_ALLOWED_HOSTS)}
    procs = [subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for _ in range(workers)]  # fmt: skip
    try:
        while run.status not in ("done", "failed", "cancelled", "budget_reached"):
            time.sleep(0.2)
            run.refresh_from_db()
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()
    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--model-ms", type=float, default=100)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args(argv)
    if args.database == "postgresql":
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_PREFIX}_run_bound"
        fresh_postgres(os.environ["DATABASE_URL"])
    if args.workers > 1:
        os.environ.setdefault("TASKS_BACKEND", "database")  # the workers take the queued tasks
    setup_django()
    from django.conf import settings
    from django.db import connection

    stub, port = _stub(args.model_ms / 1000)
    settings.JUDGE_ALLOWED_HOSTS = [f"127.0.0.1:{port}"]
    try:
        run = _run(args.calls, args.concurrency, f"http://127.0.0.1:{port}/v1", args.workers)
    finally:
        answered, seconds = _stub_count(stub)
    bound = args.concurrency / (args.model_ms / 1000)
    rate = answered / seconds if seconds > 0 else 0.0
    print(
        "| database | workers | concurrency | model ms | calls made | run status | calls/s at the model | bound | share |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print(f"| {connection.vendor} | {args.workers} | {args.concurrency} | {args.model_ms:g} | "
          f"{answered} | {run.status} (done {run.done}) | {rate:.1f} | {bound:.0f} | "
          f"{rate / bound:.1%} |")  # fmt: skip
    print(f"load average (1, 5, 15 min) at the end: {load_average()}")
    print(f"RESULT run_bound_calls_per_s={rate:.1f}")
    print(f"RESULT run_bound_share={rate / bound:.3f}")
    assert answered == run.done == args.calls, "a call was made twice, or not at all"


if __name__ == "__main__":
    main()
