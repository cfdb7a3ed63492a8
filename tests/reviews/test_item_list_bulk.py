"""The item list's filters (status, split, slice, label, assignee, text), kept in the URL, and
its bulk actions on ticked rows or on every matching item: re-open, assign, add to a batch,
send to humans. Each filter's rows are the ORM's; each action goes through its form and one
service, and a refusal changes nothing."""

import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.urls import reverse

from judging.models import Criterion, ItemSplit, Split, SplitDraw
from reviews.models import (
    Assignment,
    AssignmentBatch,
    AssignmentStatus,
    Decision,
    Event,
    ItemSlice,
    ItemStatus,
    Question,
    QuestionReason,
    QuestionStatus,
    Role,
    Slice,
)
from reviews.selectors_pages import ItemFilters, items_chosen, items_page
from reviews.services.rating.answers import AnswerInput
from tests.factories import ItemFactory, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def listed(project, review_item, rate):
    """Eight items: two labelled `good` by two raters (resolved), one `bad`, five open; a
    slice, a split and an assignee on some of them."""
    admin = member(project, Role.ADMIN, username="boss")
    raters = [member(project, Role.RATER, username=f"lr{n}") for n in (1, 2)]
    items = []
    for n, label in enumerate(["good", "good", "bad"]):
        item = review_item(project, {}, rows={}, criteria={"tone": ["good", "bad"]},
                           external_id=f"rated-{n}")  # fmt: skip
        for rater in raters:
            rate(rater, item, {"tone": AnswerInput(Decision.LABEL, label)})
        item.refresh_from_db()
        items.append(item)
    items += [ItemFactory(project=project, external_id=f"open-{n}", title=f"Receipt {n}")
              for n in range(5)]  # fmt: skip
    urgent = Slice.objects.create(project=project, name="urgent")
    for item in items[1:4]:
        ItemSlice.objects.create(item=item, slice=urgent)
    draw = SplitDraw.objects.create(project=project, seed=1, held_out_fraction=0.5)
    for item in items[::2]:
        ItemSplit.objects.create(item=item, draw=draw, split=Split.HELD_OUT)
    Assignment.objects.create(item=items[4], rater=raters[0], status=AssignmentStatus.ASSIGNED)
    return admin, raters, items, urgent


def _ids(project, **filters):
    return [
        row.external_id for row in items_page(project=project, filters=ItemFilters(**filters)).rows
    ]


def test_each_filter_lists_what_the_orm_would(project, listed):
    _, raters, items, urgent = listed
    assert [i.status for i in items[:3]] == [ItemStatus.RESOLVED] * 3
    assert _ids(project, label="good") == ["rated-0", "rated-1"]
    assert _ids(project, label="bad") == ["rated-2"]
    assert _ids(project, slice_id=urgent.pk) == ["rated-1", "rated-2", "open-0"]
    assert _ids(project, assignee_id=raters[0].pk) == ["rated-0", "rated-1", "rated-2", "open-1"]
    held_out = [i.external_id for i in items[::2]]
    assert _ids(project, extra=(("split", "held_out"),)) == held_out
    assert _ids(project, query="receipt 3") == ["open-3"]  # the title, case-insensitive
    both = _ids(project, label="good", slice_id=urgent.pk, extra=(("split", "held_out"),))
    assert both == []
    assert _ids(project, label="good", slice_id=urgent.pk) == ["rated-1"]


def test_a_newer_resolution_replaces_the_label(project, listed, rate):
    _, raters, items, _ = listed
    question = items[0].questions.get(key="tone")
    question.resolutions.create(decision=Decision.LABEL, value="bad", method="adjudicated")
    assert _ids(project, label="good") == ["rated-1"]
    assert "rated-0" in _ids(project, label="bad")


def test_the_page_keeps_its_filters_in_the_url(client, project, listed):
    admin, _, _, urgent = listed
    client.force_login(admin)
    url = reverse("item_list", args=[project.slug])
    page = client.get(url, {"slice": urgent.pk, "split": "held_out", "status": "", "q": ""})
    html = page.content.decode()
    assert re.findall(r'data-item="([^"]+)"', html) == ["rated-2"]  # the slice and the split
    action = re.search(r'<form method="post" action="([^"]+)" id="bulk-form"', html).group(1)
    assert parse_qs(urlsplit(action.replace("&amp;", "&")).query) == {
        "slice": [str(urgent.pk)],
        "split": ["held_out"],
    }
    assert "or all 1 item matching these filters" in html
    nonsense = client.get(url, {"slice": "999999", "split": "nope", "assignee": "x"})
    assert nonsense.status_code == 200  # ignored, never an error page


def test_reopen_the_ticked_items_asks_their_settled_questions_again(client, project, listed):
    admin, _, items, _ = listed
    client.force_login(admin)
    url = reverse("item_bulk", args=[project.slug])
    response = client.post(url, {"action": "reopen", "item": [items[0].pk, items[5].pk]})
    assert response.status_code == 302
    items[0].refresh_from_db()
    question = items[0].questions.get()
    assert (items[0].status, question.status, question.reason) == (
        ItemStatus.OPEN,
        QuestionStatus.OPEN,
        QuestionReason.REOPENED,
    )
    assert items[0].assignments.filter(status=AssignmentStatus.ASSIGNED).count() == 2
    assert Event.objects.filter(item=items[0], kind="reopened").count() == 1
    page = client.get(response["Location"]).content.decode()
    assert "Re-opened 1 item (1 question asked again); 1 item had nothing settled" in page
    assert Question.objects.filter(status=QuestionStatus.OPEN).count() == 1


def test_assign_all_matching_a_filter_and_come_back_to_it(client, project, listed):
    admin, raters, items, urgent = listed
    client.force_login(admin)
    url = reverse("item_bulk", args=[project.slug]) + f"?slice={urgent.pk}"
    response = client.post(url, {"action": "assign", "all": "on", "rater": raters[1].pk})
    assert response["Location"] == reverse("item_list", args=[project.slug]) + f"?slice={urgent.pk}"
    batch = AssignmentBatch.objects.get()
    # Of rated-1, rated-2 (resolved) and open-0: only the open one can take a place.
    assert list(batch.assignments.values_list("item__external_id", "rater")) == [
        ("open-0", raters[1].pk)
    ]
    page = client.get(response["Location"]).content.decode()
    assert "1 item assigned to lr2" in page and "2 items left out" in page


def test_add_to_a_batch_gives_places_to_its_raters(client, project, listed):
    admin, raters, items, _ = listed
    batch = AssignmentBatch.objects.create(project=project, name="March")
    Assignment.objects.create(item=items[3], rater=raters[0], batch=batch,
                              status=AssignmentStatus.ASSIGNED)  # fmt: skip
    client.force_login(admin)
    url = reverse("item_bulk", args=[project.slug])
    client.post(
        url, {"action": "add_to_batch", "batch": batch.pk, "item": [items[5].pk, items[6].pk]}
    )
    assert set(batch.assignments.values_list("item__external_id", flat=True)) == {
        "open-0",
        "open-2",
        "open-3",
    }


def test_send_the_filtered_rows_to_humans(client, project, listed):
    admin, _, items, _ = listed
    Criterion.objects.create(project=project, name="faithful", labels=["pass", "fail"], sha256="x")
    client.force_login(admin)
    url = reverse("item_bulk", args=[project.slug]) + "?split=held_out&status=open"
    client.post(url, {"action": "send_to_humans", "all": "on", "criterion": "faithful"})
    asked = Question.objects.filter(key="faithful").values_list("item__external_id", flat=True)
    assert sorted(asked) == ["open-1", "open-3"]  # held-out and open; not rated-0 or rated-2


@pytest.mark.parametrize(
    ("data", "said"),
    [
        ({"action": "reopen"}, "Tick the items to act on, or all that match."),
        ({"action": "delete", "all": "on"}, "Choose an action."),
        ({"action": "assign", "all": "on"}, "Assign: Rater: This field is required."),
    ],
)
def test_a_refused_action_says_why_and_changes_nothing(client, project, listed, data, said):
    admin, _, _, _ = listed
    client.force_login(admin)
    response = client.post(reverse("item_bulk", args=[project.slug]), data, follow=True)
    assert said in response.content.decode()
    assert not AssignmentBatch.objects.exists()
    assert not Question.objects.filter(status=QuestionStatus.OPEN).exists()


def test_only_admins_act_and_ticked_ids_stay_in_the_project(client, project, listed):
    _, raters, items, _ = listed
    adjudicator = member(project, Role.ADJUDICATOR)
    client.force_login(adjudicator)
    page = client.get(reverse("item_list", args=[project.slug])).content.decode()
    assert "bulk-form" not in page and 'name="item"' not in page
    bulk = reverse("item_bulk", args=[project.slug])
    assert client.post(bulk, {"action": "reopen", "all": "on"}).status_code == 403
    other = ItemFactory()
    chosen = items_chosen(project=project, filters=ItemFilters(), every=False,
                          ticked=[items[0].pk, other.pk])  # fmt: skip
    assert chosen == [items[0].pk]
