"""Pre-assigned batches: which items and raters, their overlap, the trail, rater progress."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from reviews.models import Assignment, ItemStatus, Role, Slice
from reviews.selectors_queues import queue_summary
from reviews.selectors_trail import item_trail
from reviews.services.assignment.batches import batch_create, rater_progress
from reviews.services.assignment.queue import (
    assignment_claim_next,
    assignment_skip,
    available_items,
)
from tests.builders import places_held, submitted
from tests.factories import ItemFactory, member

pytestmark = pytest.mark.django_db


def test_batch_by_count_takes_the_first_open_items_round_robin(project, items, raters):
    project.overlap = 2
    project.save()
    batch = batch_create(
        actor=None, project=project, name="", raters=raters[:3], selection="count", count=3
    )
    assignments = Assignment.objects.filter(batch=batch)
    assert sorted({a.item_id for a in assignments}) == [i.pk for i in items[:3]]
    per_item = {i.pk: places_held(i) for i in items[:3]}
    assert per_item == dict.fromkeys(per_item, 2)
    per_rater = sorted(assignments.filter(rater=r).count() for r in raters[:3])
    assert per_rater == [2, 2, 2]
    assert batch.name == "Batch of 3"


@pytest.mark.parametrize("selection", ["count", "slice", "sample"])
def test_a_count_past_every_item_takes_them_all(project, items, raters, selection):
    """However large (past the database's 64 bits too), a count is no crash."""
    chosen = Slice.objects.create(project=project, name="a")
    for item in items:
        item.slices.add(chosen)
    batch = batch_create(actor=None, project=project, name="", raters=raters[:1],
                         selection=selection, slice_name="a", count=10**20, seed=1)  # fmt: skip
    assert batch.assignments.count() == len(items)


def test_batch_never_over_assigns_an_item_raters_already_hold(project, raters):
    project.overlap = 2
    project.save()
    only = ItemFactory(project=project)
    assignment_claim_next(rater=raters[0], project=project)
    batch_create(
        actor=None, project=project, name="b", raters=raters[1:], selection="count", count=1
    )
    assert places_held(only) == 2


def test_seeded_sample_is_repeatable(project, raters):
    for n in range(30):
        ItemFactory(project=project, external_id=f"s-{n:02d}")

    def drawn(seed):
        batch = batch_create(
            actor=None,
            project=project,
            name=f"seed {seed}",
            raters=[raters[0]],
            selection="sample",
            count=5,
            seed=seed,
            overlap=1,
        )
        chosen = sorted(batch.assignments.values_list("item_id", flat=True))
        batch.assignments.all().delete()  # free the places for the next draw
        return chosen, batch.selection["seed"]

    first, recorded = drawn(42)
    again, _ = drawn(42)
    other, _ = drawn(43)
    assert recorded == 42 and len(first) == 5
    assert first == again
    assert first != other


def test_a_sample_without_a_seed_records_the_one_it_drew(project, items, raters):
    batch = batch_create(
        actor=None, project=project, name="s", raters=[raters[0]], selection="sample", count=2
    )
    assert isinstance(batch.selection["seed"], int)


def test_batch_by_slice_with_an_overlap_override(project, items, raters):
    tagged = Slice.objects.create(project=project, name="safety-sensitive")
    items[1].slices.add(tagged)
    items[3].slices.add(tagged)
    batch = batch_create(
        actor=None,
        project=project,
        name="calibration",
        raters=raters[:3],
        selection="slice",
        slice_name="safety-sensitive",
        overlap=3,
    )
    assert {a.item_id for a in batch.assignments.all()} == {items[1].pk, items[3].pk}
    for item in (items[1], items[3]):
        item.refresh_from_db()
        assert item.overlap == 3 and places_held(item) == 3
    items[0].refresh_from_db()
    assert items[0].overlap is None


def test_a_batch_with_a_lower_overlap_strands_nothing(project, review_item, rate):
    """#11: overlap 2; rita submits s0; a batch (count 2, overlap 1, raters [raj])."""
    project.overlap = 2
    project.save()
    s0 = review_item(project, {"$.total": ["1", "2"]}, external_id="s0")
    s1 = review_item(project, {"$.total": ["3", "4"]}, external_id="s1")
    rita = member(project, Role.RATER, username="rita")
    raj = member(project, Role.RATER, username="raj")
    claimed = assignment_claim_next(rater=rita, project=project)
    assert claimed.item_id == s0.pk
    rate(rita, s0, {"$.total": "1"}, assignment=claimed)
    batch = batch_create(
        actor=None,
        project=project,
        name="b",
        raters=[raj],
        selection="count",
        count=2,
        overlap=1,
    )
    s0.refresh_from_db()
    s1.refresh_from_db()
    # s0 was assigned under overlap 2: it still needs two answers, and raj holds the second place.
    assert s0.effective_overlap == 2 and s1.effective_overlap == 1
    assert sorted(batch.assignments.values_list("item_id", flat=True)) == [s0.pk, s1.pk]
    assert batch.selection["kept_overlap"] == ["s0"]
    assert queue_summary(rater=raj)[0]["waiting"] == 2  # raj is told both are waiting
    for expected in (s0, s1):
        held = assignment_claim_next(rater=raj, project=project)
        assert held.item_id == expected.pk
        rate(raj, expected, {"$.total": "1"}, assignment=held)
        expected.refresh_from_db()
        assert expected.status != ItemStatus.OPEN  # resolved (or sent to adjudication)
    assert assignment_claim_next(rater=raj, project=project) is None


def test_a_batch_leaves_out_items_none_of_its_raters_can_take(project, items, raters):
    project.overlap = 2
    project.save()
    first = assignment_claim_next(rater=raters[0], project=project)
    skipped = assignment_claim_next(rater=raters[1], project=project)
    assignment_skip(rater=raters[1], assignment=skipped, reason="blurred")
    assert {first.item_id, skipped.item_id} == {items[0].pk}
    batch = batch_create(
        actor=None, project=project, name="b", raters=raters[:2], selection="count", count=2
    )
    # items[0] is held by one and skipped by the other: neither can take its free place.
    chosen = set(batch.assignments.values_list("item_id", flat=True))
    assert chosen == {items[1].pk, items[2].pk}
    assert assignment_claim_next(rater=raters[2], project=project).item_id == items[0].pk


def test_a_batch_overlap_needs_as_many_raters(project, items, raters):
    with pytest.raises(ValidationError, match="needs at least 2 raters"):
        batch_create(
            actor=None,
            project=project,
            name="b",
            raters=[raters[0]],
            selection="count",
            count=1,
            overlap=2,
        )
    assert not Assignment.objects.exists()


def test_the_trail_places_an_item_in_the_raters_batch(project, items, raters, rate):
    project.overlap = 1
    project.save()
    ada = raters[0]
    batch_create(actor=None, project=project, name="B", raters=[ada], selection="count", count=3)
    first = assignment_claim_next(rater=ada, project=project)
    trail = item_trail(first)
    assert (trail.position, trail.total, trail.batch_name) == (1, 3, "B")
    assert (trail.previous_item_id, trail.next_item_id) == (None, None)  # the rest not opened
    rate(ada, first.item, {}, assignment=first)
    second = assignment_claim_next(rater=ada, project=project)
    trail = item_trail(second)
    assert (trail.position, trail.total, trail.previous_item_id) == (2, 3, first.item_id)
    assert item_trail(Assignment.objects.get(pk=first.pk)).next_item_id == second.item_id
    pulled = assignment_claim_next(rater=raters[1], project=project)
    # Outside batches: this rater's items so far, then the ones still waiting for them.
    waiting = available_items(rater=raters[1], project=project).count()
    assert waiting > 0
    trail = item_trail(pulled)
    assert (trail.position, trail.total, trail.total_more) == (1, 1 + waiting, False)
    assert (trail.batch_name, trail.previous_item_id, trail.next_item_id) == ("", None, None)
    rate(raters[1], pulled.item, {}, assignment=pulled)
    after = assignment_claim_next(rater=raters[1], project=project)
    trail = item_trail(after)
    assert (trail.position, trail.total, trail.previous_item_id) == (2, 1 + waiting, pulled.item_id)


def test_the_trail_counts_what_waits_up_to_its_bound(project, items, raters, monkeypatch):
    project.overlap = 1
    project.save()
    pulled = assignment_claim_next(rater=raters[0], project=project)
    waiting = available_items(rater=raters[0], project=project).count()
    assert waiting >= 2
    monkeypatch.setattr("reviews.selectors_trail.TRAIL_COUNT_LIMIT", waiting - 1)
    trail = item_trail(pulled)
    assert (trail.total, trail.total_more) == (1 + waiting - 1, True)  # "Item 1 of N+"
    monkeypatch.setattr("reviews.selectors_trail.TRAIL_COUNT_LIMIT", waiting)
    assert (item_trail(pulled).total, item_trail(pulled).total_more) == (1 + waiting, False)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"selection": "everything"}, "Choose how"),
        ({"selection": "count", "count": 0}, "how many"),
        ({"selection": "slice"}, "Choose a slice"),
        ({"selection": "count", "count": 2, "overlap": 0}, "at least 1"),
    ],
)
def test_batch_refuses_bad_selections(project, items, raters, kwargs, message):
    with pytest.raises(ValidationError, match=message):
        batch_create(actor=None, project=project, name="x", raters=[raters[0]], **kwargs)
    assert not Assignment.objects.exists()


def test_batch_refuses_people_who_are_not_raters(project, items):
    approver = member(project, Role.APPROVER)
    with pytest.raises(ValidationError, match="must be a rater"):
        batch_create(
            actor=None, project=project, name="x", raters=[approver], selection="count", count=1
        )
    assert not Assignment.objects.exists()


def test_rater_progress_counts_each_state_and_the_median_time(project, items, raters):
    project.overlap = 1
    project.save()
    ada, bob = raters[0], raters[1]
    batch_create(actor=None, project=project, name="b", raters=[bob], selection="count", count=1)
    now = timezone.now()
    for minutes in (2, 4, 9):
        done = assignment_claim_next(rater=ada, project=project)
        submitted(done)
        Assignment.objects.filter(pk=done.pk).update(
            opened_at=now - timedelta(minutes=minutes), submitted_at=now
        )
    skipped = assignment_claim_next(rater=ada, project=project)
    assignment_skip(rater=ada, assignment=skipped, reason="blurred")
    progress = {p.rater.username: p for p in rater_progress(project)}
    assert set(progress) == {r.username for r in raters}
    a = progress[ada.username]
    assert (a.assigned, a.in_progress, a.done, a.skips) == (0, 0, 3, 1)
    assert a.median_seconds == pytest.approx(240, abs=1)
    b = progress[bob.username]
    assert (b.assigned, b.in_progress, b.done, b.skips, b.median_seconds) == (1, 0, 0, 0, None)
