"""Only an adjudicator of the item's project can decide a disputed question, whoever calls the
service (the page checks the role too; the rule lives in the service so every caller gets it)."""

import pytest

from reviews.models import Decision, Event, QuestionStatus, Resolution, Role
from reviews.services.rating.resolution import ResolutionError, adjudication_record
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db


def _stranger(project, role):
    return member(ProjectFactory(), Role.ADJUDICATOR) if role is None else member(project, role)


@pytest.mark.parametrize("role", [Role.RATER, Role.APPROVER, Role.ADMIN, None])
def test_only_an_adjudicator_of_the_project_decides(project, disputed, role):
    events = Event.objects.count()
    with pytest.raises(ResolutionError, match="not an adjudicator"):
        adjudication_record(
            actor=_stranger(project, role),
            question=disputed,
            decision=Decision.SET,
            value="1200",
            reason="page 3",
        )
    disputed.refresh_from_db()
    assert disputed.status == QuestionStatus.ADJUDICATION
    assert not Resolution.objects.exists() and Event.objects.count() == events
