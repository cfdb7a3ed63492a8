"""Webhooks: a project's HTTPS endpoints told about events, and the log of every attempt.

A hook is never deleted (disabling keeps its deliveries readable); a delivery is one event for
one hook, its body kept byte for byte as signed; each attempt to send it is appended to
WebhookAttempt (append-only, like every other history table).
"""

import uuid

from django.conf import settings
from django.db import models

from reviews.models.append_only import AppendOnlyModel
from reviews.models.projects import Project


class WebhookEvent(models.TextChoices):
    ITEM_APPROVED = "item.approved", "Item approved"
    ITEM_REOPENED = "item.reopened", "Item re-opened"
    RUN_FINISHED = "run.finished", "Judge run finished (done, failed, cancelled or budget reached)"
    RUN_INTERRUPTED = "run.interrupted", "Judge run interrupted (its worker died)"
    GATE_CHANGED = "gate.changed", "Release gate changed (GO / HOLD)"


class Webhook(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=500)
    events = models.JSONField(default=list, help_text="WebhookEvent values it is sent.")
    # Kept to sign every delivery (HMAC needs the secret itself); shown once, at creation.
    secret = models.CharField(max_length=64)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    disabled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-active", "-id"]

    def __str__(self):
        return self.url


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Gave up"


class WebhookDelivery(models.Model):
    """One event for one hook. Written in the transaction of the action that caused it (so an
    action rolled back sends nothing), sent after it commits, by the task worker."""

    hook = models.ForeignKey(
        Webhook, db_index=False, on_delete=models.CASCADE, related_name="deliveries"
    )
    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    event = models.CharField(max_length=32, choices=WebhookEvent.choices)
    body = models.TextField(help_text="The JSON sent, exactly as signed.")
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["hook", "-id"])]

    def __str__(self):
        return f"{self.event} {self.uuid}"


class WebhookAttempt(AppendOnlyModel):
    delivery = models.ForeignKey(
        WebhookDelivery, db_index=False, on_delete=models.CASCADE, related_name="attempt_log"
    )
    number = models.PositiveSmallIntegerField()
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response_excerpt = models.CharField(max_length=500, blank=True)
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["delivery", "number"], name="webhook_attempt_once")
        ]

    def __str__(self):
        return f"attempt {self.number} of {self.delivery_id}"

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300
