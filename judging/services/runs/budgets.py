"""Budgets: what a run may still spend, per run (`--budget-usd`) and per project per month.

Every call's cost is stored when it is made, at the price then in force (prices.py); budgets
count those stored costs and nothing else. Before each call the caller asks `Budget.allows`:
the call goes only if what is spent, plus the calls in flight and this one, each at the dearest
call seen so far (by this run, else by its version's earlier runs), stays within every limit.
Until one call's cost is known, one call at a time is in flight, and it goes only if the most
it can cost fits (`call_cost_bound`: its request's size and its output cap at the price in
force), so even the first call never passes a budget. A run stopped by a budget ends `budget_reached` and resumes with a new budget
(`run_resume`).

The project's cap counts the calls of the calendar month (UTC) of every run of the project,
judge runs and ground-truth readers alike.
"""

from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from django.db import transaction
from django.db.models import Max, Sum
from django.utils import timezone
from PIL import Image, UnidentifiedImageError

from judging.models import Call, ModelPrice, ProjectBudget, Run
from judging.providers import ModelRequest
from judging.services.audit import budget_changed
from judging.services.runs.prices import call_cost, price_in_force
from reviews.models import Project

MAX_BUDGET = Decimal("99999999.9999")  # the columns hold 12 digits, 4 after the point


class BudgetError(ValueError):
    """A budget that cannot be set; the message names the option."""


def budget_amount(name: str, value) -> Decimal | None:
    """`value` as a budget in USD (None stays None: no limit), or BudgetError naming `name`."""
    if value is None or value == "":
        return None
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError):
        raise BudgetError(f"{name}: {value!r} is not a number of dollars") from None
    if not amount.is_finite() or not 0 <= amount <= MAX_BUDGET:
        raise BudgetError(f"{name}: {value!r} must be between 0 and {MAX_BUDGET} USD")
    return amount.quantize(Decimal("0.0001"))


def budget_needs_price(name: str, provider: str, model: str) -> None:
    """A budget counts stored costs: without a price in force every call costs nothing."""
    if price_in_force(provider, model) is None:
        raise BudgetError(
            f"{name}: no price is in force for {provider}/{model}, so no call has a cost to "
            "count; add one first (manage.py model_price, or Admin → Model prices)"
        )


# A call's most input tokens, from its request alone (no tokenizer of every provider here):
# a text token covers at least one UTF-8 byte; an image costs at most one token per
# IMAGE_PIXELS_PER_TOKEN pixels (Anthropic bills ~750, OpenAI's 32-px patches at their largest
# multiplier ~416); FRAMING_TOKENS covers each message's role and separators.
IMAGE_PIXELS_PER_TOKEN = 400
FRAMING_TOKENS = 64


def _image_tokens_bound(image: bytes) -> int:
    try:
        width, height = Image.open(io.BytesIO(image)).size  # the header only
    except (UnidentifiedImageError, OSError):
        return len(image)  # unreadable here: a byte a token, more than any provider bills
    return math.ceil(width * height / IMAGE_PIXELS_PER_TOKEN)


def input_tokens_bound(request: ModelRequest) -> int:
    text = request.system + json.dumps(request.schema) + "".join(p.text for p in request.parts)
    images = sum(_image_tokens_bound(p.image) for p in request.parts if p.is_image)
    return len(text.encode("utf-8")) + images + FRAMING_TOKENS * (len(request.parts) + 2)


def call_cost_bound(price: ModelPrice | None, request: ModelRequest) -> Decimal | None:
    """The most `request` can cost at `price`: its input bound and its whole output cap."""
    return call_cost(price, input_tokens_bound(request), request.max_output_tokens)


@transaction.atomic
def budget_set(*, project: Project, monthly_usd, actor=None) -> ProjectBudget:
    """Set (or change) the project's monthly cap; one line in its audit log."""
    amount = budget_amount("monthly cap", monthly_usd)
    if amount is None:
        raise BudgetError("monthly cap: give an amount in USD (0 stops every run)")
    budget, created = ProjectBudget.objects.select_for_update().get_or_create(
        project=project, defaults={"monthly_usd": amount}
    )
    before = None if created else budget.monthly_usd
    budget.monthly_usd = amount
    budget.updated_by = actor if getattr(actor, "pk", None) else None
    budget.save()
    budget_changed(budget, actor, before)
    return budget


def _month_start():
    return timezone.now().replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def month_spent(project: Project) -> Decimal:
    """What the project's calls cost this calendar month (UTC), at their stored costs."""
    spent = Call.objects.filter(run__project=project, created_at__gte=_month_start()).aggregate(
        usd=Sum("cost_usd")
    )["usd"]
    return spent or Decimal(0)


@dataclass
class Budget:
    """The limits one executing run answers to, and what it has spent since they were read."""

    run_limit: Decimal | None
    month_limit: Decimal | None
    run_spent: Decimal = Decimal(0)
    month_spent: Decimal = Decimal(0)
    dearest: Decimal | None = None  # the dearest call seen so far: the next one's estimate
    price: ModelPrice | None = None
    unrecorded: Decimal = field(default=Decimal(0))  # answered, not yet written
    first_bound: Decimal | None = None  # the most the first call could cost, once asked

    @property
    def limited(self) -> bool:
        return self.run_limit is not None or self.month_limit is not None

    def headroom(self) -> Decimal | None:
        room = [
            limit - spent - self.unrecorded
            for limit, spent in (
                (self.run_limit, self.run_spent),
                (self.month_limit, self.month_spent),
            )
            if limit is not None
        ]
        return min(room) if room else None

    def allows(self, in_flight: int, request: ModelRequest) -> bool:
        """May `request` go, with `in_flight` calls already out?"""
        room = self.headroom()
        if room is None:
            return True
        if self.dearest is None:  # no cost known yet: one call at a time, at its most
            self.first_bound = call_cost_bound(self.price, request)
            return in_flight == 0 and room >= (self.first_bound or 0) and room > 0
        return room - (in_flight + 1) * self.dearest >= 0

    def answered(self, reply) -> None:
        """A reply arrived (not yet written): count its cost at the run's price."""
        cost = call_cost(self.price, reply.input_tokens, reply.output_tokens)
        if cost is None:
            return
        self.unrecorded += cost
        self.dearest = cost if self.dearest is None else max(self.dearest, cost)

    def refresh(self, run: Run) -> None:
        """Re-read what is stored (after a batch is written): the stored costs are the truth."""
        fresh = budget_for(run)
        self.run_spent, self.month_spent = fresh.run_spent, fresh.month_spent
        self.unrecorded = Decimal(0)
        if fresh.dearest is not None:
            self.dearest = max(self.dearest or fresh.dearest, fresh.dearest)

    def reason(self) -> str:
        """Which limit stopped the run (the one with the least room), for its page."""
        limits = []
        if self.run_limit is not None:
            limits.append(
                (
                    self.run_limit - self.run_spent,
                    f"the run's budget of ${self.run_limit} (spent ${self.run_spent:.4f})",
                )
            )
        if self.month_limit is not None:
            limits.append(
                (
                    self.month_limit - self.month_spent,
                    f"the project's monthly cap of ${self.month_limit} "
                    f"(spent ${self.month_spent:.4f} this month)",
                )
            )
        named = min(limits)[1] if limits else "its budget"
        if self.dearest is None and self.first_bound is not None:
            return (
                f"budget reached: the first call could cost up to ${self.first_bound:.4f} (its "
                f"request and output cap at the price in force), more than is left of {named}; "
                "resume with a new budget"
            )
        return f"budget reached: the next call would pass {named}; resume with a new budget"


def _dearest(calls) -> Decimal | None:
    return calls.aggregate(d=Max("cost_usd"))["d"]


def budget_for(run: Run) -> Budget:
    """The limits of `run` (its own budget, its project's monthly cap) and what is spent."""
    cap = ProjectBudget.objects.filter(project_id=run.project_id).first()
    own = Call.objects.filter(run=run).aggregate(usd=Sum("cost_usd"), dearest=Max("cost_usd"))
    version = run.version
    if own["dearest"] is None:  # a new run's first estimate: its version's calls elsewhere
        # (never another model's: their prices say nothing of this one's; without any, the
        # first call goes alone, at its bound)
        own["dearest"] = _dearest(Call.objects.filter(run__version=version))
    return Budget(
        run_limit=run.budget_usd,
        month_limit=cap.monthly_usd if cap else None,
        run_spent=own["usd"] or Decimal(0),
        month_spent=month_spent(run.project) if cap else Decimal(0),
        dearest=own["dearest"],
        price=price_in_force(version.provider, version.model),
    )
