"""An approver signs the rows the page showed them, never rows that changed in between.

"I approve these rows": between opening the approve page (or the batch preview) and signing,
another decision (an adjudicator's correction, a re-import of the generated reference) changed
what would be signed. The page's form carries a fingerprint of the diff it showed; signing
checks it under the item's lock and refuses, writing nothing, when it no longer matches.
"""

import re
from collections import defaultdict

import pytest
from django.test import Client
from django.urls import reverse

from reviews.models import Approval, Event, Reference, Role
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db

HIDDEN = re.compile(r'<input type="hidden" name="([\w-]+)" value="([^"]*)"')


def _hidden(response) -> dict[str, list[str]]:
    """The hidden inputs of the page's forms, as the browser would post them."""
    fields = defaultdict(list)
    for name, value in HIDDEN.findall(response.content.decode()):
        fields[name].append(value)
    return dict(fields)


def _resolved(project, review_item, rate, external_id):
    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]}, external_id=external_id)
    for n in (1, 2):
        rate(
            member(project, Role.RATER, username=f"{external_id}-r{n}"),
            item,
            {"$.total": "1,200.00"},
        )
    return item


def _corrected(project, item):
    """An adjudicator decides $.total again, on the item page, while the approver looks."""
    adjudicator = Client()
    adjudicator.force_login(member(project, Role.ADJUDICATOR))
    url = reverse("question_adjudicate", args=[project.slug, item.pk, item.questions.get().pk])
    data = {"choice": "value", "value": "9,999.00", "reason": "behind the approver's back"}
    assert adjudicator.post(url, data).status_code == 302
    assert item.questions.get().resolutions.count() == 2


def _written():
    return (Reference.objects.count(), Approval.objects.count(), Event.objects.count())


def test_the_approve_page_signs_only_the_rows_it_showed(client, project, review_item, rate):
    item = _resolved(project, review_item, rate, "case-1")
    client.force_login(member(project, Role.APPROVER, username="appy"))
    url = reverse("item_approve", args=[project.slug, item.pk])
    form = _hidden(client.get(url))
    _corrected(project, item)
    before = _written()
    refused = client.post(url, {**form, "confirm": "yes", "password": PASSWORD}, follow=True)
    assert "changed since this page showed them" in refused.content.decode()
    assert _written() == before and not item.approvals.exists()
    again = _hidden(client.get(url))  # the page now shows 9,999.00: signing that works
    client.post(url, {**again, "confirm": "yes", "password": PASSWORD})
    assert {"path": "$.total", "expected_value": "9,999.00"} in item.approvals.get().reference.rows


def test_a_form_without_the_fingerprint_signs_nothing(client, project, review_item, rate):
    item = _resolved(project, review_item, rate, "case-1")
    client.force_login(member(project, Role.APPROVER, username="appy"))
    url = reverse("item_approve", args=[project.slug, item.pk])
    page = client.post(url, {"confirm": "yes", "password": PASSWORD}, follow=True)
    assert "Not approved: Diff shown: the page did not say which diff it showed" in (
        page.content.decode()
    )
    assert not item.approvals.exists()


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"shown": "not-a-fingerprint"}, "the page&#x27;s diff fingerprint is not one it made"),
        ({"confirm": "maybe"}, "Select a valid choice. maybe is not one of the available"),
        ({"reason": "x" * 10_001}, "A correction&#x27;s reason takes at most 10,000 characters"),
    ],
)
def test_a_malformed_approval_post_is_refused_by_its_form(
    client, project, review_item, rate, bad, said
):
    """The form validates the post's shape before the service sees it: a clear error on the
    page, the password not tried (no lockout step), nothing written."""
    item = _resolved(project, review_item, rate, "case-1")
    client.force_login(member(project, Role.APPROVER, username="appy"))
    url = reverse("item_approve", args=[project.slug, item.pk])
    form = _hidden(client.get(url))
    before = _written()
    posted = {**form, "confirm": "yes", "password": PASSWORD, **bad}
    page = client.post(url, posted)
    assert page.status_code == 200
    assert "Not approved:" in page.content.decode() and said in page.content.decode()
    assert _written() == before and not item.approvals.exists()


def test_the_batch_signs_only_the_rows_its_preview_showed(client, project, review_item, rate):
    items = [_resolved(project, review_item, rate, f"case-{n}") for n in range(3)]
    client.force_login(member(project, Role.APPROVER, username="appy"))
    url = reverse("approval_batch", args=[project.slug])
    form = _hidden(client.post(url, {"all": "on"}))
    assert len(form["item"]) == 3
    _corrected(project, items[1])
    done = client.post(url, {**form, "confirm": "on", "password": PASSWORD})
    assert "changed since this page showed them" in done.content.decode()
    approved = set(Approval.objects.values_list("item__external_id", flat=True))
    assert approved == {"case-0", "case-2"}
