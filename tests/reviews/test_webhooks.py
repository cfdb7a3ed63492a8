"""Webhooks: signed deliveries to a local receiver, retried after a failure, every attempt
logged; events from approval and re-opening; the admin's page (host rules, secret once)."""

import time

import pytest
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from reviews.models import (
    DeliveryStatus,
    ProjectAction,
    ProjectEvent,
    Role,
    Webhook,
    WebhookAttempt,
    WebhookDelivery,
)
from reviews.services.approval.approve import approval_record
from reviews.services.item_bulk import items_reopen_asked
from reviews.services.webhooks.deliver import signature_header, signature_valid
from reviews.services.webhooks.emit import webhook_event_emit
from tests.factories import PASSWORD, member
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db

DATABASE_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}


def test_an_approval_is_delivered_signed_and_logged(
    project, resolved, django_capture_on_commit_callbacks
):
    approver = member(project, Role.APPROVER, username="appy")
    with Receiver() as receiver:
        hook, secret = receiver.hook(project, events=["item.approved"])
        with django_capture_on_commit_callbacks(execute=True):
            approval_record(actor=approver, item=resolved, password=PASSWORD, confirmed=True)
    [got] = receiver.received
    assert signature_valid(secret, got.body, got.headers["Evalsite-Signature"])
    assert not signature_valid("whsec_other", got.body, got.headers["Evalsite-Signature"])
    assert got.headers["Evalsite-Event"] == "item.approved"
    document = got.document
    assert (document["event"], document["project"]) == ("item.approved", project.slug)
    assert document["data"]["item"] == resolved.external_id
    assert (document["data"]["version"], document["data"]["approved_by"]) == (2, "appy")
    delivery = WebhookDelivery.objects.get(hook=hook)
    assert got.headers["Evalsite-Delivery"] == str(delivery.uuid) == document["id"]
    assert got.body == delivery.body.encode()  # the log keeps exactly what was signed
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.DELIVERED, 1)
    [attempt] = WebhookAttempt.objects.filter(delivery=delivery)
    assert (attempt.status_code, attempt.response_excerpt, attempt.error) == (204, "", "")


def test_the_signature_binds_the_time_and_refuses_a_replay():
    body = b'{"event":"item.approved"}'
    header = signature_header("whsec_x", body, 1_000_000)
    assert signature_valid("whsec_x", body, header, now=1_000_299)
    assert not signature_valid("whsec_x", body, header, now=1_000_301)  # replayed too late
    assert not signature_valid("whsec_x", body + b" ", header, now=1_000_000)
    forged = header.replace("t=1000000", "t=1000200")  # a fresh time on an old MAC
    assert not signature_valid("whsec_x", body, forged, now=1_000_200)


def _work(settings):
    """What `manage.py db_worker --batch` does: run every task that is due, then stop."""
    Worker(
        queue_names=["default"], interval=0, batch=True, backend_name="default",
        startup_delay=False, max_tasks=None, worker_id="test", excluded_queue_names=[],
    ).run()  # fmt: skip


@pytest.mark.django_db(transaction=True)
def test_a_500_is_retried_by_the_worker_after_its_backoff_then_succeeds(project, settings):
    settings.TASKS = DATABASE_TASKS
    settings.WEBHOOK_RETRY_SECONDS = [3600, 60]
    with Receiver(statuses=[500, 200]) as receiver:
        hook, secret = receiver.hook(project, events=["run.finished"])
        with transaction.atomic():
            [pk] = webhook_event_emit(project, "run.finished", {"run": 7, "status": "done"})
            assert not DBTaskResult.objects.exists()  # queued only once the action commits
        _work(settings)
        assert len(receiver.received) == 1
        retry = DBTaskResult.objects.get(status="READY")
        assert 3590 < (retry.run_after - retry.enqueued_at).total_seconds() <= 3600
        assert WebhookDelivery.objects.get(pk=pk).status == DeliveryStatus.PENDING
        DBTaskResult.objects.filter(pk=retry.pk).update(run_after=timezone.now())  # an hour on
        _work(settings)
    first, second = receiver.received
    assert first.body == second.body  # the same delivery (same id), signed again
    for got in (first, second):
        assert signature_valid(secret, got.body, got.headers["Evalsite-Signature"])
    delivery = WebhookDelivery.objects.get(pk=pk)
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.DELIVERED, 2)
    log = list(WebhookAttempt.objects.filter(delivery=delivery).order_by("number"))
    assert [(a.number, a.status_code) for a in log] == [(1, 500), (2, 200)]
    assert log[0].response_excerpt == '{"ok": false}' and log[1].response_excerpt == "thanks"
    assert all(a.duration_ms >= 0 and a.started_at for a in log)


def test_a_receiver_that_keeps_failing_is_given_up_after_the_last_retry(
    project, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_RETRY_SECONDS = [1, 1]  # the immediate backend retries at once
    with Receiver(statuses=[503]) as receiver:
        receiver.hook(project, events=["gate.changed"])
        with django_capture_on_commit_callbacks(execute=True):
            [pk] = webhook_event_emit(project, "gate.changed", {"judge": "j", "to": "GO"})
    assert len(receiver.received) == 3
    delivery = WebhookDelivery.objects.get(pk=pk)
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.FAILED, 3)
    assert WebhookAttempt.objects.filter(delivery=delivery, status_code=503).count() == 3


def test_an_unreachable_receiver_is_logged_with_its_error(
    project, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_RETRY_SECONDS = []
    with Receiver() as receiver:
        receiver.hook(project, events=["run.finished"])
    # The receiver is gone now, but its host is still allowed.
    settings.WEBHOOK_ALLOWED_HOSTS = [receiver.host_port]
    with django_capture_on_commit_callbacks(execute=True):
        [pk] = webhook_event_emit(project, "run.finished", {"run": 1})
    [attempt] = WebhookAttempt.objects.filter(delivery_id=pk)
    assert attempt.status_code is None and attempt.error.startswith("ConnectError")
    assert WebhookDelivery.objects.get(pk=pk).status == DeliveryStatus.FAILED


def test_a_receiver_dribbling_its_reply_holds_the_worker_no_longer_than_the_timeout(
    project, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_RETRY_SECONDS, settings.WEBHOOK_TIMEOUT_SECONDS = [], 1
    with Receiver(statuses=[200], dribble=0.05) as receiver:  # 500 bytes would take 25 s
        receiver.hook(project, events=["run.finished"])
        started = time.monotonic()
        with django_capture_on_commit_callbacks(execute=True):
            [pk] = webhook_event_emit(project, "run.finished", {"run": 1})
        took = time.monotonic() - started
    [attempt] = WebhookAttempt.objects.filter(delivery_id=pk)
    assert took < 5 and attempt.status_code == 200 and attempt.response_excerpt.startswith(".")
    assert WebhookDelivery.objects.get(pk=pk).status == DeliveryStatus.DELIVERED


def test_an_action_that_rolls_back_sends_nothing(project, django_capture_on_commit_callbacks):
    with Receiver() as receiver:
        receiver.hook(project)
        with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
            sid = transaction.savepoint()
            webhook_event_emit(project, "item.approved", {"item": "x"})
            transaction.savepoint_rollback(sid)
    assert receiver.received == [] and not WebhookDelivery.objects.exists()


def test_reopening_items_tells_the_hooks_and_only_those_that_asked(
    project, resolved, django_capture_on_commit_callbacks
):
    admin = member(project, Role.ADMIN, username="boss")
    with Receiver() as wants, Receiver() as ignores:
        wants.hook(project, events=["item.reopened"])
        ignores.hook(project, events=["item.approved"])
        with django_capture_on_commit_callbacks(execute=True):
            items_reopen_asked(actor=admin, project=project, item_ids=[resolved.pk])
    [got] = wants.received
    assert got.document["event"] == "item.reopened"
    assert got.document["data"] == {
        "item": resolved.external_id,
        "questions": ["$.total"],
        "reopened_by": "boss",
    }
    assert ignores.received == []


def test_a_disabled_hook_is_sent_nothing_more(project, django_capture_on_commit_callbacks):
    with Receiver() as receiver:
        hook, _ = receiver.hook(project)
        with django_capture_on_commit_callbacks(execute=False) as queued:
            [pk] = webhook_event_emit(project, "item.approved", {"item": "x"})
        Webhook.objects.filter(pk=hook.pk).update(active=False)
        for callback in queued:
            callback()
    assert receiver.received == []
    assert WebhookDelivery.objects.get(pk=pk).status == DeliveryStatus.FAILED


# --- the admin's page ---------------------------------------------------------------------------


@pytest.fixture
def admin_client(client, project):
    client.force_login(member(project, Role.ADMIN, username="boss"))
    return client


def test_the_page_adds_a_hook_shows_its_secret_once_and_audits_it(admin_client, project):
    url = reverse("webhooks", args=[project.slug])
    with Receiver() as receiver:
        page = admin_client.get(url).content.decode()
        assert f"<code>{receiver.host_port}</code>" in page and "WEBHOOK_ALLOWED_HOSTS=" in page
        response = admin_client.post(url, {"url": receiver.url, "events": ["item.approved"]})
    hook = Webhook.objects.get(project=project)
    html = response.content.decode()
    assert hook.secret.startswith("whsec_") and hook.secret in html
    assert "no-store" in response["Cache-Control"]  # the secret stays out of caches
    assert hook.secret not in admin_client.get(url).content.decode()  # shown once
    line = ProjectEvent.objects.get(project=project, action=ProjectAction.WEBHOOK_ADDED)
    assert (line.actor_name, line.target, line.after) == (
        "boss",
        receiver.url,
        {"events": ["item.approved"]},
    )
    assert "secret" not in str(line.after)


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("https://hooks.example.com/x", "add hooks.example.com:443 to WEBHOOK_ALLOWED_HOSTS"),
        ("https://169.254.169.254/latest", "add 169.254.169.254:443 to WEBHOOK_ALLOWED_HOSTS"),
        ("http://hooks.example.com/x", "webhooks are sent over https:// only"),
        ("https://u:p@hooks.example.com/x", "no user name or password in the URL"),
    ],
)
def test_a_refused_endpoint_is_named_and_the_input_kept(
    admin_client, project, settings, typed, message
):
    settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com:80"] if "http:" in typed else []
    if "u:p@" in typed:
        settings.WEBHOOK_ALLOWED_HOSTS = ["hooks.example.com"]
    url = reverse("webhooks", args=[project.slug])
    response = admin_client.post(url, {"url": typed, "events": ["item.approved"]})
    html = response.content.decode()
    assert response.status_code == 200 and message in html
    assert f'value="{typed}"' in html
    assert (
        not Webhook.objects.exists() and not ProjectEvent.objects.filter(project=project).exists()
    )


def test_disabling_a_hook_keeps_its_log_and_audits_it(
    admin_client, project, django_capture_on_commit_callbacks
):
    with Receiver() as receiver:
        hook, _ = receiver.hook(project)
        with django_capture_on_commit_callbacks(execute=True):
            webhook_event_emit(project, "run.finished", {"run": 3})
        detail = admin_client.get(reverse("webhook_detail", args=[project.slug, hook.pk]))
        assert "HTTP 204" in detail.content.decode() and "run.finished" in detail.content.decode()
        response = admin_client.post(reverse("webhook_disable", args=[project.slug, hook.pk]))
        assert response.status_code == 302
        with django_capture_on_commit_callbacks(execute=True):
            assert webhook_event_emit(project, "run.finished", {"run": 4}) == []
    assert len(receiver.received) == 1
    assert ProjectEvent.objects.filter(
        action=ProjectAction.WEBHOOK_REMOVED, target=hook.url
    ).exists()
    page = admin_client.get(reverse("webhooks", args=[project.slug])).content.decode()
    assert "disabled" in page
    assert (
        "HTTP 204"
        in admin_client.get(
            reverse("webhook_detail", args=[project.slug, hook.pk])
        ).content.decode()
    )


def test_only_admins_see_the_webhooks(client, project):
    client.force_login(member(project, Role.APPROVER))
    assert client.get(reverse("webhooks", args=[project.slug])).status_code == 403
