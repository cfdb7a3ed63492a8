"""Long operations as background jobs: ``.venv/bin/python -m bench.jobs [--sizes 10000]
[--database sqlite|postgresql]``.

Per size, a fresh project of N items, each judged `pass`/`fail` by one judge on the criterion
`faithful`, its split drawn (half held out). Then, as a project admin through Django's test
``Client`` (middleware, session, forms; no network), and with the database task backend:

  * *Send to humans* of every held-out item: the POST (it answers with the job's page) and the
    job run by the worker's task (``reviews.tasks.run_job``, as ``db_worker`` runs it);
  * the item list's *Send to humans* of every item (more than INLINE_MAX: a job; the held-out
    half already asked): the POST and the job.

Prints ms per POST and seconds per job with what the job said. SQLite in a temporary folder or
PostgreSQL's ``evalsite_bench_jobs`` (dropped and created); no manual step.
"""

from __future__ import annotations

import argparse
import os
import time

from bench._django import setup_django
from bench._evalsite_http import PG_BASE, PG_PREFIX
from bench._evalsite_setup import fresh_postgres


def _project(n: int):
    from django.contrib.auth import get_user_model

    from judging.models import Criterion, Judge, Verdict
    from judging.services.calibration.splits import split_draw
    from reviews.models import Item, Project, Role
    from reviews.services.projects.members import membership_add

    project = Project.objects.create(slug=f"bench-jobs-{n}", name=f"jobs {n}")
    Item.objects.bulk_create(
        (Item(project=project, external_id=f"i{k:07d}", output="a") for k in range(n)),
        batch_size=5000,
    )
    criterion = Criterion.objects.create(project=project, name="faithful", labels=["pass", "fail"],
                                         sha256="b")  # fmt: skip
    judge = Judge.objects.create(project=project, provider="p", model="m", configuration=f"j{n}")
    ids = Item.objects.filter(project=project).values_list("pk", flat=True)
    Verdict.objects.bulk_create(
        (Verdict(item_id=pk, criterion=criterion, judge=judge, label=("pass", "fail")[pk % 2])
         for pk in ids.iterator()),
        batch_size=5000,
    )  # fmt: skip
    split_draw(actor=None, project=project, seed=1)
    admin = get_user_model().objects.create_user(f"bench-jobs-admin-{n}", password=None)
    membership_add(actor=None, project=project, user=admin, role=Role.ADMIN)
    return project, admin


def _timed(client, url: str, data: dict) -> tuple[float, str, float, str]:
    """(POST ms, the job's status, the job's seconds in the worker's task, what it said)."""
    from reviews.models import Job
    from reviews.tasks import run_job

    start = time.perf_counter()
    response = client.post(url, data)
    post_ms = (time.perf_counter() - start) * 1000
    assert response.status_code == 302 and "/jobs/" in response.url, response
    job = Job.objects.latest("pk")
    start = time.perf_counter()
    run_job.call(job.pk)  # what db_worker runs
    seconds = time.perf_counter() - start
    job.refresh_from_db()
    return post_ms, job.status, seconds, job.result or job.error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    args = parser.parse_args([] if argv is None else argv)
    os.environ["TASKS_BACKEND"] = "database"  # queued, then run here as the worker runs it
    if args.database == "postgresql":
        os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_PREFIX}_jobs"
        fresh_postgres(os.environ["DATABASE_URL"])
    setup_django()
    from django.db import connection
    from django.test import Client
    from django.test.utils import override_settings
    from django.urls import reverse

    with override_settings(ALLOWED_HOSTS=["testserver"], SECURE_SSL_REDIRECT=False):
        print(f"database: {connection.vendor}")
        print("| items | operation | POST ms | job | job s in the worker | what it did |")
        print("| --- | --- | --- | --- | --- | --- |")
        for n in args.sizes:
            project, admin = _project(n)
            client = Client()
            client.force_login(admin)
            runs = {
                "send to humans (held-out)": (
                    reverse("dashboard_send", args=[project.slug]),
                    {"criterion": "faithful", "selection": "held_out"},
                ),
                "item list: send all to humans": (
                    reverse("item_bulk", args=[project.slug]),
                    {"action": "send_to_humans", "all": "on", "criterion": "faithful"},
                ),
            }
            for name, (url, data) in runs.items():
                post_ms, status, seconds, said = _timed(client, url, data)
                print(f"| {n:,} | {name} | {post_ms:.1f} | {status} | {seconds:.2f} | {said} |")
                key = "dashboard" if name.startswith("send") else "item_list"
                print(f"RESULT jobs_{key}_post_ms_{n}={post_ms:.1f}")
                print(f"RESULT jobs_{key}_job_s_{n}={seconds:.2f}")
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
