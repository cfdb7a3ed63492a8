"""Views read request data through forms: a value that does not parse is a clear message or is
ignored as the page says, never a 500 (tests/test_architecture.py keeps hand reads out)."""

import pytest
from django.urls import reverse

from reviews.models import AssignmentStatus, ItemStatus, Role
from reviews.services.assignment.queue import assignment_claim_next
from tests.factories import member

pytestmark = pytest.mark.django_db


def test_a_skip_reads_its_reason_and_an_empty_one_is_refused(client, project, review_item):
    item = review_item(project)
    rater = member(project, Role.RATER, username="rita")
    assignment = assignment_claim_next(rater=rater, project=project)
    client.force_login(rater)
    url = reverse("review_skip", args=[project.slug, item.pk])
    refused = client.post(url, {"reason": "   "}, follow=True).content.decode()
    assert "reason" in refused.lower()
    assignment.refresh_from_db()
    assert assignment.status == AssignmentStatus.ACTIVE
    client.post(url, {"reason": "the scan is unreadable"})
    assignment.refresh_from_db()
    assert (assignment.status, assignment.skip_reason) == (
        AssignmentStatus.SKIPPED,
        "the scan is unreadable",
    )


@pytest.mark.parametrize("revise", ["1", "true", "0", "maybe", ""])
def test_the_review_screens_revise_switch_parses(client, project, review_item, rate, revise):
    item = review_item(project, external_id="case-1")
    rater = member(project, Role.RATER, username="rita")
    rate(rater, item, {"$.total": "1,200.00"})
    member(project, Role.RATER, username="other")  # the item stays open: others still rate
    client.force_login(rater)
    url = reverse("review_item", args=[project.slug, item.pk])
    page = client.get(url, {"revise": revise})
    assert page.status_code == 200
    revising = page.context["mode"] == "revise"
    open_to_rater = item.status == ItemStatus.OPEN
    assert revising == (revise == "1" and open_to_rater)


@pytest.mark.parametrize("after", ["garbage", "x" * 500, "2026-01-01T00:00:00+00:00~abc"])
def test_a_work_queue_cursor_that_does_not_parse_starts_from_the_beginning(
    client, project, review_item, after
):
    items = [review_item(project, external_id=f"case-{n}") for n in range(2)]
    project.items.filter(pk__in=[i.pk for i in items]).update(status=ItemStatus.ADJUDICATION)
    client.force_login(member(project, Role.ADJUDICATOR, username="ada"))
    page = client.get(reverse("adjudication_queue", args=[project.slug]), {"after": after})
    assert page.status_code == 200
    assert [row.external_id for row in page.context["page"].rows] == ["case-0", "case-1"]
