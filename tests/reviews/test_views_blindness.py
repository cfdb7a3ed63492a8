"""Blindness is enforced on the server: what a rater's page and answer responses never contain."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from judging.models import Criterion, Judge, Verdict
from reviews.models import Answer, Decision, Role
from reviews.selectors import rater_workspace
from reviews.services.rating.answers import AnswerInput
from tests.factories import member

pytestmark = pytest.mark.django_db

PROVIDERS = ("provider-1", "provider-2")
CONFIDENCES = ("0.71", "0.62")  # as the page formats them (floatformat:2)
OTHER_RATERS_VALUE = "OTHER-RATER-SAYS-4711"
JUDGE_SECRETS = ("judge-vendor-q", "judge-model-x9", "JUDGE-EXPLANATION-SECRET", "JUDGE-RAW-SECRET")


@pytest.fixture
def setup(project, review_item, rate, attach_evidence):
    """Two raters on one item: the other one answered with a distinctive value; a judge spoke."""
    project.overlap = 2
    project.save()
    item = review_item(
        project, {"$.total": ["1,200.00", "1,290.00"]}, criteria={"tone": ["good", "bad"]}
    )
    attach_evidence(item)
    me = member(project, Role.RATER, username="me")
    other = member(project, Role.RATER, username="other")
    rate(other, item, {"$.total": OTHER_RATERS_VALUE}, submit=False)
    rate(me, item, {}, submit=False)
    criterion = Criterion.objects.create(
        project=project, name="tone", labels=["good", "bad"], sha256="0" * 64
    )
    judge = Judge.objects.create(
        project=project,
        provider=JUDGE_SECRETS[0],
        model=JUDGE_SECRETS[1],
        configuration="judge-config-1",
    )
    Verdict.objects.create(
        item=item,
        criterion=criterion,
        judge=judge,
        label="bad",
        explanation=JUDGE_SECRETS[2],
        raw=JUDGE_SECRETS[3],
        confidence=0.93,
    )
    return item, me, other


def _page(client, user, item):
    client.force_login(user)
    response = client.get(reverse("review_item", args=[item.project.slug, item.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_blind_project_page_shows_neither_providers_nor_confidences(client, setup):
    item, me, _ = setup
    page = _page(client, me, item)
    assert "1,290.00" in page  # the candidates themselves are shown
    for secret in PROVIDERS + CONFIDENCES:
        assert secret not in page


def test_open_project_page_shows_providers_and_confidences(client, setup):
    item, me, _ = setup
    item.project.blind = False
    item.project.save()
    page = _page(client, me, item)
    for shown in PROVIDERS + CONFIDENCES:
        assert shown in page


@pytest.mark.parametrize("blind", [True, False])
def test_review_page_never_shows_another_raters_answer_or_the_judges(client, setup, blind):
    item, me, _ = setup
    item.project.blind = blind
    item.project.save()
    page = _page(client, me, item)
    for secret in (OTHER_RATERS_VALUE, *JUDGE_SECRETS, "0.93"):
        assert secret not in page


def test_answer_responses_never_show_another_raters_answer(client, setup):
    item, me, _ = setup
    client.force_login(me)
    question = item.questions.get(key="$.total")
    url = reverse("answer_save", args=[item.project.slug, item.pk, question.pk])
    saved = client.post(url, {"choice": "value", "value": "1,200.00", "expected_seq": "0"})
    stale = client.post(url, {"choice": "omit", "expected_seq": "0"})
    bad = client.post(url, {"choice": "nonsense", "expected_seq": "1"})
    assert [r.status_code for r in (saved, stale, bad)] == [200, 409, 422]
    assert "1,200.00" in stale.content.decode()  # my own newer answer is what comes back
    for response in (saved, stale, bad):
        html = response.content.decode()
        for secret in (OTHER_RATERS_VALUE, *JUDGE_SECRETS, *PROVIDERS):
            assert secret not in html


def test_the_other_rater_sees_their_own_answer(client, setup):
    item, _, other = setup
    assert OTHER_RATERS_VALUE in _page(client, other, item)


def test_rater_workspace_reads_only_the_raters_own_answers(setup):
    item, me, other = setup
    mine_only = item.questions.get(key="tone")
    Answer.objects.create(
        question=mine_only, rater=other, seq=1, decision=Decision.LABEL, value="bad"
    )
    with CaptureQueriesContext(connection) as queries:
        views = rater_workspace(rater=me, item=item, blind=True, pairwise_orders={})
    by_key = {v.question.key: v for v in views}
    assert by_key["$.total"].my_answer is None  # only `other` answered it
    assert by_key["tone"].my_answer is None
    # Written by hand (reviews/selectors_workspace.py): the rater is in the statement's WHERE.
    answer_sql = [q["sql"] for q in queries.captured_queries if "FROM reviews_answer" in q["sql"]]
    assert len(answer_sql) == 1
    assert f"a.rater_id = {me.pk}" in answer_sql[0]  # filtered in the database


def test_rater_workspace_gives_my_latest_answer(setup, rate):
    item, me, _ = setup
    assignment = me.assignments.get()
    rate(me, item, {"$.total": "1,200.00"}, submit=False, assignment=assignment)
    rate(me, item, {"$.total": AnswerInput(Decision.OMIT)}, submit=False, assignment=assignment)
    views = rater_workspace(rater=me, item=item, blind=True, pairwise_orders={})
    total = next(v for v in views if v.question.key == "$.total")
    assert (total.my_answer.rater_id, total.my_answer.seq, total.my_answer.decision) == (
        me.pk,
        2,
        "omit",
    )


def test_rater_workspace_strips_providers_and_confidences_when_blind(setup):
    item, me, _ = setup
    for blind in (True, False):
        views = rater_workspace(rater=me, item=item, blind=blind, pairwise_orders={})
        candidates = [c for v in views for c in v.candidates]
        assert candidates
        assert all((c.providers is None) is blind for c in candidates)
        assert all((c.confidence is None) is blind for c in candidates)
