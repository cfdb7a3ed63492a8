"""Evalsite over loopback HTTP: gunicorn with production settings on SQLite or PostgreSQL.

Per size: a fresh database (``bench/_evalsite_setup.py``), one gunicorn (2 workers, DEBUG off,
whitenoise's manifest, the database task backend) on a free port of 127.0.0.1, then the
requests as a script and a browser send them: import (API, one request), the item list's first
page, next item (claim), save an answer (htmx autosave), submit & next. Each step is one timed
request, so the caller can interleave them with another server's (``bench/side_by_side.py``).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench._servers import HOST, Server, checked, elapsed_ms, free_port, workers_peak_mb

ROOT = Path(__file__).resolve().parent.parent
PG_BASE = "postgres://postgres@127.0.0.1:5432"
# The benches' PostgreSQL databases are named PG_PREFIX + "_" + what: `BENCH_PG_PREFIX` lets
# sessions sharing one server keep their databases apart (each bench drops and creates its own).
PG_PREFIX = os.environ.get("BENCH_PG_PREFIX", "evalsite_bench")
CSRF = secrets.token_hex(16)  # 32 characters: a valid CSRF secret the client chooses itself
QUESTIONS = ["criterion:correct"]  # every imported item is ready to rate, like a LS task


def _environment(database_url: str, work: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(work),
        "DJANGO_SETTINGS_MODULE": "evalsite.settings",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": HOST,
        "DATABASE_URL": database_url,
        "EVALSITE_VAR_DIR": str(work),
        "TASKS_BACKEND": "database",  # production: tasks wait for a worker (none runs here)
        "LOG_LEVEL": "WARNING",
        # Loopback is plain HTTP: no HTTPS redirect, HSTS or secure-only cookies.
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "SECURE_HSTS_SECONDS": "0",
    }


def _client(base: str, session_key: str | None = None, **headers) -> httpx.Client:
    cookies = {"csrftoken": CSRF, **({"sessionid": session_key} if session_key else {})}
    return httpx.Client(
        base_url=base, timeout=900, cookies=cookies, headers={"X-CSRFToken": CSRF, **headers}
    )


class EvalsiteTarget:
    """One database kind; `open(size, ...)` starts a fresh site, `close()` stops it."""

    def __init__(self, database: str, work: Path, *, workers: int = 2):
        self.database, self.work, self.workers = database, work, workers
        self.name = f"Evalsite {'PostgreSQL' if database == 'postgresql' else 'SQLite'}"
        self.server: Server | None = None

    def _url(self, size: int) -> str:
        if self.database == "postgresql":
            return f"{PG_BASE}/{PG_PREFIX}_{size}"
        return f"sqlite:///{self.work / f'evalsite-{size}.sqlite3'}"

    def open(self, size: int, body: bytes, raters: int) -> dict:
        """A fresh site with `raters` raters; imports `body` (timed). {"import": items/s}."""
        work = self.work / f"{self.database}-{size}"
        (work / "static").mkdir(parents=True, exist_ok=True)
        env = _environment(self._url(size), work)
        self.slug, self.size = f"bench-{size}", size
        setup = subprocess.run(
            [sys.executable, "-m", "bench._evalsite_setup", "--slug", self.slug,
             "--raters", str(raters)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if setup.returncode:
            raise RuntimeError(f"set-up failed: {setup.stderr[-2000:]}")
        site = json.loads(setup.stdout.strip().splitlines()[-1])
        port = free_port()
        argv = [
            str(ROOT / ".venv/bin/gunicorn"), "evalsite.wsgi", "--bind", f"{HOST}:{port}",
            "--workers", str(self.workers), "--timeout", "900", "--log-level", "warning",
        ]  # fmt: skip
        self.server = Server(argv, env=env, log=work / "gunicorn.log", cwd=ROOT).__enter__()
        base = f"http://{HOST}:{port}"
        try:
            self.server.wait_until_up(f"{base}/accounts/login/", seconds=120)
            # Nothing run by hand on the database: the import leaves its tables analyzed
            # (evalsite/planner_statistics.py), as a user who imports and opens the list gets.
            result = self._import(base, site["token"], size, body)
        except BaseException:  # not opened: the caller will not close it
            self.server.stop()
            raise
        self.admin = _client(base, site["admin"])
        self.raters = [_client(base, key) for key in site["raters"]]
        self.held: dict[int, int] = {}  # rater index -> the item it claimed
        return result

    def close(self, *, discard: bool = False) -> None:
        """Stop the server; `discard` also deletes a SQLite file (the next `open` of this size
        starts afresh; a PostgreSQL database is dropped by the set-up anyway)."""
        for client in (self.admin, *self.raters):
            client.close()
        peak = workers_peak_mb(self.server.process.pid)
        print(f"... {self.name}, {self.size:,} items: workers' peak RSS {peak:.0f} MB", flush=True)
        self.server.stop()
        if discard and self.database == "sqlite":
            Path(self._url(self.size).removeprefix("sqlite:///")).unlink()

    def _import(self, base: str, token: str, size: int, body: bytes) -> dict:
        """The JSONL body in one streamed request, every item asked `QUESTIONS` on arrival."""
        url = f"/api/projects/{self.slug}/items.jsonl"
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"}
        with _client(base, **headers) as api:
            start = time.perf_counter()
            response = api.post(url, params={"questions": QUESTIONS}, content=body)
            took = elapsed_ms(start)
        counts = checked(response, 201).json()["counts"]
        if counts.get("items_created") != size:
            raise RuntimeError(f"Evalsite imported {counts} of {size} items")
        return {"import": size / (took / 1000)}

    def list(self) -> float:
        start = time.perf_counter()
        checked(self.admin.get(f"/p/{self.slug}/items/"), 200)
        return elapsed_ms(start)

    def next(self, n: int) -> float:
        """Rater `n` (nothing in progress) asks for the next item: a claim, 302."""
        start = time.perf_counter()
        response = checked(self.raters[n].post(f"/p/{self.slug}/review/next/"), 302)
        took = elapsed_ms(start)
        self.held[n] = _item_in(response)
        return took

    def save(self, n: int) -> float:
        """Rater `n` autosaves an answer to the question of the item it claimed."""
        rater, item = self.raters[n], self.held[n]
        page = checked(rater.get(f"/p/{self.slug}/items/{item}/review/"), 200)  # not timed
        question = re.search(r"/questions/(\d+)/answer/", page.text).group(1)
        url = f"/p/{self.slug}/items/{item}/questions/{question}/answer/"
        data = {"choice": "label:pass", "expected_seq": "0"}
        start = time.perf_counter()
        checked(rater.post(url, data=data, headers={"HX-Request": "true"}), 200)
        return elapsed_ms(start)

    def submit(self, n: int) -> float:
        """Rater `n` submits its item and is sent to the next one it claims (302)."""
        start = time.perf_counter()
        url = f"/p/{self.slug}/items/{self.held[n]}/submit/"
        response = checked(self.raters[n].post(url), 302)
        took = elapsed_ms(start)
        if _item_in(response) is None:
            raise RuntimeError(f"submit & next gave no next item: {response.headers}")
        return took


def _item_in(response: httpx.Response) -> int | None:
    match = re.search(r"/items/(\d+)/review/", response.headers.get("location", ""))
    return int(match.group(1)) if match else None
