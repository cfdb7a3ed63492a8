"""Judge-run benchmark: ``.venv/bin/python -m bench runs``.

The runner's own overhead per call, not a model's: the STUB model server (judging/stub_model.py,
no delay) runs in its own process on 127.0.0.1, and a fresh SQLite database (bench/_django.py)
holds N items of one criterion. Per concurrency 1, 8 and 32: a new judge version (a new prompt,
so no call is reused) runs over 1,000 items; calls/s = calls / wall time of ``run_execute``
(planning, HTTP, parsing, writing Call and Verdict rows, progress). Then a 10k-item run at
concurrency 8 under tracemalloc (Python heap peak) and the same run again, where every call is
reused (fingerprint look-ups only).
"""

from __future__ import annotations

import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from bench._django import setup_django

ROOT = Path(__file__).resolve().parent.parent
STUB = (
    "from judging.stub_model import make_server\n"
    "s = make_server()\nprint(s.server_address[1], flush=True)\ns.serve_forever()\n"
)
MB = 1024 * 1024


def start_stub() -> tuple[subprocess.Popen, str]:
    """The stub model server on a free port, which JUDGE_ALLOWED_HOSTS then allows."""
    from django.conf import settings

    proc = subprocess.Popen(
        [sys.executable, "-c", STUB], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    port = int(proc.stdout.readline())
    settings.JUDGE_ALLOWED_HOSTS = [f"127.0.0.1:{port}"]
    return proc, f"http://127.0.0.1:{port}/v1"


def build(n_items: int):
    from judging.models import Criterion
    from reviews.models import Item, Project

    project = Project.objects.create(slug=f"bench-runs-{n_items}", name="bench runs")
    Criterion.objects.create(project=project, name="faithful", labels=["pass", "fail"], sha256="b")
    Item.objects.bulk_create(
        Item(
            project=project,
            external_id=f"i{i:06}",
            input={"question": f"What is {i} + 1?"},
            output=f"The answer is {i + 1}.",
            expected=str(i + 1) if i % 3 else "",
        )
        for i in range(n_items)
    )
    return project


def timed_run(project, url: str, prompt: str, *, limit: int | None, concurrency: int):
    from judging.services.judges.configs import JudgeSettings, judge_config_save
    from judging.services.runs.control import run_create
    from judging.services.runs.runner import run_execute

    settings = JudgeSettings(
        provider="openai-compatible", model="stub", prompt=prompt, criterion="faithful",
        base_url=url,
    )  # fmt: skip
    config = judge_config_save(project=project, name="bench", settings=settings).config
    run = run_create(
        config=config, split="all", limit=limit, concurrency=concurrency, confirm_held_out=True
    )
    start = time.perf_counter()
    run = run_execute(run)
    return run, time.perf_counter() - start


def main() -> None:
    setup_django()
    stub, url = start_stub()
    try:
        small, large = build(1_000), build(10_000)
        print("| concurrency | calls | seconds | calls/s |")
        print("| --- | --- | --- | --- |")
        for k in (1, 8, 32):
            run, seconds = timed_run(
                small, url, f"Judge {{{{ labels }}}} (k={k})", limit=None, concurrency=k
            )
            assert run.done == run.planned, run.error
            print(f"| {k} | {run.done} | {seconds:.2f} | {run.done / seconds:,.0f} |")
            print(f"RESULT runs_calls_per_s_c{k}={run.done / seconds:.0f}")
        tracemalloc.start()
        run, seconds = timed_run(large, url, "Judge {{ labels }} (10k)", limit=None, concurrency=8)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"10k-item run, concurrency 8: {run.done} calls in {seconds:.1f} s (traced), "
              f"Python heap peak {peak / MB:.1f} MB")  # fmt: skip
        print(f"RESULT runs_10k_peak_mb={peak / MB:.1f}")
        again, seconds = timed_run(
            large, url, "Judge {{ labels }} (10k)", limit=None, concurrency=8
        )
        print(f"the same 10k run again: {again.reused} calls reused, 0 made, in {seconds:.1f} s")
        print(f"RESULT runs_10k_reuse_s={seconds:.1f}")
    finally:
        stub.terminate()
        stub.wait()


if __name__ == "__main__":
    main()
