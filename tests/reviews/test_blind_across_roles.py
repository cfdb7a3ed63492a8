"""Blind rating holds per person: someone who rates an item and also adjudicates, approves or
administers the project cannot read the other raters' answers (item page, approve page,
timeline, dashboard item) while the item is still open for raters."""

import pytest
from django.urls import reverse

from reviews.models import ItemStatus, Role
from tests.factories import member

pytestmark = pytest.mark.django_db

SECRET = "9,999.99"


@pytest.fixture
def open_item(project, review_item, rate):
    """Overlap 2: ann has answered SECRET, the second place is still open."""
    item = review_item(project, {"$.total": ["1,200.00", SECRET]})
    rate(member(project, Role.RATER, username="ann"), item, {"$.total": SECRET})
    return item


def _pages(project, item):
    slug = project.slug
    return [
        reverse("item_detail", args=[slug, item.pk]),
        reverse("item_approve", args=[slug, item.pk]),
        reverse("item_timeline", args=[slug, item.pk]),
        reverse("dashboard_item", args=[slug, item.pk]),
    ]


def test_a_rating_overseer_sees_no_other_answers_until_raters_are_done(
    client, project, open_item, rate
):
    both = member(project, Role.RATER, Role.ADMIN, Role.ADJUDICATOR, Role.APPROVER)
    assignment = rate(both, open_item, {}, submit=False)
    client.force_login(both)
    for url in _pages(project, open_item):
        response = client.get(url)
        assert response.status_code == 403, url
        assert SECRET not in response.content.decode(), url
    rate(both, open_item, {"$.total": "1,200.00"}, assignment=assignment)
    open_item.refresh_from_db()
    assert open_item.status == ItemStatus.ADJUDICATION  # raters are done: the page opens
    assert client.get(_pages(project, open_item)[0]).status_code == 200


def test_submitted_but_still_open_stays_hidden(client, project, review_item, rate):
    """With a third place open the rater may still revise, so the answers stay hidden."""
    item = review_item(project, {"$.total": ["1,200.00", SECRET]}, overlap=3)
    rate(member(project, Role.RATER, username="ann"), item, {"$.total": SECRET})
    both = member(project, Role.RATER, Role.ADJUDICATOR)
    rate(both, item, {"$.total": "1,200.00"})
    item.refresh_from_db()
    assert item.status == ItemStatus.OPEN
    client.force_login(both)
    assert client.get(_pages(project, item)[0]).status_code == 403


def test_an_overseer_who_does_not_rate_it_still_sees_it(client, project, open_item):
    client.force_login(member(project, Role.ADMIN, Role.ADJUDICATOR))
    response = client.get(_pages(project, open_item)[0])
    assert response.status_code == 200
