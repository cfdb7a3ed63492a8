"""Who rates what: claiming the next item safely under concurrency, leases, skips.

Safety argument: every claim locks the candidate item's row before counting the raters holding
it (PostgreSQL: `SELECT … FOR NO KEY UPDATE SKIP LOCKED`, so parallel raters pass over each
other's candidates instead of queueing; SQLite: the connection opens IMMEDIATE transactions, which
take the database write lock at BEGIN, so claims are serialised). Batches lock their items the
same way. The partial unique constraint on (item, rater) is the last line: a rater can never hold
one item twice.

Why NO KEY UPDATE rather than UPDATE: it conflicts with every other claimer's lock, but not with
the KEY SHARE lock PostgreSQL takes on the item while a row referencing it is inserted (another
rater's answer event, assignment or submit). With FOR UPDATE, SKIP LOCKED passed over every item
someone was answering at that moment, and a rater could be told "nothing waiting" while places
were free.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from evalsite import raw_rows
from reviews.models import (
    Assignment,
    AssignmentStatus,
    EventKind,
    Item,
    ItemStatus,
    Membership,
    Project,
    QuestionKind,
    Role,
)
from reviews.services.assignment.claim_queries import (
    candidate_locked,
    current_claim,
    item_places,
    live_claim,
)
from reviews.services.assignment.durability import rater_write_settings
from reviews.services.assignment.gold import gold_claim
from reviews.services.assignment.opening import assignment_open
from reviews.services.events import event_record

# How many candidates one claim looks at before giving up on a busy pool.
_CANDIDATES_PER_CLAIM = 20
_RNG = secrets.SystemRandom()
MAX_SKIP_REASON = 10_000  # characters, as an answer's note


class QueueError(Exception):
    """A queue action that cannot be done (e.g. skipping an item you do not hold)."""


def _holds_a_place(now) -> Q:
    """Assignments holding one of an item's places at `now`. A lapsed lease holds none, even
    before it is marked expired."""
    return Q(status__in=(AssignmentStatus.ASSIGNED, AssignmentStatus.SUBMITTED)) | Q(
        status=AssignmentStatus.ACTIVE, lease_expires_at__gte=now
    )


def _holds_place_at(status: str, lease, now) -> bool:
    """`_holds_a_place` for one assignment already read."""
    if status == AssignmentStatus.ACTIVE:
        return lease is not None and lease >= now
    return status in (AssignmentStatus.ASSIGNED, AssignmentStatus.SUBMITTED)


def holding_count(now):
    """Per item (as a subquery on OuterRef("pk")): the assignments holding one of its places."""
    return Coalesce(
        Subquery(
            Assignment.objects.filter(_holds_a_place(now), item=OuterRef("pk"))
            .values("item")
            .annotate(n=Count("id"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        Value(0),
    )


def available_items(*, rater, project: Project, now=None):
    """Open items of `project` with a free rater place that `rater` has not taken or skipped
    (a lapsed claim of theirs is not taken: the item is theirs to claim again)."""
    return items_available(
        Item.objects.filter(project=project), rater=rater, overlap=Value(project.overlap), now=now
    )


def items_available(items, *, rater, overlap, now=None):
    """`available_items` among `items`, their project's overlap given as an expression (a
    value, or `OuterRef("overlap")` where the projects are the outer query)."""
    now = now or timezone.now()
    mine = (
        Assignment.objects.filter(rater=rater)
        .exclude(status=AssignmentStatus.EXPIRED)
        .exclude(status=AssignmentStatus.ACTIVE, lease_expires_at__lt=now)
    )
    return (
        items.filter(status=ItemStatus.OPEN)
        .exclude(pk__in=mine.values("item_id"))
        .alias(holding=holding_count(now))  # filter only: not selected, so computed once per row
        .filter(holding__lt=Coalesce("overlap", overlap))
    )


def leases_expire(*, project: Project, now=None) -> int:
    """Return expired claims to the pool (their answers stay, as history).

    A sweep over the whole project. `assignment_claim_next` does not need it: lapsed leases already count
    as free places, and a claim marks the lapsed leases of the item it takes as expired. The
    sweep scans every item of the project (about 40 ms at 100k items on SQLite), which is why
    claims no longer run it.
    """
    now = now or timezone.now()
    return Assignment.objects.filter(
        item__project=project, status=AssignmentStatus.ACTIVE, lease_expires_at__lt=now
    ).update(status=AssignmentStatus.EXPIRED)


def _lease_until(project: Project, now):
    return now + timedelta(minutes=project.lease_minutes)


class _CandidateFull(Exception):
    """The locked candidate has no free place after all: roll back (its lock goes at once)."""

    def __init__(self, item_pk: int):
        self.item_pk = item_pk


def assignment_claim_next(*, rater, project: Project, rng=None) -> Assignment | None:
    """The rater's current item, else a pre-assigned one, else a newly claimed one; or None.

    A new claim is a gold item with probability `project.gold_share` (`rng` for tests), but
    only while ordinary items wait too: a queue that says "nothing waiting" must stay empty.

    One transaction per try, and one try in the common case (no savepoints: each is two more
    round trips to PostgreSQL). A candidate found full under its lock rolls the try back, which
    releases that lock at once, and the next try passes over it.
    """
    now = timezone.now()
    passed_over: list[int] = []
    for _ in range(_CANDIDATES_PER_CLAIM):
        try:
            # A new claim's rows are the try's last writes: on PostgreSQL they go with its
            # COMMIT, in one round trip (the returned claim has its key once they are written).
            with raw_rows.atomic_with_last_writes() as last_writes:
                return _claim(
                    rater=rater,
                    project=project,
                    now=now,
                    rng=rng or _RNG,
                    passed_over=passed_over,
                    write=last_writes,
                )
        except _CandidateFull as full:
            passed_over.append(full.item_pk)
    return None


def _claim(
    *, rater, project: Project, now, rng, passed_over: list[int], write
) -> Assignment | None:
    current = current_claim(rater=rater, project=project, now=now, first=rater_write_settings())
    if current is not None:
        current.status = AssignmentStatus.ACTIVE
        current.opened_at = current.opened_at or now
        current.lease_expires_at = _lease_until(project, now)
        current.save(update_fields=["status", "opened_at", "lease_expires_at"])
        return current
    if project.gold_share and rng.random() < project.gold_share:
        gold = _claim_gold(rater=rater, project=project, now=now, rng=rng)
        if gold is not None:
            return gold
    return _claim_new(rater=rater, project=project, now=now, passed_over=passed_over, write=write)


def _claim_gold(*, rater, project: Project, now, rng) -> Assignment | None:
    if not available_items(rater=rater, project=project, now=now).exists():
        return None
    lease = _lease_until(project, now)
    return gold_claim(rater=rater, project=project, now=now, lease_until=lease, rng=rng)


def _claim_new(*, rater, project: Project, now, passed_over: list[int], write) -> Assignment | None:
    """Lock ONE candidate (LIMIT 1 … SKIP LOCKED): locking a batch of candidates would hide
    all of them from every other rater claiming at the same moment.

    If every candidate left is locked by someone claiming or submitting it right now, the claim
    waits for the first one rather than answer "nothing waiting"; it holds no other item lock
    while it waits (a full candidate's try was rolled back), so the wait cannot close a cycle.
    """
    candidate = candidate_locked(rater=rater, project=project, now=now, passed_over=passed_over)
    if candidate is None:
        return None
    item_pk, overlap = candidate
    # Under the row lock, count again (the candidate query's count may be stale), and mark the
    # item's lapsed leases (the rater's own too) as expired before taking a place. An item has a
    # handful of assignments: read as rows and counted here (two filtered COUNTs cost more CPU
    # to build than this whole read).
    rows = item_places(item_pk)
    if sum(_holds_place_at(status, lease, now) for status, lease in rows) >= (
        overlap or project.overlap
    ):
        raise _CandidateFull(item_pk)
    if any(status == AssignmentStatus.ACTIVE and lease and lease < now for status, lease in rows):
        Assignment.objects.filter(
            item_id=item_pk, status=AssignmentStatus.ACTIVE, lease_expires_at__lt=now
        ).update(status=AssignmentStatus.EXPIRED)
    return assignment_open(
        item=item_pk, rater=rater, now=now, lease_until=_lease_until(project, now), write=write
    )


@transaction.atomic
def assignment_skip(*, rater, assignment: Assignment, reason: str) -> Assignment:
    if assignment.rater_id != rater.pk or assignment.status != AssignmentStatus.ACTIVE:
        raise QueueError("You can only skip an item you are working on.")
    reason = reason.strip()
    if not reason:
        raise QueueError("Say why you skip this item.")
    if len(reason) > MAX_SKIP_REASON:  # it goes into the timeline, which is history
        raise QueueError(f"Say it in at most {MAX_SKIP_REASON:,} characters.")
    assignment.status = AssignmentStatus.SKIPPED
    assignment.skip_reason = reason
    assignment.save(update_fields=["status", "skip_reason"])
    event_record(item=assignment.item, actor=rater, kind=EventKind.SKIPPED, data={"reason": reason})
    return assignment


def is_rater(user, project: Project) -> bool:
    return Membership.objects.filter(project=project, user=user, role=Role.RATER).exists()


def pairwise_order(*, item_pk: int, rater_pk: int, question_pk: int) -> list[str]:
    """A pairwise question's display order for one rater: half the raters see B first.

    Derived from item, rater and question (not drawn and stored), so opening the page writes
    nothing, every reload shows the same order, and position bias can be measured later."""
    digest = hashlib.sha256(f"{item_pk}:{rater_pk}:{question_pk}".encode()).digest()
    return ["B", "A"] if digest[0] & 1 else ["A", "B"]


def pairwise_orders(assignment: Assignment, questions=None) -> dict:
    """Every pairwise question of the assignment's item (or of `questions`, already read: no
    query): its display order for the rater (the one recorded on the assignment when claims
    still stored one)."""
    if questions is not None:
        questions = [q.pk for q in questions if q.kind == QuestionKind.PAIRWISE]
    else:
        questions = (
            assignment.item.questions.filter(kind=QuestionKind.PAIRWISE)
            .order_by("pk")  # not the model ordering, which joins item and project
            .values_list("pk", flat=True)
        )
    return {
        str(pk): assignment.pairwise_orders.get(str(pk))
        or pairwise_order(item_pk=assignment.item_id, rater_pk=assignment.rater_id, question_pk=pk)
        for pk in questions
    }


def active_assignment(*, rater, item) -> Assignment | None:
    """The rater's live claim on `item` (its lease renewed by `lease_renew`), or None."""
    now = timezone.now()
    assignment = live_claim(rater_id=rater.pk, item_id=item.pk, now=now)
    if assignment is not None:
        assignment.item = item  # the caller's item (with its project): no second fetch
        lease_renew(assignment, item.project, now)
    return assignment


def lease_renew(assignment: Assignment, project: Project, now) -> None:
    """Renew a live claim's lease once less than half of it is left, not on every request: an
    autosave every few seconds then costs no extra write."""
    if assignment.lease_expires_at - now < timedelta(minutes=project.lease_minutes) / 2:
        assignment.lease_expires_at = _lease_until(project, now)
        assignment.save(update_fields=["lease_expires_at"])


def submitted_assignment(*, rater, item) -> Assignment | None:
    """The rater's submitted assignment on `item` (what they see when they come back to it)."""
    return (
        Assignment.objects.filter(rater=rater, item=item, status=AssignmentStatus.SUBMITTED)
        .select_related("batch")
        .order_by("-submitted_at", "-id")
        .first()
    )
