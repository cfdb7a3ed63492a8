"""Events become deliveries: one row per active hook that asked for the event.

The rows are written in the caller's transaction (an action that rolls back tells no one) and
handed to the task worker once it commits (`webhook_deliveries_queued`): the action never waits
for a receiver, however slow or down it is.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.utils import timezone

from reviews.models import Project, Webhook, WebhookDelivery, WebhookEvent
from reviews.signals import webhook_deliveries_queued


def webhook_body(delivery: WebhookDelivery, project: Project, payload: dict[str, Any]) -> str:
    document = {
        "id": str(delivery.uuid),
        "event": delivery.event,
        "created_at": timezone.now(),
        "project": project.slug,
        "data": payload,
    }
    return json.dumps(document, cls=DjangoJSONEncoder, sort_keys=True, separators=(",", ":"))


def webhook_event_emit(project: Project, event: str, payload: dict[str, Any]) -> list[int]:
    """Queue `event` (a WebhookEvent value) with `payload` for every active hook of `project`
    that asked for it; returns the deliveries' pks (none: nobody listens)."""
    return webhook_events_emit(project, event, [payload])


def webhook_events_emit(project: Project, event: str, payloads: list[dict[str, Any]]) -> list[int]:
    """The same event for many things at once (a bulk action): one read of the hooks."""
    event = WebhookEvent(event).value
    hooks = [h for h in Webhook.objects.filter(project=project, active=True) if event in h.events]
    deliveries = []
    for hook in hooks:
        for payload in payloads:
            delivery = WebhookDelivery(hook=hook, event=event)
            delivery.body = webhook_body(delivery, project, payload)
            deliveries.append(delivery)
    pks = [d.pk for d in WebhookDelivery.objects.bulk_create(deliveries)]
    if pks:
        transaction.on_commit(
            lambda: webhook_deliveries_queued.send(WebhookDelivery, delivery_pks=pks)
        )
    return pks
