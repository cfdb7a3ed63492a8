"""gunicorn as `make serve` starts it (gunicorn.conf.py: evalsite/gunicorn_worker.py): a worker
whose threads are all busy leaves new connections to a free worker instead of queueing them
behind its own requests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.pid_app import SLOW_SECONDS

ROOT = Path(__file__).resolve().parent.parent


def _get(base: str, path: str) -> tuple[int, float]:
    """(the serving process id, seconds) of one request on a connection of its own."""
    start = time.perf_counter()
    response = httpx.get(base + path, timeout=30, headers={"Connection": "close"})
    response.raise_for_status()
    return int(response.text), time.perf_counter() - start


@pytest.fixture
def two_single_thread_workers():
    env = {**os.environ, "WEB_THREADS": "1"}
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    process = subprocess.Popen(
        [gunicorn, "tests.pid_app:app", "--config", "gunicorn.conf.py",
         "--bind", "127.0.0.1:0", "--workers", "2"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        base = _address(process)
        pids, deadline = set(), time.monotonic() + 30
        while len(pids) < 2 and time.monotonic() < deadline:  # both workers booted
            pids.add(_get(base, "/")[0])
        assert len(pids) == 2, "the second worker never answered"
        yield base
    finally:
        process.terminate()
        process.wait(timeout=20)


def _address(process) -> str:
    for line in process.stderr:  # gunicorn logs "Listening at: http://127.0.0.1:PORT (pid)"
        if "Listening at:" in line:
            threading.Thread(target=process.stderr.read, daemon=True).start()  # keep draining
            return line.split("Listening at: ")[1].split()[0]
    raise AssertionError("gunicorn did not start")


def test_a_busy_worker_leaves_new_connections_to_a_free_one(two_single_thread_workers):
    base = two_single_thread_workers
    slow: list[tuple[int, float]] = []
    holder = threading.Thread(target=lambda: slow.append(_get(base, "/slow")))
    holder.start()
    time.sleep(0.5)  # the slow request holds its worker's only thread
    quick = [_get(base, "/") for _ in range(12)]
    holder.join()
    ((busy_pid, _),) = slow
    assert [pid for pid, _ in quick if pid == busy_pid] == []
    assert max(seconds for _, seconds in quick) < SLOW_SECONDS / 2
