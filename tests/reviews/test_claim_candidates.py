"""The claim's hand-written candidate query picks what `available_items` would pick.

`available_items` (the ORM) counts the queue and gates gold claims; the claim itself runs
`candidate_locked` (SQL by hand, for speed). Over seeded random projects (items open or not,
with or without their own overlap; every kind of assignment, live and lapsed leases) the two
must name the same first item for every rater, with and without items passed over.
"""

import random
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from reviews.models import Assignment, AssignmentStatus, ItemStatus, Role
from reviews.services.assignment.claim_queries import candidate_locked, item_places, pool_count
from reviews.services.assignment.queue import available_items
from tests.factories import ItemFactory, ProjectFactory, member

pytestmark = pytest.mark.django_db

KINDS = (
    (AssignmentStatus.ASSIGNED, None),
    (AssignmentStatus.ACTIVE, timedelta(minutes=10)),  # live lease
    (AssignmentStatus.ACTIVE, timedelta(minutes=-1)),  # lapsed, not yet marked
    (AssignmentStatus.SUBMITTED, None),
    (AssignmentStatus.SKIPPED, None),
    (AssignmentStatus.EXPIRED, timedelta(minutes=-30)),
)


def _random_project(rng: random.Random, now):
    project = ProjectFactory(overlap=rng.choice((1, 2, 3)))
    raters = [member(project, Role.RATER) for _ in range(4)]
    items = [
        ItemFactory(
            project=project,
            status=rng.choice((ItemStatus.OPEN,) * 4 + (ItemStatus.RESOLVED,)),
            overlap=rng.choice((None, None, 1, 2)),
        )
        for _ in range(12)
    ]
    for item in items:
        # Each rater once per item: at most one holding assignment (the unique constraint).
        for rater in rng.sample(raters, rng.randint(0, len(raters))):
            status, lease = rng.choice(KINDS)
            Assignment.objects.create(
                item=item,
                rater=rater,
                status=status,
                lease_expires_at=now + lease if lease is not None else None,
            )
    return project, raters, [i.pk for i in items]


@pytest.mark.parametrize("seed", range(12))
def test_the_hand_written_candidate_is_the_orms_first_available_item(seed):
    rng, now = random.Random(seed), timezone.now()
    project, raters, item_ids = _random_project(rng, now)
    picked = set()
    for rater in raters:
        for passed_over in ([], rng.sample(item_ids, 3)):
            expected = (
                available_items(rater=rater, project=project, now=now)
                .exclude(pk__in=passed_over)
                .order_by("id")
                .values_list("pk", flat=True)
                .first()
            )
            with transaction.atomic():
                found = candidate_locked(
                    rater=rater, project=project, now=now, passed_over=passed_over
                )
            assert (found[0] if found else None) == expected, (seed, rater.pk, passed_over)
            picked.add(expected)
    assert len(picked - {None}) >= 2  # the scenarios do reach different items


@pytest.mark.parametrize("seed", range(6))
def test_the_hand_written_pool_count_is_the_orms(seed):
    """The review page's trail counts the pool by hand (`pool_count`), up to a bound."""
    rng, now = random.Random(seed), timezone.now()
    project, raters, _ = _random_project(rng, now)
    for rater in raters:
        expected = available_items(rater=rater, project=project, now=now).count()
        for limit in (1, 3, 100):
            found = pool_count(rater_id=rater.pk, project=project, now=now, limit=limit)
            assert found == min(expected, limit), (seed, rater.pk, limit)


@pytest.mark.parametrize("seed", range(3))
def test_an_items_places_as_the_orm_reads_them(seed):
    rng, now = random.Random(seed), timezone.now()
    _, _, item_ids = _random_project(rng, now)
    for pk in item_ids:
        orm = Assignment.objects.filter(item_id=pk).values_list("status", "lease_expires_at")
        assert sorted(item_places(pk), key=repr) == sorted(orm, key=repr)


@pytest.mark.postgres
def test_the_pool_starts_at_the_first_open_item_on_stale_statistics():
    """Statistics taken while every item was open (an import analyzes them), then the first
    items answered: the claim's scan must not walk past the closed ones (claim_queries.py)."""
    from django.db import connection

    from reviews.models import Item
    from reviews.services.assignment.claim_queries import _CANDIDATE_SQL, _pool_params

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    project = ProjectFactory(overlap=1)
    rater = member(project, Role.RATER)
    Item.objects.bulk_create(Item(project=project, external_id=f"x{n}") for n in range(600))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE reviews_item")
    first = Item.objects.filter(project=project).order_by("id").values_list("pk", flat=True)
    Item.objects.filter(pk__in=list(first[:500])).update(status=ItemStatus.RESOLVED)
    params = _pool_params(rater_id=rater.pk, project=project, now=timezone.now())
    sql = _CANDIDATE_SQL.format(passed_over="")
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0][0]["Plan"]
    nodes, scans = [plan], []
    while nodes:  # the scans of the pool's items (alias "item"), wherever the plan has them
        node = nodes.pop()
        nodes.extend(node.get("Plans", []))
        scans += [node] if node.get("Alias") == "item" else []
    assert scans
    for scan in scans:
        assert scan.get("Rows Removed by Filter", 0) < 50, scan.get("Index Name")
