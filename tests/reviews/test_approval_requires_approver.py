"""Only an approver of the item's project can approve it, whoever calls the service (the pages
check the role too; the rule lives in the service so every caller gets it)."""

import pytest

from reviews.models import Approval, Reference, Role
from reviews.services.approval.approve import ApprovalRefused, approval_record
from reviews.services.approval.batch import approval_batch_record
from tests.factories import PASSWORD, ProjectFactory, member

pytestmark = pytest.mark.django_db


def _counts():
    return Approval.objects.count(), Reference.objects.count()


@pytest.mark.parametrize("role", [Role.RATER, Role.ADJUDICATOR, Role.ADMIN])
def test_a_member_without_the_approver_role_cannot_approve(project, resolved, role):
    before = _counts()
    with pytest.raises(ApprovalRefused, match="not an approver"):
        approval_record(
            actor=member(project, role), item=resolved, password=PASSWORD, confirmed=True
        )
    with pytest.raises(ApprovalRefused):
        approval_batch_record(
            actor=member(project, role), items=[resolved], password=PASSWORD, confirmed=True
        )
    assert _counts() == before


def test_an_approver_of_another_project_cannot_approve(resolved):
    stranger = member(ProjectFactory(), Role.APPROVER)
    before = _counts()
    with pytest.raises(ApprovalRefused, match="not an approver"):
        approval_record(actor=stranger, item=resolved, password=PASSWORD, confirmed=True)
    assert _counts() == before
