"""Reads for the webhooks pages."""

from django.db.models import Prefetch, QuerySet

from reviews.models import Webhook, WebhookAttempt

DELIVERIES_SHOWN = 50


def webhook_deliveries(hook: Webhook) -> list:
    """The hook's latest deliveries, newest first, each with its attempts in order."""
    return list(
        hook.deliveries.order_by("-id").prefetch_related(
            Prefetch("attempt_log", queryset=WebhookAttempt.objects.order_by("number"))
        )[:DELIVERIES_SHOWN]
    )


def project_webhooks(project) -> QuerySet:
    return Webhook.objects.filter(project=project).select_related("created_by")
