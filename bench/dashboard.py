"""Calibration dashboard benchmark: ``.venv/bin/python -m bench.dashboard``.

Builds one project in a fresh, migrated SQLite database (``bench/_django.py``) with bulk inserts
(bulk_create for items, plain executemany for verdicts and labels; the import path is benchmarked
by ``bench.imports``): 20k items (slices ``safety``, critical,
on 20%, and ``long`` on 30%), criterion ``faithful`` (critical, pass/fail), judges
``openai/gpt-4o`` x3 samples (with confidences) and ``anthropic/claude`` x2 samples = 100k
verdicts, 20k imported human labels (ana on 11k items, ben on 9k, 2k of them shared), and a
drawn split (half held out). Then measures:
  (a) ``dashboard_refresh`` (the background recompute that writes a snapshot): wall time;
  (b) the dashboard page's server time from the precomputed snapshot: Django test ``Client``
      GET through every middleware (session, auth, CSRF...), median of 20 -- target <= 500 ms;
  (c) its SQL query count;
plus the parts of a page view (staleness check ``inputs_fingerprint``, snapshot load, render).
``--profile`` prints the top of a cProfile of one page view.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

ITEMS = 20_000
GPT_SAMPLES, CLAUDE_SAMPLES = 3, 2
PAGE_TARGET_MS = 500


def _ms(fn) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _vm(field: str) -> float:
    """This process's /proc status `field` (VmRSS, VmHWM), MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _rss_peak_reset() -> float:
    """Resets this process's peak resident memory (VmHWM) to its current RSS, returned (MB): the
    peak read after the recomputes is theirs, not the build's (as a worker's recompute task)."""
    Path("/proc/self/clear_refs").write_text("5")
    return _vm("VmRSS")


def _insert(model, columns: list[str], rows: list[tuple]) -> None:
    """Plain executemany: bulk_create builds a model instance per row, which is most of the
    set-up time at 100k verdicts (and this is data generation, not what is measured)."""
    from django.db import connection

    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(connection.ops.quote_name(c) for c in columns)
    marks = ", ".join(["%s"] * len(columns))
    with connection.cursor() as cursor:
        for start in range(0, len(rows), 10_000):
            cursor.executemany(
                f"INSERT INTO {table} ({names}) VALUES ({marks})", rows[start : start + 10_000]
            )


def build(n_items: int, seed: int):
    """The project, its admin, and counts of what was written."""
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from django.utils import timezone

    from judging.models import Criterion, HumanLabel, Judge, Verdict
    from judging.services.calibration.splits import split_draw
    from judging.services.imports.criteria import criterion_fingerprint
    from reviews.models import Item, Membership, Project, Role, Slice

    rng = random.Random(seed)
    now = timezone.now()
    admin = get_user_model().objects.create_user("bench-admin", password="bench-only-password")
    project = Project.objects.create(slug="dashboard-bench", name="Dashboard bench")
    Membership.objects.create(project=project, user=admin, role=Role.ADMIN)
    labels = ["pass", "fail"]
    text = "Every claim in the output is supported by the input."
    criterion = Criterion.objects.create(
        project=project,
        name="faithful",
        version="1",
        labels=labels,
        positive_label="pass",
        critical=True,
        text=text,
        sha256=criterion_fingerprint("faithful", "1", labels, text),
    )
    judges = {}
    for provider, model, temperature in (("openai", "gpt-4o", 0.7), ("anthropic", "claude", 0.5)):
        judges[model] = Judge.objects.create(
            project=project,
            provider=provider,
            model=model,
            temperature=temperature,
            configuration=Judge.configuration_key(provider, model, temperature, ""),
        ).pk
    safety = Slice.objects.create(project=project, name="safety", critical=True)
    long = Slice.objects.create(project=project, name="long")
    items = Item.objects.bulk_create(
        (
            Item(project=project, external_id=f"bench-{n:06d}", output=f"Output {n}.")
            for n in range(n_items)
        ),
        batch_size=2000,
    )
    links, verdicts, humans = [], [], []
    flip = {"pass": "fail", "fail": "pass"}
    for n, item in enumerate(items):
        in_safety, in_long = rng.random() < 0.2, rng.random() < 0.3
        if in_safety:
            links.append((item.pk, safety.pk))
        if in_long:
            links.append((item.pk, long.pk))
        truth = "pass" if rng.random() < 0.7 else "fail"
        gpt_accuracy = 0.7 if in_safety else 0.93
        for sample in range(GPT_SAMPLES):
            right = rng.random() < gpt_accuracy
            confidence = round(rng.uniform(0.75, 0.99) if right else rng.uniform(0.5, 0.9), 2)
            verdicts.append(
                (
                    item.pk,
                    criterion.pk,
                    judges["gpt-4o"],
                    sample,
                    truth if right else flip[truth],
                    "",
                    "Checked each claim.",
                    confidence,
                    "",
                    "{}",
                    "bench",
                    now,
                )
            )
        for sample in range(CLAUDE_SAMPLES):
            label = truth if rng.random() < 0.88 else flip[truth]
            verdicts.append(
                (
                    item.pk,
                    criterion.pk,
                    judges["claude"],
                    sample,
                    label,
                    "",
                    "",
                    None,
                    "",
                    "{}",
                    "bench",
                    now,
                )
            )
        # 20k human labels: ana on items 0..55%, ben on 45..90%: 10% labelled twice.
        for rater, low, high in (("ana", 0.0, 0.55), ("ben", 0.45, 0.9)):
            if low * n_items <= n < high * n_items:
                label = truth if rng.random() < 0.95 else flip[truth]
                humans.append((item.pk, criterion.pk, rater, label, "", "{}", "bench", now))
    with transaction.atomic():
        _insert(Slice.items.through, ["item_id", "slice_id"], links)
        _insert(
            Verdict,
            [
                "item_id",
                "criterion_id",
                "judge_id",
                "sample",
                "label",
                "raw",
                "explanation",
                "confidence",
                "display_order",
                "extra",
                "source_name",
                "created_at",
            ],
            verdicts,
        )
        _insert(
            HumanLabel,
            [
                "item_id",
                "criterion_id",
                "rater",
                "label",
                "note",
                "extra",
                "source_name",
                "created_at",
            ],
            humans,
        )
    split_draw(actor=admin, project=project, seed=seed, held_out_fraction=0.5)
    return (
        project,
        admin,
        {
            "items": n_items,
            "verdicts": len(verdicts),
            "human labels": len(humans),
            "slice links": len(links),
        },
    )


def _profile(fn, top: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    fn()
    profiler.disable()
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).strip_dirs().sort_stats(order).print_stats(top)
        print(out.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=ITEMS, help="items (x5 verdicts, x1 label)")
    parser.add_argument("--views", type=int, default=20, help="timed page views (median)")
    parser.add_argument("--refreshes", type=int, default=3, help="timed recomputes (median)")
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--profile", action="store_true", help="cProfile one page view")
    parser.add_argument("--top", type=int, default=30, help="rows of profile to print")
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    # `python -m bench dashboard` calls main() with no arguments: never read the runner's argv.
    args = parser.parse_args([] if argv is None else argv)

    from bench._django import setup_django

    if args.database == "postgresql":  # a fresh database of its own, as SQLite's temp file
        from bench._evalsite_http import PG_BASE, PG_PREFIX
        from bench._evalsite_setup import fresh_postgres

        os.environ["DATABASE_URL"] = f"{PG_BASE}/{PG_PREFIX}_dashboard"
        fresh_postgres(os.environ["DATABASE_URL"])
    setup_django()
    from django.test.utils import override_settings

    # The test client talks to "testserver" over plain HTTP (other benchmarks may already have
    # loaded the settings in this process, so override them rather than the environment).
    with override_settings(ALLOWED_HOSTS=["testserver"], SECURE_SSL_REDIRECT=False):
        return _run(args)


def _run(args) -> int:
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from evalsite.planner_statistics import planner_statistics_refresh
    from judging.models import DashboardSnapshot
    from judging.services.dashboard import dashboard_refresh, inputs_fingerprint, latest_snapshot

    print(f"database {connection.settings_dict['NAME']} ({connection.vendor})")
    # Pages link hashed static files, as in production (DEBUG off: the manifest storage).
    call_command("collectstatic", interactive=False, verbosity=0)
    start = time.perf_counter()
    project, admin, counts = build(args.items, args.seed)
    print(
        f"built in {time.perf_counter() - start:.1f} s: "
        + ", ".join(f"{v:,} {k}" for k, v in counts.items())
    )

    planner_statistics_refresh(after="building the dashboard bench")  # what an import does
    baseline = _rss_peak_reset()
    refreshes = [
        _ms(lambda: dashboard_refresh(project=project)) / 1000 for _ in range(args.refreshes)
    ]
    peak = _vm("VmHWM")
    snapshot = latest_snapshot(project)
    assert snapshot.fingerprint == inputs_fingerprint(project), "snapshot is stale after refresh"
    payload_kb = (
        len(
            DashboardSnapshot.objects.filter(pk=snapshot.pk)
            .values_list("payload", flat=True)
            .get()
            .__repr__()
        )
        / 1024
    )

    client = Client()
    client.force_login(admin)
    url = reverse("project_dashboard", args=[project.slug])

    def view():
        response = client.get(url)
        assert response.status_code == 200, response.status_code
        return response

    # Held-out figures show once the reader asks (a POST that records the look, for the session).
    shown = client.post(
        reverse("held_out_show", args=[project.slug]), {"what": "dashboard", "next": url}
    )
    assert shown.status_code == 302, shown.status_code
    before = DashboardSnapshot.objects.count()
    body = view().content.decode()  # warm-up (template loading, URL resolver)
    assert "Labels changed since" not in body and "openai/gpt-4o" in body
    if args.profile:
        _profile(view, args.top)
        return 0
    pages = [_ms(view) for _ in range(args.views)]
    fingerprints = [_ms(lambda: inputs_fingerprint(project)) for _ in range(args.views)]
    loads = [_ms(lambda: latest_snapshot(project).payload) for _ in range(args.views)]
    with CaptureQueriesContext(connection) as queries:
        view()
    assert DashboardSnapshot.objects.count() == before, "a page view recomputed the figures"

    page, compute = statistics.median(pages), statistics.median(refreshes)
    fingerprint = statistics.median(fingerprints)
    print(f"payload {payload_kb:,.0f} KB; {len(pages)} page views, {len(refreshes)} recomputes")
    print(f"{'measurement':<58} {'median':>10}")
    rows = [
        ("(a) dashboard_refresh: background recompute, s", f"{compute:.2f}"),
        ("(b) dashboard page from the snapshot, server ms", f"{page:.1f}"),
        ("(c) SQL queries per dashboard page", f"{len(queries)}"),
        ("    part: staleness check inputs_fingerprint, ms", f"{fingerprint:.1f}"),
        ("    part: latest_snapshot + payload decode, ms", f"{statistics.median(loads):.1f}"),
        ("    best page view, ms", f"{min(pages):.1f}"),
        ("process peak RSS during the recomputes, MB", f"{peak:.0f}"),
        ("    of which before them (the built world), MB", f"{baseline:.0f}"),
    ]
    for label, value in rows:
        print(f"{label:<58} {value:>10}")
    print(f"page target <= {PAGE_TARGET_MS} ms: {'met' if page <= PAGE_TARGET_MS else 'MISSED'}")
    print(f"RESULT dashboard_page_ms={page:.1f}")
    print(f"RESULT dashboard_compute_s={compute:.2f}")
    print(f"RESULT dashboard_page_queries={len(queries)}")
    print(f"RESULT dashboard_fingerprint_ms={fingerprint:.1f}")
    print(f"RESULT dashboard_compute_peak_rss_mb={peak:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
