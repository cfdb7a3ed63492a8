"""Review workflow benchmark: ``.venv/bin/python -m bench.review_page``.

Builds two projects in a fresh, migrated SQLite database (``bench/_django.py``; with
``--database postgresql``, PostgreSQL's ``evalsite_bench_review_page``, dropped and created), of 1,000 and 100,000 items (``bulk_create``; a project in
progress: 40 % of the items resolved, and one open item in ten held by another rater), then
what an import does when it ends (``evalsite.planner_statistics``: on PostgreSQL the tables it
changed are analyzed). Only the item being reviewed has questions, candidates with citations and a one-page PDF.
Per size, the median of ``--repeats`` (30) server-side runs through Django's test ``Client``
(middleware, session, access checks, template, no network):
  * review page: GET of the rater's review page; and its SQL query count;
  * next item: POST ``review/next/`` by a rater with nothing in progress (claims an item, 302),
    and ``assignment_claim_next`` called directly;
  * save an answer: POST of one answer (htmx autosave; a new Answer row each time), and
    ``answer_record`` called directly;
  * my queue: GET of the rater's queue page (counts the pool);
  * item list: GET of the project admin's item list, first page (capped count, keyset page).
Targets (DESIGN §6): review page queries <= 12 and equal at both sizes, next item <= 15 ms,
save <= 6 ms at 100k. The query counts of the review page, next, save and my queue are pinned
(PINNED_QUERIES) at every size measured: the run exits 1 if one differs. ``--sizes 1000
100000 1000000`` adds the opt-in 1M run (its build alone takes many minutes). ``--profile`` adds a cProfile of assignment_claim_next at the largest size and the
query plan of its candidate query.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

from bench._django import setup_django
from bench._evalsite_http import PG_BASE, PG_PREFIX
from bench._evalsite_setup import fresh_postgres
from bench._review_world import Sized

SIZES = (1_000, 100_000)


def _median_ms(fn, repeats: int, counted: dict | None = None, key: str = "") -> float:
    """The median of `repeats` runs of fn(i); with `counted`, the SQL queries of the last run
    go to counted[key]."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    times = []
    for i in range(repeats):
        capture = CaptureQueriesContext(connection)
        last = counted is not None and i == repeats - 1
        if last:
            capture.__enter__()
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1000)
        if last:
            capture.__exit__(None, None, None)
            counted[key] = len(capture)
    return statistics.median(times)


# Queries per request, the same at every size (1k, 100k, and 1M with --sizes 1000000): the
# run exits 1 if one differs. Review page: the rater's page; next: POST review/next/ (a claim);
# save: the htmx autosave of one answer; my queue: the rater's queue page; list: the admin's
# item list (first page).
# PostgreSQL takes one more for next and save (the claim's and the answer's row locks). Each
# client has made a request before, so its user is read with its session (evalsite/sessions.py).
PINNED_QUERIES = {
    "queries": 10,
    "next_queries": 9,
    "save_queries": 10,
    "queue_queries": 4,
    "list_queries": 6,
}
PINNED_POSTGRESQL = {**PINNED_QUERIES, "next_queries": 10, "save_queries": 11}


def measure(sized: Sized, *, repeats: int) -> dict[str, float]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from reviews.models import Decision
    from reviews.services.assignment.queue import active_assignment, assignment_claim_next
    from reviews.services.rating.answers import AnswerInput, answer_record

    slug, item = sized.project.slug, sized.item
    client = Client()
    client.force_login(sized.rater)
    page_url = reverse("review_item", args=[slug, item.pk])
    for _ in range(5):  # warm: pairwise display orders, template and URL caches
        assert client.get(page_url).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        assert client.get(page_url).status_code == 200
    results = {"queries": len(queries)}
    results["page_ms"] = _median_ms(lambda i: client.get(page_url), repeats)

    # Save an answer through the htmx endpoint: alternate two candidates, seq 1, 2, 3, ...
    question = sized.questions[0]
    choices = [f"claim:{c.pk}" for c in question.candidates.order_by("position")]
    answer_url = reverse("answer_save", args=[slug, item.pk, question.pk])

    def save_view(i):
        response = client.post(
            answer_url,
            {"choice": choices[i % 2], "expected_seq": str(i)},
            headers={"HX-Request": "true"},
        )
        assert response.status_code == 200, response.content[:300]

    results["save_ms"] = _median_ms(save_view, repeats, results, "save_queries")

    second = sized.questions[1]
    assignment = active_assignment(rater=sized.rater, item=item)
    values = ["1,200.00", "1,290.00"]

    def save_service(i):
        answer_record(
            actor=sized.rater,
            assignment=assignment,
            question=second,
            given=AnswerInput(Decision.SET, values[i % 2]),
            expected_seq=i,
        )

    results["save_service_ms"] = _median_ms(save_service, repeats)

    # Next item: each run is a rater with nothing in progress, as after "Submit & next".
    next_url = reverse("review_next", args=[slug])
    next_clients = []
    for rater in sized.next_raters:
        c = Client()
        c.force_login(rater)
        assert c.get(reverse("my_queue")).status_code == 200  # a rater who has been here
        next_clients.append(c)

    def next_view(i):
        response = next_clients[i].post(next_url)
        assert response.status_code == 302 and "/review/" in response.url, response

    results["next_ms"] = _median_ms(next_view, repeats, results, "next_queries")
    results["claim_service_ms"] = _median_ms(
        lambda i: assignment_claim_next(rater=sized.service_raters[i], project=sized.project),
        repeats,
    )

    # The admin's item list, first page (a capped count and a keyset page of 50).
    admin = Client()
    admin.force_login(sized.admin)
    list_url = reverse("item_list", args=[slug])
    for _ in range(3):
        assert admin.get(list_url).status_code == 200
    results["list_ms"] = _median_ms(lambda i: admin.get(list_url), repeats, results, "list_queries")

    queue_url = reverse("my_queue")
    results["queue_ms"] = _median_ms(
        lambda i: client.get(queue_url), max(5, repeats // 3), results, "queue_queries"
    )
    return results


def profile_claim(sized: Sized) -> str:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from reviews.models import Membership, Role
    from reviews.services.assignment.queue import assignment_claim_next, available_items

    User = get_user_model()
    raters = User.objects.bulk_create(
        User(username=f"b{sized.n}-profile-{k}", password="!") for k in range(20)
    )
    Membership.objects.bulk_create(
        Membership(project=sized.project, user=u, role=Role.RATER) for u in raters
    )
    query = available_items(rater=raters[0], project=sized.project).order_by("id")[:1]
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        explain = "EXPLAIN QUERY PLAN " if connection.vendor == "sqlite" else "EXPLAIN ANALYZE "
        cursor.execute(explain + sql, params)
        plan = "\n".join("  " + " | ".join(str(c) for c in row) for row in cursor.fetchall())
    profiler = cProfile.Profile()
    profiler.enable()
    for rater in raters:
        assignment_claim_next(rater=rater, project=sized.project)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(18)
    return f"candidate query plan:\n{plan}\n\ncProfile of 20 claims:\n{out.getvalue()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    # `python -m bench review_page` calls main() with no arguments: never read the runner's argv.
    args = parser.parse_args([] if argv is None else argv)
    if args.database == "postgresql":  # a fresh database of its own, as SQLite's temp file
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_PREFIX}_review_page"
        fresh_postgres(os.environ["DATABASE_URL"])
    setup_django()
    from django.db import connection
    from django.test.utils import override_settings

    from evalsite.planner_statistics import planner_statistics_refresh

    overrides = override_settings(
        ALLOWED_HOSTS=["testserver"],
        SECURE_SSL_REDIRECT=False,
        PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
        STORAGES={
            "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
            "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
        },
    )
    overrides.enable()
    rows = []
    profiled = ""
    for n in args.sizes:
        start = time.perf_counter()
        sized = Sized(n, repeats=args.repeats)
        # The projects are bulk-created, not imported: what an import does when it ends (it
        # analyzes the tables it changed on PostgreSQL; nothing on SQLite), no ANALYZE by hand.
        planner_statistics_refresh(after="building the bench projects")
        built = time.perf_counter() - start
        rows.append((n, built, measure(sized, repeats=args.repeats)))
        if args.profile and n == max(args.sizes):
            profiled = profile_claim(sized)

    print(f"database: {connection.vendor}; median of {args.repeats} runs, server side (ms)")
    header = (
        "items",
        "build s",
        "review page",
        "queries",
        "next item",
        "claim_next",
        "save (view)",
        "answer_record",
        "my queue",
        "item list",
    )
    print("  ".join(f"{h:>13}" for h in header))
    for n, built, r in rows:
        cells = (
            f"{n:,}",
            f"{built:.1f}",
            f"{r['page_ms']:.2f}",
            str(r["queries"]),
            f"{r['next_ms']:.2f}",
            f"{r['claim_service_ms']:.2f}",
            f"{r['save_ms']:.2f}",
            f"{r['save_service_ms']:.2f}",
            f"{r['queue_ms']:.2f}",
            f"{r['list_ms']:.2f}",
        )
        print("  ".join(f"{c:>13}" for c in cells))
    if profiled:
        print()
        print(profiled)
    by_size = {n: r for n, _, r in rows}
    for n, label in ((1_000, "1k"), (100_000, "100k"), (1_000_000, "1m")):
        if n in by_size:
            print(f"RESULT review_page_ms_{label}={by_size[n]['page_ms']:.2f}")
            print(f"RESULT item_list_ms_{label}={by_size[n]['list_ms']:.2f}")
            for key in PINNED_QUERIES:
                print(f"RESULT review_page_{key}_{label}={by_size[n][key]}")
    if 100_000 in by_size:
        big = by_size[100_000]
        print(f"RESULT claim_next_ms_100k={big['next_ms']:.2f}")
        print(f"RESULT claim_next_service_ms_100k={big['claim_service_ms']:.2f}")
        print(f"RESULT answer_save_ms_100k={big['save_ms']:.2f}")
        print(f"RESULT answer_save_service_ms_100k={big['save_service_ms']:.2f}")
        print(f"RESULT my_queue_ms_100k={big['queue_ms']:.2f}")
    overrides.disable()
    return _pinned(by_size)


def _pinned(by_size: dict) -> int:
    """Each size's query counts against PINNED_QUERIES; 1 if any differs."""
    from django.db import connection

    pins = PINNED_POSTGRESQL if connection.vendor == "postgresql" else PINNED_QUERIES
    wrong = [
        f"{n:,} items: {key} {r[key]} (pinned {pinned})"
        for n, r in by_size.items()
        for key, pinned in pins.items()
        if r[key] != pinned
    ]
    counts = ", ".join(f"{key} {pinned}" for key, pinned in pins.items())
    print(f"pinned query counts ({counts}) at {', '.join(f'{n:,}' for n in by_size)} items: "
          + ("NOT MET: " + "; ".join(wrong) if wrong else "met"))  # fmt: skip
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
