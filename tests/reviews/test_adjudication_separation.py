"""Separation of duties at adjudication: whoever rated an item leaves its disputes to another
adjudicator (the service refuses; the item page says why and offers no decide form; "Next item"
passes over it). With the project's separation of duties off, they may decide."""

import pytest
from django.urls import reverse

from reviews.models import Decision, Event, ItemStatus, QuestionStatus, Resolution, Role
from reviews.services.rating.resolution import ResolutionError, adjudication_record
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

TOTAL = {"$.total": ["1,200.00", "1,290.00"]}


@pytest.fixture
def dispute(review_item, rate):
    """An item two raters disagree on; `dual` rated it and adjudicates, `ada` only adjudicates."""
    project = ProjectFactory(overlap=2, resolution_rule="unanimous")
    dual = member(project, Role.RATER, Role.ADJUDICATOR, username="dual")
    other = member(project, Role.RATER, username="other")
    ada = member(project, Role.ADJUDICATOR, username="ada")
    item = review_item(project, TOTAL)
    rate(dual, item, {"$.total": "1200"})
    rate(other, item, {"$.total": "1290"})
    item.refresh_from_db()
    assert item.status == ItemStatus.ADJUDICATION
    return project, item, dual, ada


def _decide(actor, question):
    return adjudication_record(
        actor=actor, question=question, decision=Decision.SET, value="1200", reason="page 3"
    )


def test_a_rater_of_the_item_may_not_decide_its_dispute(dispute):
    project, item, dual, ada = dispute
    question = item.questions.get()
    events = Event.objects.count()
    with pytest.raises(ResolutionError, match="You rated this item"):
        _decide(dual, question)
    question.refresh_from_db()
    assert question.status == QuestionStatus.ADJUDICATION
    assert not Resolution.objects.exists() and Event.objects.count() == events
    _decide(ada, question)  # another adjudicator decides
    assert question.resolutions.get().decided_by == ada


def test_without_separation_of_duties_the_rater_may_decide(dispute):
    project, item, dual, _ = dispute
    project.separation_of_duties = False
    project.save()
    _decide(dual, item.questions.get())
    assert item.questions.get().status == QuestionStatus.RESOLVED


def test_the_item_page_says_why_and_next_passes_over_it(client, dispute, review_item, rate):
    project, item, dual, ada = dispute
    client.force_login(dual)
    page = client.get(reverse("item_detail", args=[project.slug, item.pk])).content.decode()
    assert "You rated this item: another adjudicator decides it" in page
    assert "Save decision" not in page
    posted = client.post(
        reverse("question_adjudicate", args=[project.slug, item.pk, item.questions.get().pk]),
        {"choice": "value", "value": "1200", "reason": "page 3"},
        follow=True,
    )
    assert "You rated this item" in posted.content.decode() and not Resolution.objects.exists()
    # A second dispute dual did not rate: Next item leads there from ada's page, and dual's.
    later = review_item(project, TOTAL)
    rate(member(project, Role.RATER, username="third"), later, {"$.total": "1200"})
    rate(member(project, Role.RATER, username="fourth"), later, {"$.total": "1"})
    client.force_login(ada)
    mine = client.get(reverse("item_detail", args=[project.slug, later.pk])).content.decode()
    assert "data-next-item" in mine  # ada may decide the first one too
    client.force_login(dual)
    theirs = client.get(reverse("item_detail", args=[project.slug, later.pk])).content.decode()
    assert "data-next-item" not in theirs  # the only other waiting item is one dual rated
    assert "Save decision" in theirs


def test_a_refused_decision_is_shown_again_as_typed(client, dispute):
    project, item, _, ada = dispute
    client.force_login(ada)
    question = item.questions.get()
    url = reverse("question_adjudicate", args=[project.slug, item.pk, question.pk])
    typed = {"question": question.pk, "choice": "value", "value": "1,200.00 EUR", "reason": " "}
    page = client.post(url, typed, follow=True).content.decode()
    assert "Not decided: Give a reason for the decision." in page  # beside the form
    assert (
        'value="1,200.00 EUR"' in page
        and 'value="value" aria-label="Type the value" checked' in page
    )
    assert not Resolution.objects.exists()
    again = client.get(reverse("item_detail", args=[project.slug, item.pk])).content.decode()
    assert "Not decided" not in again  # once
