"""Long operations as background jobs: ``.venv/bin/python -m bench.jobs [--sizes 10000]
[--database sqlite|postgresql]``.

Per size, a fresh project of N items, each judged `pass`/`fail` by one judge on the criterion
`faithful`, its split drawn (half held out). Then, as a project admin through Django's test
``Client`` (middleware, session, forms; no network), and with the database task backend:

  * *Send to humans* of every held-out item: the POST (it answers with the job's page) and the
    job run by the worker's task (``reviews.tasks.run_job``, as ``db_worker`` runs it);
  * the item list's *Send to humans* of every item (more than INLINE_MAX: a job; the held-out
    half already asked): the POST and the job;
  * the dashboard's *Recompute* (N verdicts, N/2 human questions, no labels yet): the POST and
    the job that writes the snapshot;
  * the row export of every verdict as CSV (more than EXPORT_INLINE_MAX rows: a job that writes
    the file to storage): the GET and the job.

Then, once, the row export of a 1,000-item project's items as CSV, streamed from the request
(at EXPORT_INLINE_MAX, the largest export that still does): the whole download's ms. And the
ground-truth export as review files (each item approved, signed, with a review file): of
``--ground-truth`` items (default 5,000; past GROUND_TRUTH_INLINE_MAX: the POST and the job that
writes the .zip), and of GROUND_TRUTH_INLINE_MAX items from the request (the whole download).

Prints ms per request and seconds per job with what the job said, and the longest wait of
another writer while the job ran (a one-row UPDATE every 50 ms from a second thread, as a
rater's save would be: on SQLite, how long the job held the one write lock from it). SQLite in a temporary folder or
PostgreSQL's ``evalsite_bench_jobs`` (dropped and created); no manual step.
"""

from __future__ import annotations

import argparse
import os
import threading
import time

from bench._django import setup_django
from bench._evalsite_http import PG_BASE, PG_PREFIX
from bench._evalsite_setup import fresh_postgres


def _project(n: int, *, draw: bool = True):
    from django.contrib.auth import get_user_model

    from judging.models import Criterion, Judge, Verdict
    from judging.services.calibration.splits import split_draw
    from reviews.models import Item, Project, Role
    from reviews.services.projects.members import membership_add

    slug = f"bench-jobs-{n}" if draw else f"bench-jobs-inline-{n}"
    project = Project.objects.create(slug=slug, name=f"jobs {n}")
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
    if draw:
        split_draw(actor=None, project=project, seed=1)
    admin = get_user_model().objects.create_user(f"bench-jobs-admin-{slug}", password=None)
    membership_add(actor=None, project=project, user=admin, role=Role.ADMIN)
    return project, admin


class _WriteProbe(threading.Thread):
    """Another writer while a job runs, as a rater's save is: a one-row UPDATE in its own
    transaction every 50 ms; `longest` is the slowest one's ms (on SQLite: how long the job
    kept the one write lock from it)."""

    def __init__(self):
        super().__init__(daemon=True)
        from reviews.models import Project

        self.probe = Project.objects.get_or_create(
            slug="bench-jobs-probe", defaults={"name": "probe"}
        )[0].pk
        self.stopped, self.longest = threading.Event(), 0.0

    def run(self) -> None:
        from django.db import connection, transaction

        from reviews.models import Project

        n = 0
        while not self.stopped.wait(0.05):
            n += 1
            start = time.perf_counter()
            with transaction.atomic():
                Project.objects.filter(pk=self.probe).update(name=f"probe {n}")
            self.longest = max(self.longest, (time.perf_counter() - start) * 1000)
        connection.close()


def _timed(client, url: str, data: dict, method: str = "post") -> tuple[float, str, float, str]:
    """(request ms, the job's status, the job's seconds in the worker's task, what it said
    with the longest wait of another writer meanwhile)."""
    from django.urls import resolve

    from reviews.models import Job
    from reviews.tasks import run_job

    start = time.perf_counter()
    response = getattr(client, method)(url, data)
    post_ms = (time.perf_counter() - start) * 1000
    assert response.status_code == 302 and "/jobs/" in response.url, response
    job = Job.objects.get(pk=resolve(response.url).kwargs["job_id"])
    probe = _WriteProbe()
    probe.start()
    start = time.perf_counter()
    run_job.call(job.pk)  # what db_worker runs
    seconds = time.perf_counter() - start
    probe.stopped.set()
    probe.join()
    job.refresh_from_db()
    said = f"{job.result or job.error} Another writer waited at most {probe.longest:.0f} ms."
    return post_ms, job.status, seconds, said


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--ground-truth", type=int, nargs="*", default=[5_000], metavar="N")
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
                "dashboard": ("send to humans (held-out)", "post", "dashboard_send",
                              {"criterion": "faithful", "selection": "held_out"}),
                "item_list": ("item list: send all to humans", "post", "item_bulk",
                              {"action": "send_to_humans", "all": "on", "criterion": "faithful"}),
                "recompute": ("dashboard recompute", "post", "dashboard_recompute", {}),
                "export": ("row export: verdicts as CSV (GET)", "get", "row_export",
                           {"kind": "verdicts", "format": "csv"}),
            }  # fmt: skip
            for key, (name, method, url_name, data) in runs.items():
                url = reverse(url_name, args=[project.slug])
                post_ms, status, seconds, said = _timed(client, url, data, method)
                print(f"| {n:,} | {name} | {post_ms:.1f} | {status} | {seconds:.2f} | {said} |")
                print(f"RESULT jobs_{key}_post_ms_{n}={post_ms:.1f}")
                print(f"RESULT jobs_{key}_job_s_{n}={seconds:.2f}")
        _inline_export()
        for n in args.ground_truth:
            project, admin = _approved_project(n)
            client = Client()
            client.force_login(admin)
            url = reverse("project_export", args=[project.slug])
            post_ms, status, seconds, said = _timed(client, url, {"format": "review"})
            name = "ground-truth export: review files"
            print(f"| {n:,} | {name} | {post_ms:.1f} | {status} | {seconds:.2f} | {said} |")
            print(f"RESULT jobs_ground_truth_post_ms_{n}={post_ms:.1f}")
            print(f"RESULT jobs_ground_truth_job_s_{n}={seconds:.2f}")
        _inline_ground_truth()
    return 0


def _approved_project(n: int):
    """A project of `n` items, each with a review file and approved (signed) by its admin."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from reviews.models import Item, Project, Role
    from reviews.services.approval.ground_truth import approval_sign
    from reviews.services.projects.members import membership_add

    project = Project.objects.create(slug=f"bench-ground-truth-{n}", name=f"ground truth {n}")
    admin = get_user_model().objects.create_user(f"bench-gt-admin-{n}", password=None)
    membership_add(actor=None, project=project, user=admin, role=Role.ADMIN)
    with transaction.atomic():
        for k in range(n):
            case = f"case-{k:07d}"
            item = Item.objects.create(project=project, external_id=case,
                                       metadata={"review_file": {"case_id": case}})  # fmt: skip
            rows = [{"path": "$.total", "expected_value": str(k)}]
            approval_sign(actor=admin, item=item, rows=rows, reason="")
    return project, admin


def _inline_ground_truth() -> None:
    """The largest ground-truth export that still answers from the request."""
    from django.test import Client
    from django.urls import reverse

    from reviews.services.jobs.exports import GROUND_TRUTH_INLINE_MAX

    project, admin = _approved_project(GROUND_TRUTH_INLINE_MAX)
    client = Client()
    client.force_login(admin)
    start = time.perf_counter()
    response = client.post(reverse("project_export", args=[project.slug]), {"format": "review"})
    ms = (time.perf_counter() - start) * 1000
    assert response.status_code == 200, response
    print(f"ground-truth export of {GROUND_TRUTH_INLINE_MAX:,} review files from the request: "
          f"{ms:.1f} ms, {len(response.content):,} bytes")  # fmt: skip
    print(f"RESULT jobs_ground_truth_inline_ms_{GROUND_TRUTH_INLINE_MAX}={ms:.1f}")


def _inline_export() -> None:
    """The largest export that still streams from the request: EXPORT_INLINE_MAX items."""
    from django.test import Client
    from django.urls import reverse

    from reviews.services.jobs.exports import EXPORT_INLINE_MAX

    project, admin = _project(EXPORT_INLINE_MAX, draw=False)
    client = Client()
    client.force_login(admin)
    url = reverse("row_export", args=[project.slug])
    start = time.perf_counter()
    response = client.get(url, {"kind": "items", "format": "csv"})
    size = len(b"".join(response.streaming_content))
    ms = (time.perf_counter() - start) * 1000
    print(f"row export of {EXPORT_INLINE_MAX:,} items as CSV from the request: {ms:.1f} ms, "
          f"{size:,} bytes")  # fmt: skip
    print(f"RESULT jobs_export_inline_ms_{EXPORT_INLINE_MAX}={ms:.1f}")


if __name__ == "__main__":
    import sys

    raise SystemExit(main(sys.argv[1:]))
