"""The pages raters and overseers live on run the same SQL whatever the project's size.

Each page is rendered for a project of 10 items and one of 1,000; the query counts must be equal
and equal to the pinned number (a change to a page that adds a query shows up here first).
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from reviews.models import Assignment, AssignmentStatus, Item, Role
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

# Every page starts with session, user and the membership check (3 queries; my_queue has no
# membership check but lists the rater's projects). Then:
# - review_item: the item, the rater's live assignment (its lease is renewed only once half of
#   it is gone: no UPDATE here), pairwise questions still needing a display order, open
#   questions, candidates with sources and documents, the rater's own answers, the evidence
#   documents (7) = 10; the design allows 12;
# - item_list: the total, one page of items with question counts (2) = 5;
# - my_queue: per project the rater's assignment counts and the pool count (2) = 5.
PINNED = {"review_item": 11, "item_list": 5, "my_queue": 5}


@pytest.fixture
def sized(review_item, rate, attach_evidence):
    """sized(n) → (project, reviewed item, rater, adjudicator) for a project of `n` items."""

    def build(n):
        project = ProjectFactory(slug=f"size-{n}")
        item = review_item(
            project,
            {"$.total": ["1,200.00", "1,290.00"], "$.date": ["2024-03-14"]},
            criteria={"tone": ["good", "bad"]},
        )
        attach_evidence(item)
        rater = member(project, Role.RATER, username=f"rater-{n}")
        others = [member(project, Role.RATER, username=f"other-{n}-{k}") for k in range(2)]
        Item.objects.bulk_create(
            Item(project=project, external_id=f"bulk-{k:06d}", title=f"Bulk {k}")
            for k in range(n - 1)
        )
        # Every tenth item is being worked on by someone else; the rater has finished a few.
        lease = timezone.now() + timedelta(minutes=30)
        bulk = Item.objects.filter(project=project, external_id__startswith="bulk-")
        Assignment.objects.bulk_create(
            [
                Assignment(
                    item_id=pk,
                    rater=others[k % 2],
                    status=AssignmentStatus.ACTIVE,
                    lease_expires_at=lease,
                )
                for k, pk in enumerate(bulk.values_list("pk", flat=True)[::10])
            ]
            + [
                Assignment(item_id=pk, rater=rater, status=AssignmentStatus.SUBMITTED)
                for pk in bulk.values_list("pk", flat=True)[:3]
            ]
        )
        rate(rater, item, {"$.total": "1,200.00"}, submit=False)
        rate(others[0], item, {"$.total": "1,290.00"}, submit=False)
        adjudicator = member(project, Role.ADJUDICATOR, username=f"adj-{n}")
        assert Item.objects.filter(project=project).count() == n
        return project, item, rater, adjudicator

    return build


def _count(client, user, url):
    client.force_login(user)
    client.get(url)  # warm: first-visit writes (pairwise display orders, session) are not pinned
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), [q["sql"] for q in queries.captured_queries]


def _counts_at_both_sizes(client, sized, page):
    counts = {}
    for n in (10, 1000):
        project, item, rater, adjudicator = sized(n)
        url, user = {
            "review_item": (reverse("review_item", args=[project.slug, item.pk]), rater),
            "item_list": (reverse("item_list", args=[project.slug]), adjudicator),
            "my_queue": (reverse("my_queue"), rater),
        }[page]
        counts[n] = _count(client, user, url)
    return counts


@pytest.mark.parametrize("page", sorted(PINNED))
def test_query_count_does_not_grow_with_the_project(client, sized, page):
    counts = _counts_at_both_sizes(client, sized, page)
    small, large = counts[10][0], counts[1000][0]
    assert small == large, "\n".join(counts[1000][1])
    assert large == PINNED[page], "\n".join(counts[1000][1])
    assert page != "review_item" or large <= 12  # the design's budget for the review page
