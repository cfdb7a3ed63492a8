"""Separation of duties at approval: nobody who rated an item (one of several raters too),
adjudicated one of its questions (a decision corrected since included) or imported its generated
reference signs its values as ground truth, on the approve page, in a batch or through the
service; another approver can."""

import re

import pytest
from django.urls import reverse

from reviews.models import Approval, Event, Role
from reviews.services.approval.approve import ApprovalRefused, approval_blockers, approval_record
from reviews.services.approval.batch import approval_batch_record, batch_preview
from reviews.services.rating.resolution import adjudication_record
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db

RATED = "You rated this item: another approver must approve it (separation of duties)."


@pytest.fixture
def co_rated(project, review_item, rate):
    """Two raters agree; `dual`, one of them, is an approver too."""
    item = review_item(project)
    dual = member(project, Role.RATER, Role.APPROVER, username="dual")
    rate(dual, item, {"$.total": "1,200.00"})
    rate(member(project, Role.RATER, username="other"), item, {"$.total": "1,200.00"})
    item.refresh_from_db()
    return item, dual


def _nothing_signed(item):
    assert not Approval.objects.filter(item=item).exists()
    assert not Event.objects.filter(item=item, kind="approved").exists()


def test_one_of_several_raters_cannot_approve_through_the_service(co_rated):
    item, dual = co_rated
    assert approval_blockers(item, dual) == [RATED]
    with pytest.raises(ApprovalRefused, match="You rated this item"):
        approval_record(actor=dual, item=item, password=PASSWORD, confirmed=True)
    _nothing_signed(item)


def test_one_of_several_raters_cannot_approve_in_a_batch(co_rated):
    item, dual = co_rated
    (line,) = batch_preview([item], dual)
    assert line.refused == RATED
    with pytest.raises(ApprovalRefused, match="None of the selected items"):
        approval_batch_record(actor=dual, items=[item], password=PASSWORD, confirmed=True)
    _nothing_signed(item)


def test_one_of_several_raters_cannot_approve_on_the_page(client, co_rated):
    item, dual = co_rated
    client.force_login(dual)
    url = reverse("item_approve", args=[item.project.slug, item.pk])
    page = client.get(url).content.decode()
    assert RATED in page
    shown = re.search(r'name="shown" value="(\w*)"', page)
    data = {"password": PASSWORD, "confirm": "yes", "shown": shown[1] if shown else ""}
    posted = client.post(url, data, follow=True).content.decode()
    assert "You rated this item" in posted
    _nothing_signed(item)


def test_another_approver_can_and_the_setting_off_allows_it(project, co_rated):
    item, dual = co_rated
    project.separation_of_duties = False
    project.save(update_fields=["separation_of_duties"])
    item.refresh_from_db()
    assert approval_blockers(item, dual) == []
    project.separation_of_duties = True
    project.save(update_fields=["separation_of_duties"])
    item.refresh_from_db()
    other = member(project, Role.APPROVER, username="other-approver")
    approval_record(actor=other, item=item, password=PASSWORD, confirmed=True)
    assert Approval.objects.get(item=item).approver == other


def test_an_adjudicator_whose_decision_was_corrected_still_cannot_approve(
    project, review_item, rate
):
    item = review_item(project)
    rate(member(project, Role.RATER, username="r1"), item, {"$.total": "1,200.00"})
    rate(member(project, Role.RATER, username="r2"), item, {"$.total": "1,290.00"})
    first = member(project, Role.ADJUDICATOR, Role.APPROVER, username="first")
    second = member(project, Role.ADJUDICATOR, username="second")
    question = item.questions.get(key="$.total")
    for actor, value in ((first, "1,290.00"), (second, "1,200.00")):
        adjudication_record(
            actor=actor, question=question, decision="set", value=value, reason="page 2"
        )
    item.refresh_from_db()
    with pytest.raises(ApprovalRefused, match="You adjudicated this item"):
        approval_record(actor=first, item=item, password=PASSWORD, confirmed=True)
    _nothing_signed(item)


IMPORTED = (
    "You imported this item's generated reference: another approver must approve it "
    "(separation of duties)."
)


def test_whoever_imported_the_generated_values_cannot_approve_them(project, tmp_path):
    """An admin who is an approver too writes a reference CSV of the values they want, imports
    it (generated) and would sign it: authoring the values is a hand in them, like rating."""
    from reviews.models import Item
    from reviews.services.imports.pipeline import file_import

    author = member(project, Role.ADMIN, Role.APPROVER, username="author")
    path = tmp_path / "mine.csv"
    path.write_text("case_id,path,expected_value\ncase-1,$.total,999.00\n")
    file_import(actor=author, project=project, path=path)
    item = Item.objects.get(project=project, external_id="case-1")
    assert approval_blockers(item, author) == [IMPORTED]
    with pytest.raises(ApprovalRefused, match="You imported this item"):
        approval_record(actor=author, item=item, password=PASSWORD, confirmed=True)
    (line,) = batch_preview([item], author)
    assert line.refused == IMPORTED
    _nothing_signed(item)
    assert approval_blockers(item, member(project, Role.APPROVER, username="another")) == []
