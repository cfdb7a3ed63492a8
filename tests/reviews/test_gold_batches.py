"""Gold items in pre-assigned batches: the project's share mixed into each rater's batch, blind
(at random places, served like any other place), and their answers scored, never resolved."""

import random

import pytest
from django.urls import reverse

from reviews.models import (
    Assignment,
    AssignmentBatch,
    AssignmentStatus,
    Event,
    EventKind,
    Resolution,
    Role,
)
from reviews.services.assignment.batches import batch_create
from reviews.services.assignment.queue import assignment_claim_next, assignment_skip
from reviews.services.rating.quality import rater_accuracy
from tests.factories import member
from tests.reviews.conftest import TOTAL

pytestmark = pytest.mark.django_db


def _batch(project, raters, count, **kwargs):
    return batch_create(
        actor=None, project=project, name="b", raters=raters, selection="count", count=count,
        **kwargs,
    )  # fmt: skip


def _served(rater, project) -> list[Assignment]:
    """Every place the queue serves the rater, in order (each skipped to reach the next)."""
    served = []
    while (place := assignment_claim_next(rater=rater, project=project)) is not None:
        served.append(place)
        assignment_skip(rater=rater, assignment=place, reason="next")
    return served


@pytest.fixture
def two_raters(gold_project):
    return [member(gold_project, Role.RATER, username=name) for name in ("gus", "gwen")]


def test_each_rater_gets_the_share_of_gold_they_never_held(
    gold_project, make_gold, review_item, two_raters
):
    gold = {item.pk for item in make_gold(6)}
    ordinary = {review_item(gold_project, TOTAL).pk for _ in range(8)}
    gold_project.gold_share = 0.2
    gold_project.save()
    batch = _batch(gold_project, [*two_raters, make_gold.rita], 8, rng=random.Random(3))
    # 3, 3 and 2 ordinary places: 0.75 and 0.5 gold round up (half up) to 1 each.
    for rater in two_raters:
        places = Assignment.objects.filter(rater=rater, batch=batch)
        assert places.filter(gold=False).count() in (2, 3)
        [mixed] = places.filter(gold=True)
        assert mixed.item_id in gold and mixed.status == AssignmentStatus.ASSIGNED
    # rita rated every gold item: her 2 places stay ordinary.
    assert not Assignment.objects.filter(rater=make_gold.rita, batch=batch, gold=True).exists()
    assert set(batch.assignments.filter(gold=False).values_list("item_id", flat=True)) == ordinary
    assert batch.selection["gold"] == 2
    assigned = EventKind.ASSIGNED
    lines = Event.objects.filter(item__project=gold_project, kind=assigned, data__batch="b")
    gold_lines = lines.filter(data__how="gold")
    assert set(gold_lines.values_list("item_id", flat=True)) <= gold and gold_lines.count() == 2


def test_gold_places_are_served_at_random_places_in_the_batch(
    gold_project, make_gold, review_item, two_raters
):
    make_gold(10)
    for _ in range(12):
        review_item(gold_project, TOTAL)
    gold_project.gold_share = 0.25
    gold_project.save()
    gus = two_raters[0]
    _batch(gold_project, [gus], 12, rng=random.Random(5))
    served = _served(gus, gold_project)
    flags = [place.gold for place in served]
    assert len(flags) == 16 and sum(flags) == 4  # round(12 * 0.25 / 0.75) = 4
    assert flags != sorted(flags) and flags != sorted(flags, reverse=True)  # not all at one end
    # The same draw again gives the same places (a sample's seed makes the batch repeatable).
    ordered = Assignment.objects.filter(rater=gus).order_by("claimed_at", "id")
    assert [place.gold for place in ordered] == flags


def test_no_gold_without_a_share_or_without_ordinary_places(
    gold_project, make_gold, review_item, two_raters, django_assert_max_num_queries
):
    make_gold(3)
    review_item(gold_project, TOTAL)
    batch = _batch(gold_project, two_raters, 5)
    assert not batch.assignments.filter(gold=True).exists() and "gold" not in batch.selection
    gold_project.gold_share = 1
    gold_project.save()
    # gus got the only ordinary item (overlap 1); gwen has no ordinary place, so no gold either.
    batch = _batch(gold_project, two_raters, 5)
    assert not batch.assignments.exists()
    review_item(gold_project, TOTAL)
    batch = _batch(gold_project, [two_raters[1]], 5)
    assert batch.assignments.filter(gold=True).count() == 3  # share 1: every unseen gold item


def test_a_batch_gold_answer_is_scored_never_resolved(
    client, gold_project, make_gold, review_item, two_raters
):
    [gold] = make_gold(1)
    review_item(gold_project, TOTAL)
    gold_project.gold_share = 0.5
    gold_project.save()
    gus = two_raters[0]
    _batch(gold_project, [gus], 1, rng=random.Random(1))
    resolutions = list(Resolution.objects.values_list("pk", flat=True))
    client.force_login(gus)
    served = client.post(reverse("review_next", args=[gold_project.slug])).url
    if not served.endswith(f"/items/{gold.pk}/review/"):  # the ordinary place came first
        ordinary = Assignment.objects.get(rater=gus, gold=False)
        assignment_skip(rater=gus, assignment=ordinary, reason="next")
        served = client.post(reverse("review_next", args=[gold_project.slug])).url
    assert served.endswith(f"/items/{gold.pk}/review/")
    question = gold.questions.get()
    save = reverse("answer_save", args=[gold_project.slug, gold.pk, question.pk])
    response = client.post(save, {"choice": "value", "value": "1,290", "expected_seq": 0})
    assert response.status_code == 200
    client.post(reverse("review_submit", args=[gold_project.slug, gold.pk]))
    assert Assignment.objects.get(rater=gus, gold=True).status == AssignmentStatus.SUBMITTED
    assert list(Resolution.objects.values_list("pk", flat=True)) == resolutions
    assert {q.rater: (q.gold_n, q.gold_accuracy) for q in rater_accuracy(gold_project)}["gus"] == (
        1,
        1.0,
    )


def test_the_batch_page_says_how_many_gold_checks(client, gold_project, make_gold, review_item):
    make_gold(2)
    for _ in range(4):
        review_item(gold_project, TOTAL)
    gold_project.gold_share = 0.5
    gold_project.save()
    gus = member(gold_project, Role.RATER, username="gus")
    client.force_login(member(gold_project, Role.ADMIN))
    data = {"name": "cal", "raters": [gus.pk], "selection": "count", "count": 4}
    response = client.post(reverse("assignments", args=[gold_project.slug]), data, follow=True)
    assert "Batch cal: 6 assignments created, 2 of them gold checks mixed in blind." in (
        response.content.decode()
    )
    assert "2 gold" in response.content.decode()


def test_a_gold_item_claimed_meanwhile_refuses_the_whole_batch(
    gold_project, make_gold, review_item, two_raters, monkeypatch
):
    """Gold items are not open, so a batch does not lock them: the rater's own claim of one,
    between the batch's choice and its insert, refuses the batch cleanly and writes nothing."""
    from django.core.exceptions import ValidationError

    import reviews.services.assignment.batches as batches

    make_gold(2)
    review_item(gold_project, TOTAL)
    gold_project.gold_share = 0.5
    gold_project.save()
    gus = two_raters[0]
    mix = batches.gold_mixed_into_batch

    def claimed_meanwhile(**kwargs):
        places = mix(**kwargs)
        taken = next(place for place in places if place.gold)
        Assignment.objects.create(item_id=taken.item_id, rater=gus, gold=True)
        return places

    monkeypatch.setattr(batches, "gold_mixed_into_batch", claimed_meanwhile)
    before = (Assignment.objects.count(), gus.assignments.count())
    with pytest.raises(ValidationError, match="nothing was assigned"):
        _batch(gold_project, [gus], 1, rng=random.Random(1))
    assert (Assignment.objects.count(), gus.assignments.count()) == before
    assert not AssignmentBatch.objects.filter(project=gold_project).exists()
