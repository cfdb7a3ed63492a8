"""A pairwise question's display order: derived per rater, never written by opening the page."""

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from reviews.models import Assignment, Question, QuestionKind, Role
from reviews.services.assignment.queue import assignment_claim_next, pairwise_order
from tests.factories import ItemFactory, member


def test_orders_are_stable_and_both_occur():
    orders = [pairwise_order(item_pk=1, rater_pk=r, question_pk=7) for r in range(64)]
    assert {tuple(o) for o in orders} == {("A", "B"), ("B", "A")}
    assert orders == [pairwise_order(item_pk=1, rater_pk=r, question_pk=7) for r in range(64)]


def test_opening_a_pairwise_item_writes_nothing(client, project):
    item = ItemFactory(project=project)
    question = Question.objects.create(
        item=item,
        kind=QuestionKind.PAIRWISE,
        key="preference",
        labels=["A", "B", "tie"],
        options={"A": "first answer", "B": "second answer"},
    )
    rater = member(project, Role.RATER)
    assignment = assignment_claim_next(rater=rater, project=project)
    client.force_login(rater)
    url = reverse("review_item", args=[project.slug, item.pk])
    client.get(url)  # the first visit writes the session
    with CaptureQueriesContext(connection) as queries:
        page = client.get(url).content.decode()
    writes = [q["sql"] for q in queries if q["sql"].startswith(("INSERT", "UPDATE", "DELETE"))]
    assert writes == []
    assert Assignment.objects.get(pk=assignment.pk).pairwise_orders == {}
    first, second = pairwise_order(item_pk=item.pk, rater_pk=rater.pk, question_pk=question.pk)
    answers = {"A": "first answer", "B": "second answer"}
    assert page.index(answers[first]) < page.index(answers[second])
