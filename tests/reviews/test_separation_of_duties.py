"""Separation of duties per item: whoever settled an item's disputed values by adjudication does
not also sign them as ground truth, one item or a batch; another approver can."""

import pytest

from reviews.models import Approval, Role
from reviews.services.approval.approve import ApprovalRefused, approval_record
from reviews.services.approval.batch import approval_batch_record
from reviews.services.rating.resolution import adjudication_record
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def adjudicated(project, review_item, rate):
    """Raters disagree; `both` (adjudicator and approver) decides the value."""
    item = review_item(project)
    rate(member(project, Role.RATER, username="r1"), item, {"$.total": "1,200.00"})
    rate(member(project, Role.RATER, username="r2"), item, {"$.total": "1,290.00"})
    both = member(project, Role.ADJUDICATOR, Role.APPROVER, username="both")
    adjudication_record(
        actor=both,
        question=item.questions.get(key="$.total"),
        decision="set",
        value="1,290.00",
        reason="page 2",
    )
    item.refresh_from_db()
    return item, both


def test_the_adjudicator_cannot_approve_what_they_decided(project, adjudicated):
    item, both = adjudicated
    with pytest.raises(ApprovalRefused, match="You adjudicated this item"):
        approval_record(actor=both, item=item, password=PASSWORD, confirmed=True)
    with pytest.raises(ApprovalRefused, match="None of the selected items"):
        approval_batch_record(actor=both, items=[item], password=PASSWORD, confirmed=True)
    assert not Approval.objects.exists()


def test_another_approver_can(project, adjudicated):
    item, _ = adjudicated
    other = member(project, Role.APPROVER)
    approval_record(actor=other, item=item, password=PASSWORD, confirmed=True)
    assert Approval.objects.get(item=item).approver == other


def test_projects_without_separation_of_duties_allow_it(project, adjudicated):
    item, both = adjudicated
    project.separation_of_duties = False
    project.save(update_fields=["separation_of_duties"])
    item.refresh_from_db()
    approval_record(actor=both, item=item, password=PASSWORD, confirmed=True)
    assert Approval.objects.get(item=item).approver == both
