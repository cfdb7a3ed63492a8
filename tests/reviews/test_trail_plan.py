"""The review page's trail ("item 3 of 9") reads each of the rater's assignments once, even on
statistics taken while the assignments table was empty (a new project's first minutes, before
autovacuum analyzes it): as a join, PostgreSQL then walked every item of the project once per
assignment (reviews/selectors_trail.py)."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from reviews.models import Assignment, AssignmentStatus, Item, Role
from reviews.selectors_trail import _PLACE_SQL, item_trail
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db


def _plan_nodes(plan: dict):
    nodes = [plan]
    while nodes:
        node = nodes.pop()
        nodes.extend(node.get("Plans", []))
        yield node


@pytest.mark.postgres
def test_the_trail_reads_items_by_key_on_stale_statistics():
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL=postgres://…)")
    project, other = ProjectFactory(), ProjectFactory()
    rater = member(project, Role.RATER)
    with connection.cursor() as cursor:  # taken while the rater has nothing yet
        cursor.execute("ANALYZE reviews_assignment")
        cursor.execute("ANALYZE reviews_item")
    items = Item.objects.bulk_create(Item(project=project, external_id=f"x{n}") for n in range(400))
    elsewhere = Item.objects.bulk_create(Item(project=other, external_id=f"y{n}") for n in range(5))
    start = timezone.now() - timedelta(hours=1)
    Assignment.objects.bulk_create(
        Assignment(
            item=item,
            rater=rater,
            status=AssignmentStatus.SUBMITTED,
            claimed_at=start + timedelta(seconds=n),
        )
        for n, item in enumerate([*items[:150], *elsewhere])
    )
    current = Assignment.objects.create(
        item=items[150], rater=rater, status=AssignmentStatus.ACTIVE, claimed_at=timezone.now(),
        lease_expires_at=timezone.now() + timedelta(minutes=10),
    )  # fmt: skip
    params = {
        "rater": rater.pk, "project": project.pk, "id": current.pk,
        "claimed": current.claimed_at, "expired": AssignmentStatus.EXPIRED,
        "skipped": AssignmentStatus.SKIPPED, "active": AssignmentStatus.ACTIVE,
        "submitted": AssignmentStatus.SUBMITTED,
    }  # fmt: skip
    with connection.cursor() as cursor:
        sql = _PLACE_SQL.format(batch="a.batch_id IS NULL")
        cursor.execute(f"EXPLAIN (ANALYZE, FORMAT JSON) {sql}", params)
        plan = cursor.fetchone()[0][0]["Plan"]
    item_rows = sum(
        node["Actual Rows"] * node["Actual Loops"]
        for node in _plan_nodes(plan)
        if node.get("Relation Name") == "reviews_item"
    )
    assert item_rows <= 155  # one look-up per assignment (the old join: 150 x 400)
    trail = item_trail(Assignment.objects.select_related("item").get(pk=current.pk))
    assert (trail.position, trail.previous_item_id, trail.next_item_id) == (
        151,
        items[149].pk,
        None,
    )
