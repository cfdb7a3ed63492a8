"""Load test: 16 raters at once against gunicorn on PostgreSQL or SQLite, over loopback HTTP.

``.venv/bin/python -m bench.load [--raters 16] [--answers 480] [--items 2000] [--seconds 180]
[--during-import N] [--database postgresql|sqlite]``

Builds a fresh project in the PostgreSQL database ``DATABASE_URL`` names (default
``postgres://postgres@127.0.0.1:5432/evalsite_load``; dropped and created, then migrated), or
with ``--database sqlite`` in a new SQLite file in a temporary folder:
``--items`` items with one field question and two candidates each, overlap 1, and ``--raters``
raters. Starts gunicorn (``--workers``, production settings, loopback only: a free port on
127.0.0.1, HTTPS redirects and secure cookies off) and lets every rater loop, each on its own
connection: claim the next item, open its review page, save an answer, submit and go to the next.
The raters first sign in (a password each); the clock starts when all have, and the run stops
by itself after ``--answers`` submitted answers in total, or after ``--seconds``.
With ``--during-import N`` an admin meanwhile imports N items into another project of the same
site through the API (one request), and the run reports that request's status and duration.

Then it checks the database against what the raters were told: every answer a rater saved is
there (0 lost) and no item is held or submitted by more raters than its overlap (0 over-assigned).
Prints throughput, p50/p95 per request kind and ``RESULT`` lines; exits non-zero on a lost or
over-assigned answer or an unexpected HTTP status.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from bench._evalsite_setup import fresh_postgres
from bench._lean_http import LeanClient
from bench._load_report import Budget, Clock, report
from bench._servers import HOST, Server, free_port

DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/evalsite_load"
PASSWORD = "load-test-password-1"
ROOT = Path(__file__).resolve().parent.parent


def _environment(work: Path, database: str) -> dict[str, str]:
    url = (
        f"sqlite:///{work / 'load.sqlite3'}"
        if database == "sqlite"
        else os.environ.get("DATABASE_URL", DEFAULT_DB)
    )
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evalsite.settings",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "127.0.0.1",
        "DATABASE_URL": url,
        "EVALSITE_VAR_DIR": str(work),
        "TASKS_BACKEND": "immediate",
        # Loopback only: plain HTTP, so no HTTPS redirect, HSTS or secure-only cookies.
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "SECURE_HSTS_SECONDS": "0",
    }


def _build(items: int, raters: int) -> tuple[str, list[str], dict[int, tuple[int, int]]]:
    """A project of `items` items (one question, two candidates each) and `raters` raters."""
    from django.contrib.auth import get_user_model

    from reviews.models import Claim, Item, Project, Question, QuestionKind
    from reviews.services.projects.members import membership_add

    slug = f"load-{int(time.time())}"
    project = Project.objects.create(slug=slug, name="Load test", overlap=1)
    Item.objects.bulk_create(
        (Item(project=project, external_id=f"case-{k:06d}") for k in range(items)),
        batch_size=2000,
    )
    pks = list(Item.objects.filter(project=project).values_list("pk", flat=True))
    Question.objects.bulk_create(
        (Question(item_id=pk, kind=QuestionKind.FIELD, key="$.total") for pk in pks),
        batch_size=2000,
    )
    questions = dict(Question.objects.filter(item__project=project).values_list("item_id", "pk"))
    Claim.objects.bulk_create(
        (
            Claim(item_id=pk, question_id=questions[pk], path="$.total", value=value, position=n)
            for pk in pks
            for n, value in enumerate(("1,200.00", "1,290.00"), start=1)
        ),
        batch_size=4000,
    )
    first_claim = dict(
        Claim.objects.filter(item__project=project, position=1).values_list("item_id", "pk")
    )
    names = []
    users = get_user_model().objects
    admin = users.create_user(f"{slug}-admin", password=None)
    membership_add(actor=None, project=project, user=admin, role="admin")
    for n in range(raters):
        user = users.create_user(f"{slug}-rater-{n:02d}", password=PASSWORD)
        membership_add(actor=None, project=project, user=user, role="rater")
        names.append(user.username)
    return slug, names, {pk: (questions[pk], first_claim[pk]) for pk in pks}


def _import_project(items: int) -> tuple[str, str, bytes]:
    """Another project of the same site, its admin's API token and an `items` import body."""
    from django.contrib.auth import get_user_model

    from bench.imports import item_records
    from reviews.services.projects.members import project_create
    from reviews.services.projects.tokens import token_create

    slug = f"load-import-{int(time.time())}"
    admin = get_user_model().objects.create_user(f"{slug}-admin", password=None)
    project_create(actor=admin, slug=slug)
    _, token = token_create(actor=admin, name="load")
    # One JSONL body to the streamed endpoint: a JSON batch stops at 10 MB (about 30k items).
    body = "".join(json.dumps(record) + "\n" for record in item_records(items)).encode()
    return slug, token, body


class Importer(threading.Thread):
    """One import request through the API while the raters work: its status and seconds."""

    def __init__(self, base: str, slug: str, token: str, body: bytes):
        super().__init__(daemon=True)
        self.base, self.slug, self.token, self.body = base, slug, token, body
        self.outcome = "not finished"

    def run(self) -> None:
        import httpx

        start = time.perf_counter()
        try:
            response = httpx.post(
                f"{self.base}/api/projects/{self.slug}/items.jsonl",
                content=self.body,
                headers={
                    "Authorization": f"Bearer {self.token}",
                    "Content-Type": "application/x-ndjson",
                },
                timeout=900,
            )
            status = f"HTTP {response.status_code}"
        except httpx.HTTPError as error:  # e.g. the server dropped an over-limit body
            status = type(error).__name__
        self.outcome = f"{status} after {time.perf_counter() - start:.1f} s"


class Rater(threading.Thread):
    def __init__(self, base, slug, username, items, budget, clock, ready, stats):
        super().__init__(daemon=True)
        self.base, self.slug, self.username = base, slug, username
        self.items, self.budget, self.clock, self.stats = items, budget, clock, stats
        self.ready = ready  # a barrier: every rater signed in, then the clock starts
        self.saved: list[tuple[int, int]] = []  # (question pk, seq) the server confirmed
        self.errors: list[str] = []

    def _timed(self, kind, method, url, **kwargs):
        start = time.perf_counter()
        response = self.client.request(method, url, **kwargs)
        self.stats[kind].append((time.perf_counter() - start) * 1000)
        return response

    def _item_from(self, response) -> int | None:
        match = re.search(r"/items/(\d+)/review/", response.headers.get("location", ""))
        return int(match.group(1)) if match else None

    def run(self) -> None:
        # Generous: on a loaded 2-core machine a request can wait seconds for a worker.
        self.client = LeanClient(self.base, timeout=120)
        try:
            self._work()
        except Exception as error:  # reported, and the run fails
            self.ready.abort()  # nobody waits for a rater that will not come
            self.errors.append(f"{self.username}: {error!r}")
        finally:
            self.client.close()

    def _work(self) -> None:
        login = self.client.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)
        self.client.post(
            "/accounts/login/",
            data={"username": self.username, "password": PASSWORD, "csrfmiddlewaretoken": token},
        )
        headers = {"X-CSRFToken": self.client.cookies["csrftoken"]}
        self.ready.wait(timeout=600)
        self.client.close()  # idle at the barrier past gunicorn's keep-alive: a new connection
        response = self._timed("next", "POST", f"/p/{self.slug}/review/next/", headers=headers)
        item = self._item_from(response)
        while item is not None and self.budget.take() and time.monotonic() < self.clock.deadline:
            page = self._timed("review page", "GET", f"/p/{self.slug}/items/{item}/review/")
            question, claim = self.items[item]
            save = self._timed(
                "save",
                "POST",
                f"/p/{self.slug}/items/{item}/questions/{question}/answer/",
                data={"choice": f"claim:{claim}", "expected_seq": "0"},
                headers={**headers, "HX-Request": "true"},
            )
            if page.status_code != 200 or save.status_code != 200:
                self.errors.append(f"item {item}: page {page.status_code}, save {save.status_code}")
                return
            self.saved.append((question, 1))
            response = self._timed(
                "submit & next", "POST", f"/p/{self.slug}/items/{item}/submit/", headers=headers
            )
            if response.status_code != 302:
                self.errors.append(f"item {item}: submit {response.status_code}")
                return
            item = self._item_from(response)


def _check(slug: str, raters: list[Rater]) -> tuple[int, int]:
    """(lost answers, over-assigned items) according to the database."""
    from django.db.models import Count, Q

    from reviews.models import Answer, AssignmentStatus, Item

    stored = set(
        Answer.objects.filter(question__item__project__slug=slug).values_list("question_id", "seq")
    )
    lost = sum(1 for r in raters for key in r.saved if key not in stored)
    holding = Q(assignments__status__in=(AssignmentStatus.ACTIVE, AssignmentStatus.SUBMITTED))
    over = (
        Item.objects.filter(project__slug=slug)
        .annotate(holders=Count("assignments", filter=holding))
        .filter(holders__gt=1)
        .count()
    )
    return lost, over


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--raters", type=int, default=16)
    parser.add_argument("--answers", type=int, default=480)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=180)
    parser.add_argument(
        "--during-import",
        type=int,
        default=0,
        metavar="N",
        help="meanwhile import N items into another project through the API (one request)",
    )
    parser.add_argument("--database", choices=("postgresql", "sqlite"), default="postgresql")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="evalsite-load-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)  # static files, media, logs
    env = _environment(work, args.database)
    os.environ.update(env)
    (work / "static").mkdir(parents=True, exist_ok=True)
    try:
        if args.database == "postgresql":
            fresh_postgres(env["DATABASE_URL"])
    except Exception as error:  # psycopg's OperationalError and friends
        print(f"skipped: PostgreSQL at {env['DATABASE_URL']} is not reachable ({error})")
        return 0
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    call_command("collectstatic", verbosity=0, interactive=False)  # the manifest gunicorn serves
    slug, names, items = _build(args.items, args.raters)

    importing = _import_project(args.during_import) if args.during_import else None
    port = free_port()
    base = f"http://{HOST}:{port}"
    argv = [
        str(ROOT / ".venv/bin/gunicorn"), "evalsite.wsgi", "--bind", f"{HOST}:{port}",
        "--workers", str(args.workers), "--timeout", "900", "--log-level", "warning",
    ]  # fmt: skip
    with Server(argv, env=env, log=work / "gunicorn.log", cwd=ROOT) as server:
        server.wait_until_up(f"{base}/accounts/login/", seconds=120)
        stats: dict[str, list[float]] = defaultdict(list)
        budget, clock = Budget(args.answers), Clock(args.seconds)
        ready = threading.Barrier(len(names), action=clock.start)
        raters = [Rater(base, slug, n, items, budget, clock, ready, stats) for n in names]
        importer = Importer(base, *importing) if importing else None
        for thread in [*([importer] if importer else []), *raters]:
            thread.start()
        for rater in raters:
            rater.join(args.seconds + 600)
        elapsed = clock.elapsed_s
        if importer:
            importer.join(max(1.0, args.seconds + 600 - elapsed))
    answers = sum(len(r.saved) for r in raters)
    lost, over = _check(slug, raters)
    errors = [e for r in raters for e in r.errors]
    print(
        f"{args.raters} raters, gunicorn {args.workers} workers, {args.database}, "
        f"{args.items:,} items, "
        f"overlap 1: {answers} answers in {elapsed:.1f} s"
        + (f"; during an import of {args.during_import:,} items" if importer else "")
        + f" (after {clock.signed_in_s:.1f} s of signing in, not counted)"
    )
    if importer:
        print(f"the {args.during_import:,}-item import (API, one request): {importer.outcome}")
    if answers < args.answers and elapsed < args.seconds - 1:
        # Not a run of --seconds: the figures cover a shorter one, and say so.
        print(f"NOTE: the raters ran out of items after {elapsed:.1f} s of {args.seconds:g}: "
              f"--items {args.items:,} is too few for this machine")  # fmt: skip
    report("load", stats, answers, elapsed, {"lost": lost, "over_assigned": over, "errors": errors})
    return 1 if lost or over or errors else 0


if __name__ == "__main__":
    # SIGTERM unwinds like Ctrl-C, so the gunicorn started above is stopped on the way out.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    raise SystemExit(main())
