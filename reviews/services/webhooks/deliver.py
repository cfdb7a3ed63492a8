"""One attempt to send one delivery, signed, and its line in the delivery log.

The signature: `Evalsite-Signature: t=<unix seconds>,v1=<hex>`, where hex is
HMAC-SHA256(secret, f"{t}." + body). Each attempt signs with its own time, so a receiver can
refuse anything older than a few minutes (a replayed request) while a retry still verifies
(docs/webhooks.md shows a receiver). Redirects are not followed: a redirect could lead to a host
the operator has not allowed.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from dataclasses import dataclass

import httpx
from django.conf import settings
from django.utils import timezone

from evalsite.outbound import HostRefused
from reviews.models import DeliveryStatus, WebhookAttempt, WebhookDelivery
from reviews.services.webhooks.hooks import webhook_url_check

SIGNATURE_HEADER = "Evalsite-Signature"
REPLAY_WINDOW_SECONDS = 300  # what docs/webhooks.md tells receivers to accept
EXCERPT_CHARS = 500


def signature_header(secret: str, body: bytes, timestamp: int) -> str:
    mac = hmac.new(secret.encode(), b"%d." % timestamp + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"


def signature_valid(
    secret: str, body: bytes, header: str, *, now: float | None = None,
    window: int = REPLAY_WINDOW_SECONDS,
) -> bool:  # fmt: skip
    """What a receiver checks: the MAC over its own timestamp, and that timestamp is recent."""
    fields = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if not fields.get("t", "").isdigit() or "v1" not in fields:
        return False
    timestamp = int(fields["t"])
    if abs((time.time() if now is None else now) - timestamp) > window:
        return False
    expected = signature_header(secret, body, timestamp).split("v1=", 1)[1]
    return hmac.compare_digest(expected, fields["v1"])


@dataclass(frozen=True)
class Outcome:
    status: str  # DeliveryStatus
    retry_in: int | None = None  # seconds until the next attempt, when one is due


def _send(delivery: WebhookDelivery) -> tuple[int | None, str, str, bool]:
    """(status code, response excerpt, error, whether retrying could help) of one POST."""
    body = delivery.body.encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "Evalsite-Webhooks",
        "Evalsite-Event": delivery.event,
        "Evalsite-Delivery": str(delivery.uuid),
        SIGNATURE_HEADER: signature_header(delivery.hook.secret, body, int(time.time())),
    }
    try:
        webhook_url_check(delivery.hook.url)  # the operator's list may have changed since
        with httpx.stream(
            "POST", delivery.hook.url, content=body, headers=headers,
            timeout=settings.WEBHOOK_TIMEOUT_SECONDS, follow_redirects=False,
        ) as response:  # fmt: skip
            deadline = time.monotonic() + settings.WEBHOOK_TIMEOUT_SECONDS
            return response.status_code, _excerpt(response, deadline), "", True
    except HostRefused as refused:  # no longer allowed: a retry would be refused too
        return None, "", str(refused)[:EXCERPT_CHARS], False
    except httpx.HTTPError as error:
        return None, "", f"{type(error).__name__}: {error}"[:EXCERPT_CHARS], True


def _excerpt(response: httpx.Response, deadline: float) -> str:
    """The reply's first EXCERPT_CHARS, read until `deadline` at most: httpx's timeout is per
    read, so a receiver dribbling its body a byte at a time would otherwise hold the task
    worker for minutes."""
    got = b""
    for chunk in response.iter_bytes():
        got += chunk
        if len(got) >= EXCERPT_CHARS or time.monotonic() >= deadline:
            break
    return got[:EXCERPT_CHARS].decode("utf-8", "replace")


def webhook_attempt(delivery_pk: int) -> Outcome:
    """Send a pending delivery once, log the attempt, and say whether (and when) to try again.
    A delivery already settled, or whose hook was disabled, is not sent."""
    delivery = WebhookDelivery.objects.select_related("hook").get(pk=delivery_pk)
    if delivery.status != DeliveryStatus.PENDING:
        return Outcome(delivery.status)
    if not delivery.hook.active:
        delivery.status = DeliveryStatus.FAILED
        delivery.save(update_fields=["status"])
        return Outcome(delivery.status)
    started, clock = timezone.now(), time.monotonic()
    code, excerpt, error, retryable = _send(delivery)
    number = delivery.attempts + 1
    WebhookAttempt.objects.create(
        delivery=delivery, number=number, started_at=started,
        duration_ms=round((time.monotonic() - clock) * 1000), status_code=code,
        response_excerpt=excerpt, error=error,
    )  # fmt: skip
    delays = settings.WEBHOOK_RETRY_SECONDS
    retry_in = None
    if code is not None and 200 <= code < 300:
        delivery.status = DeliveryStatus.DELIVERED
    elif retryable and number <= len(delays):
        retry_in = delays[number - 1]
    else:
        delivery.status = DeliveryStatus.FAILED
    delivery.attempts = number
    delivery.save(update_fields=["status", "attempts"])
    return Outcome(delivery.status, retry_in)
