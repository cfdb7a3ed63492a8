"""Every page's query count, at two data sizes, as each role.

The walk starts from the root URLconf (tests/site_walk.py), so a new URL cannot escape it: each
named pattern either gets real values for its parameters here and is visited by the rater, the
adjudicator, the approver, the project admin and a staff member of no project, or is listed in
NOT_PAGES with the reason (GET must then answer 405). The site (tests/site_data.py) is measured,
then grown (more projects for the same users, judge configurations, versions and runs, items,
members, jobs, tokens, approvals, timeline lines) and measured again: no page may run more
queries on the larger site, each of the site's pages keeps its pinned count (PINNED: as the first
role of ORDER that may see it), and no admin page passes ADMIN_BUDGET.
"""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from tests.site_data import APPROVED, JUDGE, VISITORS, Site, StubModel, site_build, site_grow
from tests.site_walk import Route, admin_model_of, routes

pytestmark = pytest.mark.django_db

# Named patterns that are not GET pages, and why: each must answer a GET with 405.
NOT_PAGES = {
    "logout": "POST only (Django's LogoutView)",
    "admin:logout": "POST only (Django's admin)",
    "api_token_revoke": "POST: revokes a token",
    "rater_quality_settings": "POST: saves the rater-quality alert",
    "member_remove": "POST: removes a member",
    "member_unlock": "POST: clears a member's password lockout",
    "webhook_disable": "POST: disables a webhook",
    "item_gold": "POST: marks an item gold",
    "review_submit": "POST: submits the rater's answers",
    "review_skip": "POST: skips an item",
    "question_adjudicate": "POST: records an adjudication",
    "answer_save": "POST: autosaves an answer",
    "approval_batch": "POST: approves a batch",
    "item_bulk": "POST: a bulk action on the item list",
    "import_job_retry": "POST: retries an import job",
    "project_export": "POST: an export writes an event per item",
    "review_next": "POST: claims the next item",
    "question_builder": "POST: the question builder's preview and templates (saves nothing)",
    "judge_save": "POST: saves a judge version",
    "run_start": "POST: queues a judge run",
    "run_stop": "POST: cancels a run",
    "run_continue": "POST: resumes a run",
    "score_upload": "POST: scores an uploaded predictions file",
    "score_claims_send": "POST: sends a run's claim decisions to people",
    "baseline_start": "POST: runs the baselines",
    "dashboard_recompute": "POST: queues a recompute",
    "held_out_show": "POST: logs a look at held-out figures",
    "dashboard_split": "POST: draws a split",
    "dashboard_send": "POST: sends items to people",
    "dashboard_tag": "POST: tags a disagreement",
    "api:items_import": "POST: imports items",
    "api:items_import_jsonl": "POST: a streamed import",
    "api:file_upload_import": "POST: imports an uploaded file",
    "api:score_run_create": "POST: scores predictions",
    "api:run_start": "POST: queues a judge run",
    "api:run_stop": "POST: cancels a run",
    "api:run_continue": "POST: resumes a run",
}
# GET pages that no role gets a 200 from, and why (they are still counted).
NO_PAGE = {
    "home": "a redirect to each user's start page",
    "favicon": "a redirect to the static icon",
    "admin:login": "a signed-in user is sent on to the admin's index",
    "admin:view_on_site": "a redirect to the object's own page",
    "api:api-root": "django-ninja's root: a 404 for everyone (the docs are at api/docs)",
    "oidc_authentication_init": "single sign-on: a 404 unless configured (tests/reviews/test_sso.py)",
    "oidc_authentication_callback": "single sign-on: a 404 unless configured",
    "sso_reauth": "single sign-on: a 404 unless configured",
    "job_download": "a finished row export's file; the site's job is a bulk action, which has "
    "none (tests/reviews/test_row_export_job.py downloads one)",
}
# Admin models with no row to show (their change, history and delete pages answer the admin's
# "no such object" redirect), and why.
NO_ROWS = {
    "django_tasks_database_dbtaskresult": "tests run tasks inline: no task result is stored, "
    "and its admin's pages need the database task backend to render one",
}
# Unnamed patterns are all the admin's: its old object URLs (a redirect to the change page) and
# its catch-all (a 404 or a slash redirect). Nothing links to them by name.
UNNAMED_UNDER = "admin/"
# Pages whose count grows with the data by design, and why.
GROWS_BY_DESIGN = {
    "_delete": "the admin's delete confirmation lists every row the delete would remove",
}

# Per URL name: a query string, and request headers.
QUERY = {
    "evidence_locate": "?q=Total",
    "admin:autocomplete": "?app_label=reviews&model_name=membership&field_name=user&term=r",
    "dashboard_chart": "?judge=openai/gpt-4o",
    "dashboard_estimate": "?judge=openai/gpt-4o&split=all&assume_random_labels=on&alpha=0.05"
    "&half_width=0.1",
    "api:estimate_read": "?criterion=faithful&judge=openai/gpt-4o&assume_random_labels=true",
    # The visited judge's first version against the demo's imported judge, on calibration.
    "judge_compare": f"?criterion=faithful&a={JUDGE}@1&b=openai/gpt-4o&split=calibration",
    "score_case": "?case=inv-1",
    "text_metrics": "?metrics=token_f1&metrics=bleu&split=calibration",
    "pass_at_k": "?criterion=faithful&ks=1,2&group_by=case_id&judge=openai/gpt-4o"
    "&split=calibration",
    "api:compare": f"?criterion=faithful&a={JUDGE}@1&b=openai/gpt-4o&split=calibration",
    "row_export": "?kind=verdicts&format=csv",
    "api:rows_download": "?kind=verdicts",
}
HEADERS = {"run_status": {"HX-Request": "true"}}  # as a page it redirects to its judge's page

# The admin's pages are not pinned one by one, but none may pass this: a list whose rows each
# ask for a related row runs a hundred queries once its first page is full, and that does not
# grow with the data any more (the events list ran 105).
ADMIN_BUDGET = 10

ORDER = ("admin", "approver", "adjudicator", "rater", "staff")
# Queries per page, as the first role of ORDER that gets a 200 (the admin's pages: staff).
PINNED = {
    "login": 1,
    "password_change": 1,
    "password_change_done": 1,
    "healthz": 2,
    "api:openapi-json": 1,
    "api:openapi-view": 1,
    "api:item_detail": 8,
    "api:reference_list": 3,
    "api:reference_detail": 3,
    "api:score_run_detail": 4,
    "api:project_list": 2,
    # A row export: its access, the split (a held-out look is recorded) and one chunked query;
    # the page's counts at most EXPORT_INLINE_MAX + 1 rows first (more: a background job).
    "api:rows_download": 5,
    "row_export": 5,
    "api:judge_list": 4,  # the judges, then all their versions in one query
    "api:judge_save": 4,  # GET: the same path as the list
    "api:judge_detail": 4,
    "api:run_list": 5,  # the runs, then their costs in one query and latencies in one
    "api:run_status": 5,
    "api:agreement": 43,  # the agreement report, as the command reads it (+1: output lengths)
    "api:compare": 25,  # judge_compare's report (+1: the criteria's names for the form)
    "api:estimate_read": 9,  # the estimate page's reads, and its recorded look
    "project_list": 3,
    "project_new": 1,
    "my_queue": 3,
    "api_tokens": 2,
    "project_home": 11,  # + the recent export jobs (with who started each)
    "rater_quality": 8,
    "project_instructions": 2,
    "project_settings": 2,
    "members": 4,
    "webhooks": 3,
    "webhook_detail": 5,  # + its deliveries, then their attempts in one query
    "project_audit": 3,
    "item_list": 6,  # + the page with its total, one for the slices, raters and batches, the criteria, recent jobs
    "item_detail": 15,  # the agreed (generated) rows: the reference and the asked paths
    "item_approve": 21,  # as the approver
    "item_timeline": 6,
    "review_item": 10,  # as the rater
    "adjudication_queue": 4,  # as the adjudicator
    "approval_queue": 4,  # as the approver
    "assignments": 8,
    "import_upload": 3,
    "questions": 3,
    "docs_page": 1,
    "import_job": 3,
    "job": 3,
    "evidence_page": 4,
    "evidence_words": 3,
    "evidence_locate": 3,
    "dashboards": 3,
    "judge_list": 5,
    # ten run cards, their costs summed in one query and latencies in one; Compare's versions,
    # the other judges of its criterion, the split
    "judge_page": 17,
    "judge_compare": 24,  # two judges' labels on one criterion, as the agreement report reads
    "run_status": 6,  # the run, its cost and its calls' latencies
    "generate": 5,  # the latest generations' items
    "score_list": 5,  # the upload form offers the claim judges
    "score_run": 4,
    "score_case": 3,
    "text_metrics": 7,  # slices, the draw, the split's late items, the items
    "pass_at_k": 12,  # the criterion, the judge named, its verdicts, the items
    # The dashboard pages' freshness check reads judge versions and panel members too (+2),
    # and the recompute job waiting or running, which it links (+1); the project's data
    # version stands for the five aggregates over verdicts, labels, resolutions, revisions and
    # the split it read before (-4, issue #33).
    "project_dashboard": 15,  # + the recent background jobs
    "dashboard_criterion": 10,
    "dashboard_item": 24,
    "dashboard_disagreements": 14,
    "dashboard_failures": 13,
    "dashboard_report": 13,
    "dashboard_chart": 10,
    # One judge's labels, the final human labels and how each item came before people.
    "dashboard_estimate": 15,
}


def _values(site: Site, route: Route) -> dict:
    """A real value for every parameter name the site's patterns use: judging's pages and the
    API are visited in the judge-calibration project, reviews' pages in the review demo."""
    name = route.name or ""
    judging = route.module.startswith("judging") or name.startswith("api:")
    users = get_user_model().objects
    values = {
        "slug": (site.judged if judging else site.demo).slug,
        "item_pk": (site.judged_item if judging else site.item).pk,
        "question_pk": site.item.questions.order_by("pk").first().pk,
        "user_pk": users.get(username=VISITORS["rater"]).pk,
        "job_pk": site.job.pk,
        "job_id": site.background_job.pk,
        "hook_pk": site.hook_pk,
        "sha256": site.document.sha256,
        "page": 1,
        "name": "faithful"
        if name.startswith("dashboard_")
        else "formats"
        if name == "docs_page"
        else JUDGE,
        "fmt": "svg" if name == "dashboard_chart" else "md",
        "kind": "confusion",
        "external_id": APPROVED,
        "pk": {
            "api_token_revoke": site.token_pk,
            "score_run": site.score_run_pk,
            "score_case": site.score_run_pk,
            "api:score_run_detail": site.score_run_pk,
        }.get(name, site.run.pk),
        "app_label": "reviews",
        "content_type_id": ContentType.objects.get_for_model(site.demo).pk,
        "object_id": site.demo.pk,
        "id": users.get(username=VISITORS["staff"]).pk,  # the admin's password form
    }
    model = admin_model_of(name, _admin_models())
    if model is not None:
        first = model._default_manager.order_by("pk").first()
        values["object_id"] = first.pk if first else 0
    return values


def _admin_models() -> dict[str, type]:
    return {f"{m._meta.app_label}_{m._meta.model_name}": m for m in admin.site._registry}


def _paths(site: Site, names) -> dict[str, str]:
    """URL name → path (with its query) for the named patterns in `names`."""
    found = {}
    for route in routes():
        if route.name is None:
            assert route.route.startswith(UNNAMED_UNDER), f"unnamed pattern {route.route}"
        elif names(route.name):
            found[route.name] = route.url(_values(site, route)) + QUERY.get(route.name, "")
    return found


def _clients(site: Site) -> dict[str, Client]:
    """A signed-in client per role; the readers have asked to see held-out figures."""
    users = get_user_model().objects.in_bulk(list(VISITORS.values()), field_name="username")
    clients = {}
    for role, username in VISITORS.items():
        client = clients[role] = Client()
        client.force_login(users[username])
        # Counted as every request after a session's first: the server then reads the user's
        # row with the session (evalsite/sessions.py), one statement fewer.
        client.get(reverse("home"))
        if role in ("admin", "approver", "adjudicator"):
            client.post(reverse("held_out_show", args=[site.judged.slug]))
    return clients


def _measure(clients: dict[str, Client], paths: dict[str, str]) -> dict:
    """(name, role) → (status, queries, statements). The admin's pages only as staff (every
    other role is sent to the admin's login, counted on its index). Each page is visited once
    before it is counted: first visits fill caches, and an evidence page refreshes its cached
    render's last use at most once a while (TOUCH_EVERY)."""
    counts = {}
    for name, path in paths.items():
        headers = HEADERS.get(name, {})
        visitors = {
            role: client
            for role, client in clients.items()
            if role == "staff" or not name.startswith("admin:") or name == "admin:index"
        }
        next(iter(visitors.values())).get(path, headers=headers)
        for role, client in visitors.items():
            with CaptureQueriesContext(connection) as queries:
                response = client.get(path, headers=headers)
                if response.streaming:  # a row export reads its rows as it is sent
                    b"".join(response.streaming_content)
            statements = [q["sql"] for q in queries.captured_queries]
            counts[name, role] = (response.status_code, len(statements), statements)
    return counts


@pytest.fixture(scope="module")
def measured(module_db, tmp_path_factory):
    """Counts on the small site and on the grown one, and the status of each GET refused."""
    folder = tmp_path_factory.mktemp("site")

    def measure():
        with StubModel() as url:
            site = site_build(url)
            clients = _clients(site)
            pages = _paths(site, lambda name: name not in NOT_PAGES)
            small = _measure(clients, pages)
            site_grow(site, folder)
            large = _measure(clients, _paths(site, lambda name: name not in NOT_PAGES))
        refused = _paths(site, lambda name: name in NOT_PAGES)
        statuses = {name: clients["admin"].get(path).status_code for name, path in refused.items()}
        return small, large, statuses

    return module_db.build(measure)


def _shown(counts: dict, name: str) -> str | None:
    """The first role of ORDER that gets a 200 from page `name`."""
    return next((r for r in ORDER if counts.get((name, r), (0,))[0] == 200), None)


def test_every_named_pattern_is_visited_or_refuses_get(measured):
    small, _, refused = measured
    assert set(refused) == set(NOT_PAGES), "NOT_PAGES names a URL that no longer exists"
    assert {name: status for name, status in refused.items() if status != 405} == {}
    unseen = sorted({name for name, _ in small if _shown(small, name) is None} - set(NO_PAGE))
    admin_refusals = [
        n
        for n in unseen
        if n.startswith("admin:") and (small[n, "staff"][0] == 403 or any(m in n for m in NO_ROWS))
    ]
    assert [n for n in unseen if n not in admin_refusals] == [], (
        "no role got a 200 from these pages: give their parameters real values in _values"
    )


def test_no_page_runs_more_queries_on_the_larger_site(measured):
    small, large, _ = measured
    grown = {
        key: (small[key][:2], large[key][:2])
        for key in small
        if small[key][:2] != large[key][:2]
        and not any(key[0].endswith(suffix) for suffix in GROWS_BY_DESIGN)
    }
    shown = "\n\n".join(
        f"{key}: {before} -> {after}\n" + "\n".join(sql[:160] for sql in large[key][2])
        for key, (before, after) in list(grown.items())[:3]
    )
    assert grown == {}, shown


def test_every_page_keeps_its_pinned_count(measured):
    small, _, _ = measured
    counts = {
        name: small[name, role][1]
        for name, _ in small
        if not name.startswith("admin:") and (role := _shown(small, name))
    }
    assert counts == PINNED


def test_no_admin_page_asks_row_by_row(measured):
    small, large, _ = measured
    over = {
        key: (small[key][1], large[key][1])
        for key in small
        if key[0].startswith("admin:")
        and not any(key[0].endswith(suffix) for suffix in GROWS_BY_DESIGN)
        and max(small[key][1], large[key][1]) > ADMIN_BUDGET
    }
    assert over == {}
