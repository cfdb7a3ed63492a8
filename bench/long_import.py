"""Logins, claims and saves while a large review bundle imports on SQLite (issue 26, F4):
``.venv/bin/python -m bench.long_import [--cases 30000] [--clients 8] [--via worker|command]``.

A fresh SQLite site (production settings) under gunicorn (2 workers, 4 threads each) with a
project of 40 claimable review cases; then a bundle of ``--cases`` review cases
(``bench/_review_bundle.py``) imports, by ``manage.py db_worker`` (an upload's job) or by
``manage.py import_items``, while ``--clients`` raters each log in, claim, open the item, save
an answer and log out, again and again until the import ends. Every request is timed; prints
the slowest, how many took over 5 s and how many failed, and checks nothing was lost (every
case imported, every saved answer in the database).
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench._evalsite_http import ROOT, _environment
from bench._review_bundle import write_review_bundle
from bench._servers import HOST, Server, free_port

SLUG = "long"
PASSWORD = "a long enough password 26"
GUNICORN = Path(sys.executable).with_name("gunicorn")  # beside the python running this
READY = 40  # cases raters can claim while the big bundle imports
SETUP = """
from django.contrib.auth import get_user_model
from reviews.models import Role
from reviews.services.projects.members import membership_add, project_create
users = get_user_model().objects
admin = users.create_user("ada", password={password!r})
project = project_create(actor=admin, slug={slug!r}, overlap=1).project
membership_add(actor=admin, project=project, user=admin, role=Role.ADMIN)
for n in range({raters}):
    rater = users.create_user(f"rater-{{n}}", password={password!r})
    membership_add(actor=admin, project=project, user=rater, role=Role.RATER)
"""
START_JOB = """
from django.contrib.auth import get_user_model
from django.core.files import File
from django.db import transaction
from reviews.models import Project
from reviews.services.imports.jobs import import_job_start
from reviews.tasks import run_import_job
user = get_user_model().objects.get(username="ada")
with open({path!r}, "rb") as handle, transaction.atomic():
    job = import_job_start(actor=user, project=Project.objects.get(slug={slug!r}),
                           upload=File(handle, name="bundle.zip"))
    transaction.on_commit(lambda: run_import_job.enqueue(job.pk))
"""


@dataclass
class Requests:
    """Every timed request: (what, HTTP status or the error, seconds)."""

    done: list[tuple[str, str, float]] = field(default_factory=list)
    saved: int = 0  # answers the site said it saved
    lock: threading.Lock = field(default_factory=threading.Lock)

    def timed(self, what: str, call, expect: int) -> httpx.Response | None:
        start = time.perf_counter()
        try:
            response = call()
            outcome = str(response.status_code)
        except httpx.HTTPError as error:
            response, outcome = None, type(error).__name__
        with self.lock:
            self.done.append((what, outcome, time.perf_counter() - start))
        return response if outcome == str(expect) else None

    def slow(self, seconds: float) -> list[tuple[str, str, float]]:
        return [r for r in self.done if r[2] > seconds]

    def failed(self) -> list[tuple[str, str, float]]:
        return [r for r in self.done if r[1] not in {"200", "302"}]


def rater_rounds(base: str, username: str, log: Requests, running: threading.Event) -> None:
    """Log in, claim, open the item, save an answer, log out; again until `running` clears."""
    while True:
        with httpx.Client(base_url=base, timeout=60) as client:
            _rater_round(client, username, log)
        if not running.is_set():
            return


def _rater_round(client: httpx.Client, username: str, log: Requests) -> None:
    if not log.timed("login page", lambda: client.get("/accounts/login/"), 200):
        return
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
    login = {"username": username, "password": PASSWORD}
    if not log.timed("login", lambda: client.post("/accounts/login/", data=login), 302):
        return
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]  # a login rotates it
    claim = log.timed("claim", lambda: client.post(f"/p/{SLUG}/review/next/"), 302)
    item = claim and re.search(r"/items/(\d+)/review/", claim.headers.get("location", ""))
    if item:
        page_url = f"/p/{SLUG}/items/{item.group(1)}/review/"
        page = log.timed("review page", lambda: client.get(page_url), 200)
        found = page and re.search(
            r'/questions/(\d+)/answer/.*?name="expected_seq"[^>]*value="(\d+)"', page.text, re.S
        )
        if found:
            url = f"/p/{SLUG}/items/{item.group(1)}/questions/{found.group(1)}/answer/"
            data = {"choice": "value", "value": f"saved by {username} at {time.time()}",
                    "expected_seq": found.group(2)}  # fmt: skip
            headers = {"HX-Request": "true"}
            if log.timed("save", lambda: client.post(url, data=data, headers=headers), 200):
                with log.lock:
                    log.saved += 1
    log.timed("logout", lambda: client.post("/accounts/logout/"), 302)


def _manage(env: dict, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"manage.py {args[0]} failed: {done.stderr[-3000:]}")
    return done.stdout


def _import(env: dict, via: str, bundle: Path, work: Path) -> subprocess.Popen:
    if via == "command":
        argv = ["manage.py", "import_items", "--project", SLUG, str(bundle)]
    else:
        _manage(env, "shell", "-c", START_JOB.format(path=str(bundle), slug=SLUG))
        argv = ["manage.py", "db_worker", "--no-reload", "--no-startup-delay", "--interval", "0.1"]
    with (work / f"{via}.log").open("ab") as out:
        return subprocess.Popen(
            [sys.executable, *argv], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip


def _import_done(db: Path, via: str, process: subprocess.Popen) -> bool:
    if via == "command":
        return process.poll() is not None
    with sqlite3.connect(db) as connection:
        status = connection.execute("select status from reviews_importjob").fetchone()
    return status is not None and status[0] in {"succeeded", "failed"}


def run(cases: int, clients: int, via: str, work: Path, *, settings: str | None = None) -> dict:
    """Build the site, run the import with `clients` raters at work; the figures as a dict.
    `settings`: another settings module (the tests' one hashes passwords cheaply)."""
    db = work / "long.sqlite3"
    (work / "static").mkdir(parents=True, exist_ok=True)
    env = _environment(f"sqlite:///{db}", work)
    if settings:
        env["DJANGO_SETTINGS_MODULE"] = settings
    _manage(env, "migrate", "-v", "0")
    _manage(env, "collectstatic", "--no-input", "-v", "0")
    _manage(env, "shell", "-c", SETUP.format(password=PASSWORD, slug=SLUG, raters=clients))
    ready = write_review_bundle(work / "ready.zip", READY, prefix="ready")
    _manage(env, "import_items", "--project", SLUG, str(ready))
    bundle = write_review_bundle(work / "bundle.zip", cases)
    port = free_port()
    argv = [
        str(GUNICORN), "evalsite.wsgi", "--bind", f"{HOST}:{port}",
        "--workers", "2", "--threads", "4", "--timeout", "120", "--log-level", "warning",
    ]  # fmt: skip
    log, running = Requests(), threading.Event()
    with Server(argv, env=env, log=work / "gunicorn.log", cwd=ROOT) as server:
        base = f"http://{HOST}:{port}"
        server.wait_until_up(f"{base}/accounts/login/", seconds=120)
        start = time.perf_counter()
        importer = _import(env, via, bundle, work)
        running.set()
        threads = [
            threading.Thread(target=rater_rounds, args=(base, f"rater-{n}", log, running))
            for n in range(clients)
        ]
        for thread in threads:
            thread.start()
        try:
            while not _import_done(db, via, importer):
                time.sleep(0.2)
            seconds = time.perf_counter() - start
        finally:
            running.clear()
            for thread in threads:
                thread.join()
            _stop(importer)
    return _figures(db, cases, seconds, log)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        process.wait(30)


def _figures(db: Path, cases: int, seconds: float, log: Requests) -> dict:
    with sqlite3.connect(db) as connection:
        items = connection.execute(
            "select count(*) from reviews_item i join reviews_project p on p.id = i.project_id "
            "where p.slug = ?",
            [SLUG],
        ).fetchone()[0]
        answers = connection.execute("select count(*) from reviews_answer").fetchone()[0]
    latencies = sorted(r[2] for r in log.done)
    return {
        "cases": cases,
        "import_seconds": round(seconds, 1),
        "requests": len(log.done),
        "logins": sum(1 for r in log.done if r[0] == "login"),
        "saves": log.saved,
        "slowest_seconds": round(latencies[-1], 2) if latencies else None,
        "median_seconds": round(latencies[len(latencies) // 2], 3) if latencies else None,
        "over_5_s": len(log.slow(5)),
        "failed": len(log.failed()),
        "failures": sorted({f"{what} {outcome}" for what, outcome, _ in log.failed()}),
        "slowest": sorted((round(s, 1), what) for what, _, s in log.done)[-10:],
        "items": items,
        "items_expected": cases + READY,
        "answers": answers,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=30_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--via", choices=("worker", "command"), default="worker")
    parser.add_argument(
        "--settings", help="another settings module, e.g. tests.fast_hash_settings (MD5 hashing)"
    )
    args = parser.parse_args([] if argv is None else argv)
    with tempfile.TemporaryDirectory(prefix="evalsite-long-import-") as folder:
        figures = run(args.cases, args.clients, args.via, Path(folder), settings=args.settings)
    for key, value in figures.items():
        print(f"{key}: {value}")
    lost = figures["items"] != figures["items_expected"] or figures["answers"] < figures["saves"]
    return 1 if figures["over_5_s"] or figures["failed"] or lost else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
