"""Model prices, append-only, and each call's cost fixed when it is made.

A price takes effect from its `effective_from` (now, when added) until a newer one for the same
provider and model; nothing is ever edited. A call stores the price in force and its cost, so a
run's cost is the sum of what its calls cost then, whatever the price is today.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.utils import timezone

from judging.models import ModelPrice
from judging.services.audit import price_added

MILLION = Decimal(1_000_000)
MAX_PER_MILLION = Decimal("999999.9999")  # the column holds 10 digits, 4 after the point


class PriceError(ValueError):
    """A price that cannot be added; the message names the field."""


def _amount(name: str, value) -> Decimal:
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise PriceError(f"{name}: {value!r} is not a number") from None
    if not amount.is_finite() or not 0 <= amount <= MAX_PER_MILLION:
        raise PriceError(f"{name}: {value!r} must be between 0 and {MAX_PER_MILLION} USD")
    if amount != amount.quantize(Decimal("0.0001")):
        raise PriceError(f"{name}: {value!r} has more than 4 decimal places")
    return amount


@transaction.atomic
def price_add(
    *, provider: str, model: str, input_per_million, output_per_million, actor=None
) -> ModelPrice:
    """A new price for `provider/model`, in force from now on (earlier calls keep theirs)."""
    provider, model = provider.strip(), model.strip()
    if not provider or not model:
        raise PriceError("provider and model: both are needed")
    price = ModelPrice.objects.create(
        provider=provider,
        model=model,
        input_per_million=_amount("input USD per million tokens", input_per_million),
        output_per_million=_amount("output USD per million tokens", output_per_million),
        effective_from=timezone.now(),
        created_by=actor if getattr(actor, "pk", None) else None,
    )
    price_added(price, actor)
    return price


def price_in_force(provider: str, model: str, at: datetime | None = None) -> ModelPrice | None:
    return (
        ModelPrice.objects.filter(
            provider=provider, model=model, effective_from__lte=at or timezone.now()
        )
        .order_by("-effective_from")
        .first()
    )


def call_cost(price: ModelPrice | None, tokens_in: int | None, tokens_out: int | None):
    """USD at `price` (None without one); a missing count is 0, so the cost is a lower bound."""
    if price is None:
        return None
    return (
        (tokens_in or 0) * price.input_per_million + (tokens_out or 0) * price.output_per_million
    ) / MILLION


def usage_fields(price: ModelPrice | None, reply) -> dict:
    """A Call's tokens, latency, price and cost for a model reply."""
    return {
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "latency_ms": reply.latency_ms,
        "price": price,
        "cost_usd": call_cost(price, reply.input_tokens, reply.output_tokens),
    }
