"""A project admin adds or disables a webhook; every change leaves an audit line.

Where a hook may point is the operator's choice, by the same rule as judges' base URLs
(evalsite/outbound.py) over its own list, WEBHOOK_ALLOWED_HOSTS: the server sends the request,
so an arbitrary URL would let an admin reach hosts only the server can see. https:// only,
since the body and its signature cross the network; plain http:// only to a loopback host
listed with its port (a receiver on this very machine: development, tests).
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from evalsite.outbound import HostRefused, host_allowed, host_refusal, listed, url_parts_check
from reviews.models import Project, ProjectAction, Webhook, WebhookEvent
from reviews.services.projects.audit import project_event_record

SETTING = "WEBHOOK_ALLOWED_HOSTS"
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})


def webhook_hosts_allowed() -> list[str]:
    return listed(settings.WEBHOOK_ALLOWED_HOSTS)


def webhook_url_check(url: str) -> None:
    """Raises HostRefused (its message names the setting) for a URL this server may not call."""
    scheme, host, port = url_parts_check(url, "url")
    if not host_allowed(host, port, settings.WEBHOOK_ALLOWED_HOSTS, SETTING):
        raise host_refusal("url", host, port, SETTING)
    if scheme != "https" and not (host in LOOPBACK and f"{host}:{port}" in _entries()):
        raise HostRefused(
            "url: webhooks are sent over https:// only (plain http:// only to a loopback host "
            f"listed with its port in {SETTING})"
        )


def _entries() -> set[str]:
    return {
        entry.strip().lower().replace("[", "").replace("]", "")
        for entry in settings.WEBHOOK_ALLOWED_HOSTS
    }


@transaction.atomic
def webhook_create(*, actor, project: Project, url: str, events: list[str]) -> tuple[Webhook, str]:
    """The new hook and its signing secret (shown to the admin once; never again)."""
    webhook_url_check(url)
    events = [WebhookEvent(e).value for e in events]
    if not events:
        raise HostRefused("events: choose at least one event")
    secret = "whsec_" + secrets.token_urlsafe(32)
    hook = Webhook.objects.create(
        project=project, url=url, events=events, secret=secret, created_by=actor
    )
    project_event_record(
        project, actor, ProjectAction.WEBHOOK_ADDED, target=url, after={"events": events}
    )
    return hook, secret


@transaction.atomic
def webhook_disable(*, actor, project: Project, hook_pk: int) -> Webhook | None:
    """Stop sending to a hook (its deliveries stay readable). None: no such active hook."""
    hook = (
        Webhook.objects.select_for_update().filter(project=project, pk=hook_pk, active=True).first()
    )
    if hook is None:
        return None
    hook.active, hook.disabled_at = False, timezone.now()
    hook.save(update_fields=["active", "disabled_at"])
    project_event_record(
        project, actor, ProjectAction.WEBHOOK_REMOVED, target=hook.url, before={"active": True}
    )
    return hook
