"""CPU of one rater's answer cycle, in-process: ``.venv/bin/python -m bench.answer_cycle``.

``[--cycles 160] [--database sqlite|postgresql] [--profile KIND]``

Builds ``bench.load``'s world (2,000 items, one question and two candidates each, overlap 1,
16 raters) in a fresh SQLite file (``bench/_django.py``) or PostgreSQL's
``evalsite_bench_answer_cycle`` (``BENCH_PG_PREFIX`` changes the prefix; dropped and created),
with production's settings where they cost CPU (``DEBUG=false``: the cached template loader;
the manifest static storage, after ``collectstatic``; CSRF checked), then runs ``--cycles``
answer cycles through Django's test ``Client`` as ``bench.load``'s raters do, the raters taking
turns: the review page (GET), the htmx autosave of one answer, submit & next (the 302 to the
next claim). Per request kind it prints the median and mean CPU of the process
(``time.process_time``: the database server's CPU is not in it, SQLite's is) and the statements
run. This is the figure that does not move with the machine's load, as wall time over HTTP does.
``--instructions`` gives the project the demo's Markdown guidelines; ``--sql`` prints the statements of the last cycle; ``--profile KIND`` ("review page", "save", "submit") adds a cProfile (CPU time) of that kind's requests.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import logging
import os
import pstats
import secrets
import statistics
import time
from collections import defaultdict

from bench._django import setup_django
from bench._evalsite_http import PG_BASE, PG_PREFIX
from bench._evalsite_setup import fresh_postgres

KINDS = ("review page", "save", "submit")


class Counted:
    """Counts the statements run through the connection (execute_wrapper: no query log)."""

    def __init__(self):
        self.n, self.sql = 0, []

    def __call__(self, execute, sql, params, many, context):
        self.n += 1
        prepared = type(context["cursor"].cursor).__name__ == "PreparedCursor"
        self.sql.append(("[P] " if prepared else "    ") + sql)
        return execute(sql, params, many, context)


class Rater:
    """One rater's client (CSRF enforced, as in production) and the item it holds."""

    def __init__(self, slug: str, user, items: dict):
        from django.test import Client

        self.slug, self.items = slug, items
        self.client = Client(enforce_csrf_checks=True)
        self.client.force_login(user)
        secret = secrets.token_hex(16)  # 32 characters: a CSRF secret, sent back as the header
        self.client.cookies["csrftoken"] = secret
        self.headers = {"HTTP_X_CSRFTOKEN": secret}
        self.item = self._item(self.client.post(f"/p/{slug}/review/next/", **self.headers))
        self.last_sql: dict[str, list[str]] = {}

    @staticmethod
    def _item(response) -> int:
        assert response.status_code == 302, response.status_code
        return int(response["Location"].split("/items/")[1].split("/")[0])

    def requests(self):
        """The cycle's three requests, each a (kind, callable) run in turn."""
        base = f"/p/{self.slug}/items/{self.item}"
        question, claim = self.items[self.item]
        yield "review page", lambda: self.client.get(f"{base}/review/")
        yield (
            "save",
            lambda: self.client.post(
                f"{base}/questions/{question}/answer/",
                {"choice": f"claim:{claim}", "expected_seq": "0"},
                HTTP_HX_REQUEST="true",
                **self.headers,
            ),
        )
        yield "submit", lambda: self.client.post(f"{base}/submit/", **self.headers)

    def cycle(self, cpu: dict, statements: dict, counted: Counted, profiles: dict) -> None:
        for kind, request in self.requests():
            profile = profiles.get(kind)
            counted.n, counted.sql = 0, []
            start = time.process_time()
            if profile:
                profile.enable()
            response = request()
            if profile:
                profile.disable()
            cpu[kind].append((time.process_time() - start) * 1000)
            statements[kind].append(counted.n)
            self.last_sql[kind] = counted.sql
            if kind == "submit":
                self.item = self._item(response)
            else:
                assert response.status_code == 200, (kind, response.status_code)


class _ServerCpu:
    """The CPU time of the PostgreSQL process serving `connection` (on this machine), from
    /proc: what the database spends on the cycles, which this process's CPU leaves out."""

    def __init__(self, connection):
        self.path, self.start = None, None
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                self.path = f"/proc/{cursor.fetchone()[0]}/stat"
            self.start = self._ticks()

    def _ticks(self) -> int | None:
        try:
            with open(self.path) as stat:  # utime and stime: fields 14 and 15
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # another machine's server
            return None
        return int(fields[11]) + int(fields[12])

    def spent_ms(self) -> float | None:
        end = self._ticks() if self.start is not None else None
        if end is None:
            return None
        return (end - self.start) * 1000 / os.sysconf("SC_CLK_TCK")


def _settings():
    from django.test.utils import override_settings

    # The test client's host; plain HTTP. Everything else stays production's (DEBUG=false).
    return override_settings(ALLOWED_HOSTS=["testserver"], SECURE_SSL_REDIRECT=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=160)
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--raters", type=int, default=16)
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--profile", choices=KINDS, action="append", default=[])
    parser.add_argument(
        "--instructions", action="store_true", help="the demo's guidelines on the project"
    )
    parser.add_argument("--sql", action="store_true", help="print the last cycle's statements")
    parser.add_argument("--top", type=int, default=35, help="rows of each profile")
    args = parser.parse_args([] if argv is None else argv)
    if args.database == "postgresql":
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_PREFIX}_answer_cycle"
        fresh_postgres(os.environ["DATABASE_URL"])
    setup_django()
    logging.getLogger("axes").setLevel(logging.WARNING)  # a line per force_login otherwise
    from django.contrib.auth.hashers import make_password
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import override_settings

    from bench.load import _build
    from evalsite.planner_statistics import planner_statistics_refresh

    call_command("collectstatic", verbosity=0, interactive=False)  # the manifest pages link to
    with override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]):
        make_password("warm")
        slug, names, items = _build(args.items, args.raters)
    if args.instructions:  # a real project's review page renders its Markdown guidelines
        from reviews.demo.load import DEMO_INSTRUCTIONS
        from reviews.models import Project

        Project.objects.filter(slug=slug).update(instructions=DEMO_INSTRUCTIONS)
    planner_statistics_refresh(after="building the bench project")
    from django.contrib.auth import get_user_model

    users = get_user_model().objects.in_bulk(names, field_name="username")
    cpu: dict[str, list[float]] = defaultdict(list)
    statements: dict[str, list[int]] = defaultdict(list)
    profiles = {kind: cProfile.Profile(time.process_time) for kind in args.profile}
    counted = Counted()
    with _settings(), connection.execute_wrapper(counted):
        raters = [Rater(slug, users[name], items) for name in names]
        warm = defaultdict(list)  # first cycles: templates compiled, caches filled
        for rater in raters:
            rater.cycle(warm, defaultdict(list), counted, {})
        server = _ServerCpu(connection)
        start = time.perf_counter()
        for n in range(args.cycles):
            raters[n % len(raters)].cycle(cpu, statements, counted, profiles)
        wall = time.perf_counter() - start
        server_ms = server.spent_ms()
    total = sum(statistics.median(cpu[kind]) for kind in KINDS)
    print(
        f"database: {connection.vendor}; {args.cycles} cycles by {args.raters} raters over "
        f"{args.items:,} items; CPU of this process per request (ms), statements per request"
    )
    print(f"{'request':<12} {'median':>8} {'mean':>8} {'p95':>8} {'statements':>11}")
    for kind in KINDS:
        values = sorted(cpu[kind])
        p95 = values[int(0.95 * (len(values) - 1))]
        counts = sorted(set(statements[kind]))
        shown = "/".join(str(c) for c in counts)
        print(
            f"{kind:<12} {statistics.median(values):>8.2f} {statistics.mean(values):>8.2f} "
            f"{p95:>8.2f} {shown:>11}"
        )
        print(
            f"RESULT answer_cycle_{kind.replace(' ', '_')}_cpu_ms={statistics.median(values):.2f}"
        )
    print(f"{'cycle':<12} {total:>8.2f}   (wall {wall / args.cycles * 1000:.1f} ms per cycle)")
    print(f"RESULT answer_cycle_cpu_ms={total:.2f}")
    if server_ms is not None:
        per_cycle = server_ms / args.cycles
        print(f"{'server':<12} {per_cycle:>8.2f}   (PostgreSQL's CPU per cycle, its /proc entry)")
        print(f"RESULT answer_cycle_server_cpu_ms={per_cycle:.2f}")
    if args.sql:
        for kind, sql in raters[(args.cycles - 1) % len(raters)].last_sql.items():
            print(f"\n--- statements: {kind} ---")
            print("\n".join(f"{n:>3}. {statement[:160]}" for n, statement in enumerate(sql, 1)))
    for kind, profile in profiles.items():
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats(args.top)
        print(f"\n--- cProfile: {kind}, {args.cycles} requests ---\n{out.getvalue()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(__import__("sys").argv[1:]))
