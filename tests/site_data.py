"""A site with something behind every URL, built small and then grown (tests/test_query_counts.py).

Small: the demo (its review project and its judge-calibration project, the demo users in every
role), a staff user who is no member, a judge with one executed run and ten queued, an approved
item, an import job, a score run, an API token, and a row for each model the admin lists. `site_grow` then adds what the growing pages used to pay for row by row: more
projects for the same users, judge configurations, versions and runs, items, members, jobs,
score runs and tokens.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from axes.models import AccessAttempt, AccessFailureLog
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from judging.demo import SLUG as JUDGE_DEMO
from judging.models import GateSetting, JudgeConfig, ModelPrice, Run
from judging.services.calibration.failures import buckets_for, failure_tag
from judging.services.calibration.panels import panel_configure
from judging.services.dashboard import dashboard_refresh
from judging.services.judges.configs import JudgeSettings, judge_config_save
from judging.services.runs.budgets import budget_set
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from judging.services.scoring.score import predictions_score
from judging.stub_model import make_server
from reviews.demo.load import DEMO_SLUG, DEMO_USERS, demo_project
from reviews.models import (
    Document,
    EventKind,
    ImportJob,
    Item,
    Job,
    Project,
    Role,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
)
from reviews.services.approval.approve import approval_record
from reviews.services.assignment.batches import batch_create
from reviews.services.assignment.queue import assignment_claim_next
from reviews.services.events import event_record
from reviews.services.imports.approved import trusted_key_register, trusted_key_revoke
from reviews.services.imports.pipeline import file_import
from reviews.services.projects.members import membership_add
from reviews.services.projects.tokens import token_create
from reviews.services.rating.quality import gold_mark, rater_quality_setting_update
from reviews.services.webhooks.hooks import webhook_create, webhook_disable
from tests.builders import attach_evidence, rate, review_item_builder
from tests.factories import UserFactory
from tests.judging.helpers import (
    INVOICE_ROWS,
    criterion_record,
    invoice_predictions,
    item_record,
    referenced_item,
    write_jsonl,
)

JUDGE = "faithful-stub"
RUNS_SHOWN = 10  # the judge page shows the latest ten runs
APPROVED = "case-approved"  # the judge project's approved item (the API pages)
PROMPT = "Is the description faithful? Answer with one of {{ labels }}."
# Who visits: a demo user per project role, and a staff member of no project.
VISITORS = {
    "rater": "rita",
    "adjudicator": "ada",
    "approver": "april",
    "admin": "alex",
    "staff": "sam",
}


@dataclass
class Site:
    """The rows whose ids fill the URL patterns' parameters."""

    demo: Project
    judged: Project
    item: Item  # a demo item the rater has claimed
    judged_item: Item
    document: Document
    run: Run
    job: ImportJob
    background_job: Job  # a finished bulk action run by the worker
    score_run_pk: int
    token_pk: int
    url: str  # the stub model server's base URL
    hook_pk: int = 0  # a (disabled) webhook of the review demo, with deliveries


def _judge_settings(url: str, prompt: str = PROMPT) -> JudgeSettings:
    return JudgeSettings(
        provider="openai-compatible",
        model="stub",
        prompt=prompt,
        criterion="faithful",
        base_url=url,
    )


def _users() -> dict:
    return get_user_model().objects.in_bulk([s.username for s in DEMO_USERS], field_name="username")


def _import(project, actor, folder: Path, records: list[dict]) -> None:
    path = write_jsonl(folder / f"{project.slug}-{len(records)}.jsonl", records)
    file_import(actor=actor, project=project, path=path)


def _score(project, admin, amount: str) -> int:
    records = invoice_predictions("inv-1", amount=amount)
    return predictions_score(
        actor=admin, project=project, source_name="predictions.jsonl", records=records
    ).pk


def _approved_case(project, users, external_id: str = APPROVED) -> Item:
    """An item of `project` two raters agreed on and the approver signed (the API's
    references, and rows for the admin's answer, resolution and approval pages)."""
    case = review_item_builder()(project, external_id=external_id)
    attach_evidence(case)
    for username in ("rita", "raj"):
        rate(users[username], case, {"$.total": "1,200.00"})
    (april,) = (spec for spec in DEMO_USERS if spec.username == "april")
    approval_record(actor=users["april"], item=case, password=april.password, confirmed=True)
    return case


def _admin_rows(site: Site, users) -> None:
    """A row for each model the admin lists that the pages above leave empty, so every admin
    change and history page is visited with a real id."""
    alex, demo, judged = users["alex"], site.demo, site.judged
    Group.objects.create(name="reviewers")
    # a signed-in user's own attempts are reset at login
    AccessAttempt.objects.create(username="mallory", ip_address="127.0.0.1", failures_since_start=1)
    AccessFailureLog.objects.create(username="mallory", ip_address="127.0.0.1", locked_out=False)
    bucket = buckets_for(judged)[0]
    failure_tag(
        actor=alex,
        project=judged,
        item=site.judged_item,
        criterion="faithful",
        judge="openai/gpt-4o",
        bucket_pk=bucket.pk,
        note="",
    )
    GateSetting.objects.create(project=judged, criterion="faithful")
    ModelPrice.objects.create(provider="openai-compatible", model="stub")
    budget_set(project=judged, monthly_usd="100", actor=alex)
    panel_configure(project=judged, name="panel", rule="majority", members=[f"{JUDGE}@1"])
    batch_create(
        actor=alex, project=demo, name="first", raters=[users["raj"]], selection="count", count=1
    )
    gold_mark(actor=alex, item=Item.objects.get(project=judged, external_id=APPROVED))
    rater_quality_setting_update(actor=alex, project=demo, alert_below=0.8, min_answers=5)
    pem = (
        Ed25519PrivateKey.generate()
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    keeper = UserFactory(username="kim")  # a trusted key is added by an admin who approves
    for role in (Role.ADMIN, Role.APPROVER):
        membership_add(actor=alex, project=demo, user=keeper, role=role)
    key = trusted_key_register(actor=keeper, project=demo, pem=pem.decode())
    trusted_key_revoke(actor=keeper, project=demo, key_id=key.key_id, reason="leaked")
    site.hook_pk = _webhook(demo, alex).pk


def _webhook(project, admin, deliveries: int = 2) -> Webhook:
    """A webhook whose deliveries each had two attempts. Disabled at once, so nothing the
    site does afterwards tries to reach its (made-up) host."""
    with override_settings(WEBHOOK_ALLOWED_HOSTS=["hooks.example.com"]):
        hook, _ = webhook_create(
            actor=admin, project=project, url="https://hooks.example.com/e",
            events=["item.approved"],
        )  # fmt: skip
    webhook_disable(actor=admin, project=project, hook_pk=hook.pk)
    webhook_log_grow(hook, deliveries)
    return hook


def webhook_log_grow(hook, deliveries: int) -> None:
    now = timezone.now()
    for _ in range(deliveries):
        delivery = WebhookDelivery.objects.create(hook=hook, event="item.approved", body="{}")
        for number, code in ((1, 500), (2, 200)):
            WebhookAttempt.objects.create(
                delivery=delivery, number=number, started_at=now, duration_ms=5, status_code=code
            )


def _export_job(project, actor, kind: str, data: dict) -> Job:
    """A finished export job of the project page's (its file long gone from storage)."""
    return Job.objects.create(
        project=project, created_by=actor, kind=kind, status=Job.Status.SUCCEEDED,
        params={"data": data, "extra": {"file": f"exports/{project.pk}/gone.zip"}},
    )  # fmt: skip


def site_build(stub_url: str) -> Site:
    call_command("load_demo", verbosity=0)
    users = _users()
    alex = users["alex"]
    UserFactory(username=VISITORS["staff"], is_staff=True, is_superuser=True)
    demo = Project.objects.get(slug=DEMO_SLUG)
    judged = Project.objects.get(slug=JUDGE_DEMO)
    config = judge_config_save(project=judged, name=JUDGE, settings=_judge_settings(stub_url))
    run = run_create(config=config.config, split="calibration", limit=4)
    run_execute(run)
    for _ in range(RUNS_SHOWN):  # the judge page's list of runs is full at both sizes
        run_create(config=config.config, split="calibration", limit=1)
    referenced_item(judged, "inv-1", INVOICE_ROWS)
    job = ImportJob.objects.create(project=demo, created_by=alex, original_name="more.csv")
    _export_job(demo, alex, "ground_truth_export", {"format": ["review"]})  # Recent exports
    _approved_case(judged, users)
    assignment = assignment_claim_next(rater=users["rita"], project=demo)
    for project in (demo, judged):
        dashboard_refresh(project=project)
    site = Site(
        demo=demo,
        judged=judged,
        item=assignment.item,
        judged_item=Item.objects.filter(project=judged).order_by("pk").first(),
        document=Document.objects.filter(sources__item__project=demo).order_by("pk").first(),
        run=run,
        job=job,
        background_job=Job.objects.create(
            project=demo,
            created_by=alex,
            kind="items.reopen",
            status=Job.Status.SUCCEEDED,
            result="Re-opened 2 items.",
            params={"back": "/"},
        ),
        score_run_pk=_score(judged, alex, "8"),
        token_pk=token_create(actor=alex, name="first")[0].pk,
        url=stub_url,
    )
    _admin_rows(site, users)
    return site


def site_grow(
    site: Site, folder: Path, *, projects: int = 5, configs: int = 5, versions: int = 5
) -> None:
    """More of everything the pages list: projects for the same users (each with a judge),
    judge configurations, versions of the visited judge with a run each, items, members,
    import and export jobs, score runs, API tokens, approved items and lines on the visited
    item's timeline."""
    users = _users()
    alex = users["alex"]
    for k in range(projects):
        project = demo_project(users, slug=f"more-{k}", name=f"More {k}")
        items = [item_record(f"m{k}-{n}") for n in range(3)]
        _import(project, alex, folder, [criterion_record(), *items])
        judge_config_save(project=project, name=JUDGE, settings=_judge_settings(site.url))
        dashboard_refresh(project=project)
    for k in range(configs):
        judge_config_save(
            project=site.judged, name=f"other-{k}", settings=_judge_settings(site.url)
        )
    config = JudgeConfig.objects.get(project=site.judged, name=JUDGE)
    for k in range(versions):
        prompt = f"{PROMPT} Take {k}."
        judge_config_save(
            project=site.judged, name=JUDGE, settings=_judge_settings(site.url, prompt)
        )
        run_execute(run_create(config=config, split="calibration", limit=2))
    for k in range(5):
        member = UserFactory(username=f"extra-{k}")
        for project in (site.demo, site.judged):
            membership_add(actor=alex, project=project, user=member, role=Role.RATER)
        ImportJob.objects.create(project=site.demo, created_by=alex, original_name=f"{k}.csv")
        token_create(actor=alex, name=f"more-{k}")
        event_record(item=site.item, kind=EventKind.EXPORTED, actor=member)  # its timeline
        _export_job(site.demo, member, "rows_export", {"kind": ["answers"], "format": ["csv"]})
        _export_job(site.demo, member, "ground_truth_export", {"format": ["csv"]})
    _import(site.demo, alex, folder, [item_record(f"grown-{n}") for n in range(20)])
    for k in range(3):
        _score(site.judged, alex, str(5 + k))
    for k in range(2):
        _approved_case(site.judged, users, f"{APPROVED}-{k}")
    webhook_log_grow(Webhook.objects.get(pk=site.hook_pk), 5)
    _webhook(site.demo, alex)
    for project in (site.demo, site.judged):
        dashboard_refresh(project=project)


class StubModel:
    """The demo's stub model API on a loopback port, for judge runs (no network), and that
    port allowed to judges while it serves."""

    def __enter__(self) -> str:
        self.server = make_server()
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()
        host = f"127.0.0.1:{self.server.server_address[1]}"
        self.allowed = override_settings(JUDGE_ALLOWED_HOSTS=[host])
        self.allowed.enable()
        return f"http://{host}/v1"

    def __exit__(self, *exc):
        self.allowed.disable()
        self.server.shutdown()
        self.server.server_close()
