"""Who rates what: claiming within the overlap, leases, skips, what waits in the queue.

Pre-assigned batches are in test_workflow_batches.py."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from reviews.models import (
    Assignment,
    AssignmentStatus,
    Item,
    ItemStatus,
    Role,
)
from reviews.selectors_queues import queue_summary, work_queues
from reviews.services.assignment.batches import batch_create
from reviews.services.assignment.queue import (
    QueueError,
    active_assignment,
    assignment_claim_next,
    assignment_skip,
    leases_expire,
)
from tests.builders import places_held, submitted
from tests.factories import ItemFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def test_an_item_goes_to_as_many_raters_as_its_overlap_and_no_more(project, raters):
    project.overlap = 2
    project.save()
    only = ItemFactory(project=project)
    claims = [assignment_claim_next(rater=r, project=project) for r in raters]
    assert [c.item_id if c else None for c in claims] == [only.pk, only.pk, None, None]
    assert places_held(only) == 2


def test_an_items_own_overlap_overrides_the_projects(project, raters):
    project.overlap = 1
    project.save()
    wide = ItemFactory(project=project, overlap=3)
    claims = [assignment_claim_next(rater=r, project=project) for r in raters]
    assert [c.item_id if c else None for c in claims] == [wide.pk, wide.pk, wide.pk, None]


def test_claiming_again_returns_the_item_in_progress(project, items, raters):
    first = assignment_claim_next(rater=raters[0], project=project)
    again = assignment_claim_next(rater=raters[0], project=project)
    assert again.pk == first.pk
    assert Assignment.objects.filter(rater=raters[0]).count() == 1


def test_a_submitted_item_is_never_offered_to_the_same_rater_again(project, items, raters):
    project.overlap = 2
    project.save()
    first = assignment_claim_next(rater=raters[0], project=project)
    submitted(first)
    following = assignment_claim_next(rater=raters[0], project=project)
    assert following.item_id != first.item_id
    assert Item.objects.get(pk=first.item_id).status == ItemStatus.OPEN  # still needs a rater


def test_a_skipped_item_is_never_offered_to_the_same_rater_again(project, raters):
    only = ItemFactory(project=project)
    assignment = assignment_claim_next(rater=raters[0], project=project)
    assignment_skip(rater=raters[0], assignment=assignment, reason="unreadable scan")
    assert assignment_claim_next(rater=raters[0], project=project) is None
    # ... but its place is free again for someone else.
    assert assignment_claim_next(rater=raters[1], project=project).item_id == only.pk


def test_skip_needs_a_reason(project, items, raters):
    assignment = assignment_claim_next(rater=raters[0], project=project)
    with pytest.raises(QueueError, match="why"):
        assignment_skip(rater=raters[0], assignment=assignment, reason="   ")
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE and not assignment.skip_reason


def test_a_skip_reason_past_its_limit_is_refused(project, items, raters):
    """The reason goes into the item's timeline, which is history: bounded like a note."""
    assignment = assignment_claim_next(rater=raters[0], project=project)
    with pytest.raises(QueueError, match="at most 10,000 characters"):
        assignment_skip(rater=raters[0], assignment=assignment, reason="x" * 10_001)
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE and not assignment.skip_reason
    assignment_skip(rater=raters[0], assignment=assignment, reason="x" * 10_000)


def test_only_the_holder_can_skip(project, items, raters):
    assignment = assignment_claim_next(rater=raters[0], project=project)
    with pytest.raises(QueueError):
        assignment_skip(rater=raters[1], assignment=assignment, reason="not mine")
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE


def test_an_expired_lease_returns_the_item_to_the_pool(project, raters):
    project.overlap = 1
    project.save()
    only = ItemFactory(project=project)
    held = assignment_claim_next(rater=raters[0], project=project)
    assert assignment_claim_next(rater=raters[1], project=project) is None
    later = timezone.now() + timedelta(minutes=project.lease_minutes + 1)
    assert leases_expire(project=project, now=later) == 1
    held.refresh_from_db()
    assert held.status == AssignmentStatus.EXPIRED
    assert active_assignment(rater=raters[0], item=only) is None
    assert assignment_claim_next(rater=raters[1], project=project).item_id == only.pk


def test_claim_next_expires_overdue_leases_itself(project, raters):
    project.overlap = 1
    project.save()
    only = ItemFactory(project=project)
    held = assignment_claim_next(rater=raters[0], project=project)
    Assignment.objects.filter(pk=held.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert assignment_claim_next(rater=raters[1], project=project).item_id == only.pk
    held.refresh_from_db()
    assert held.status == AssignmentStatus.EXPIRED


def test_an_open_page_renews_the_lease(project, items, raters):
    held = assignment_claim_next(rater=raters[0], project=project)
    Assignment.objects.filter(pk=held.pk).update(
        lease_expires_at=timezone.now() + timedelta(minutes=1)
    )
    renewed = active_assignment(rater=raters[0], item=held.item)
    assert renewed.lease_expires_at > timezone.now() + timedelta(minutes=project.lease_minutes - 1)


def test_a_fresh_lease_is_not_rewritten_on_every_request(project, items, raters):
    held = assignment_claim_next(rater=raters[0], project=project)
    again = active_assignment(rater=raters[0], item=held.item)
    assert again.lease_expires_at == held.lease_expires_at  # autosaves cost no extra write


def test_pre_assigned_items_come_before_the_pool(project, items, raters):
    batch_create(
        actor=None,
        project=project,
        name="late ones",
        raters=[raters[0]],
        selection="sample",
        count=1,
        seed=7,
        overlap=1,
    )
    pinned = Assignment.objects.get(rater=raters[0])
    assert pinned.status == AssignmentStatus.ASSIGNED
    claimed = assignment_claim_next(rater=raters[0], project=project)
    assert claimed.pk == pinned.pk and claimed.status == AssignmentStatus.ACTIVE
    assert claimed.opened_at is not None and claimed.lease_expires_at is not None


def test_the_item_in_progress_comes_before_newly_pre_assigned_ones(project, items, raters):
    current = assignment_claim_next(rater=raters[0], project=project)
    batch_create(
        actor=None, project=project, name="more", raters=[raters[0]], selection="count", count=3
    )
    assert assignment_claim_next(rater=raters[0], project=project).pk == current.pk
    assert Assignment.objects.filter(rater=raters[0], status=AssignmentStatus.ACTIVE).count() == 1


def test_pre_assigned_places_count_against_the_overlap(project, raters):
    project.overlap = 2
    project.save()
    only = ItemFactory(project=project)
    batch_create(
        actor=None, project=project, name="pair", raters=raters[:2], selection="count", count=1
    )
    assert assignment_claim_next(rater=raters[2], project=project) is None
    assert places_held(only) == 2


def test_queue_summary_counts_what_waits_for_the_rater(project, items, raters):
    project.overlap = 1
    project.save()
    assignment_claim_next(rater=raters[0], project=project)
    (summary,) = queue_summary(rater=raters[1])
    assert summary["project"] == project
    assert (summary["waiting"], summary["active"], summary["assigned"]) == (4, 0, 0)


def test_a_lapsed_lease_frees_its_place_and_the_item_still_resolves(project, review_item, rate):
    project.overlap = 2
    project.save()
    item = review_item(project)
    first, lapsed, third = (member(project, Role.RATER, username=u) for u in ("a", "b", "c"))
    rate(first, item, {"$.total": "1200"})
    stalled = assignment_claim_next(rater=lapsed, project=project)
    Assignment.objects.filter(pk=stalled.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    taken = assignment_claim_next(rater=third, project=project)
    assert taken.item_id == item.pk
    stalled.refresh_from_db()
    assert stalled.status == AssignmentStatus.EXPIRED
    rate(third, item, {"$.total": "1,200"}, assignment=taken)
    item.refresh_from_db()
    assert item.status == ItemStatus.RESOLVED


def test_the_raters_own_lapsed_claim_is_not_resumed_as_current(project, raters):
    project.overlap = 1
    project.save()
    first, second = ItemFactory(project=project), ItemFactory(project=project)
    held = assignment_claim_next(rater=raters[0], project=project)
    Assignment.objects.filter(pk=held.pk).update(
        lease_expires_at=timezone.now() - timedelta(seconds=1)
    )
    again = assignment_claim_next(rater=raters[0], project=project)
    held.refresh_from_db()
    assert held.status == AssignmentStatus.EXPIRED
    assert again.pk != held.pk and again.status == AssignmentStatus.ACTIVE
    assert {first.pk, second.pk} >= {again.item_id}


def test_queue_summary_counts_a_large_pool_up_to_a_limit(
    client, project, items, raters, monkeypatch
):
    monkeypatch.setattr("reviews.selectors_queues.POOL_COUNT_LIMIT", 3)
    (summary,) = queue_summary(rater=raters[0])
    assert (summary["waiting"], summary["waiting_more"]) == (3, True)
    client.force_login(raters[0])
    assert '<td class="num">3+</td>' in client.get(reverse("my_queue")).content.decode()
    monkeypatch.setattr("reviews.selectors_queues.POOL_COUNT_LIMIT", 5)
    (summary,) = queue_summary(rater=raters[0])
    assert (summary["waiting"], summary["waiting_more"]) == (5, False)


def test_a_candidate_found_full_under_its_lock_is_passed_over(project, raters, monkeypatch):
    """The candidate query's count can be stale by the time the row is locked: the claim
    re-counts under the lock, rolls that try back and takes the next item instead."""
    project.overlap = 1
    project.save()
    full, free = ItemFactory(project=project), ItemFactory(project=project)
    held = assignment_claim_next(rater=raters[0], project=project)
    assert held.item_id == full.pk
    stale = lambda *, rater, project, now=None: Item.objects.filter(project=project)  # noqa: E731
    monkeypatch.setattr("reviews.services.assignment.queue.available_items", stale)
    taken = assignment_claim_next(rater=raters[1], project=project)
    assert taken.item_id == free.pk
    assert list(full.assignments.values_list("rater_id", flat=True)) == [raters[0].pk]
    monkeypatch.setattr(
        "reviews.services.assignment.queue.available_items",
        lambda **kw: Item.objects.filter(pk=full.pk),
    )
    assert assignment_claim_next(rater=raters[2], project=project) is None


def test_my_queue_lists_the_adjudication_and_approval_queues_with_counts(
    client, project, review_item, rate
):
    """An adjudicator and approver who rates nowhere: their queues with what waits in each,
    only the non-empty ones, and never "not a rater"."""
    user = member(project, Role.ADJUDICATOR, Role.APPROVER)
    client.force_login(user)
    page = client.get(reverse("my_queue")).content.decode()
    assert "Nothing waits for adjudication or approval" in page
    assert "not a rater" not in page
    raters = [member(project, Role.RATER, username=f"q{n}") for n in (1, 2)]
    for n in range(3):
        item = review_item(project, external_id=f"split-{n}")
        rate(raters[0], item, {"$.total": "1,200.00"})
        rate(raters[1], item, {"$.total": "1,290.00"})  # disagree: adjudication
    waiting = {queue.kind: queue.waiting for queue in work_queues(user=user)}
    assert waiting == {"adjudication": 3, "approval": 0}
    page = client.get(reverse("my_queue")).content.decode()
    row = re.search(rf'data-queue="adjudication:{project.slug}">(.*?)</tr>', page, re.S)
    assert row and ">3<" in row.group(1)
    assert reverse("adjudication_queue", args=[project.slug]) in row.group(1)
    assert f'data-queue="approval:{project.slug}"' not in page  # empty: not listed


@pytest.mark.parametrize(
    ("roles", "landing"),
    [
        ((Role.RATER,), "my_queue"),
        ((Role.ADJUDICATOR,), "my_queue"),
        ((Role.APPROVER,), "my_queue"),
        ((Role.ADMIN,), "project_list"),
        ((), "project_list"),
    ],
)
def test_a_login_lands_where_the_users_work_is(client, project, roles, landing):
    user = member(project, *roles) if roles else UserFactory()
    client.force_login(user)
    assert client.get(reverse("home"))["Location"] == reverse(landing)
