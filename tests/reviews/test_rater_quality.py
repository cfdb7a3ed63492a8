"""Gold items and rater quality: known answers, accuracy on gold per week, agreement with the
final resolution, and the project page's alert below the admin's threshold."""

import pytest
from django.urls import reverse

from reviews.models import Decision, GoldMark, RaterQualitySetting, Role
from reviews.services.approval import approve
from reviews.services.rater_quality import GoldError, gold_mark, rater_alerts, rater_quality
from reviews.services.resolution import adjudicate
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def raters(project):
    return [member(project, Role.RATER, username=name) for name in ("rita", "raj")]


def disputed_item(project, review_item, rate, raters, rita, raj, **kwargs):
    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]}, **kwargs)
    rate(raters[0], item, {"$.total": rita})
    rate(raters[1], item, {"$.total": raj})
    return item


def settle(project, item, value):
    """An adjudicator sets the disputed total to `value`."""
    adjudicate(
        actor=member(project, Role.ADJUDICATOR),
        question=item.questions.get(),
        decision=Decision.SET,
        value=value,
        reason="as printed",
    )


def test_gold_from_ground_truth_scores_each_rater(project, review_item, rate, raters):
    item = disputed_item(project, review_item, rate, raters, "1200", "1290")
    settle(project, item, "1,200.00")
    approver = member(project, Role.APPROVER)
    approve(actor=approver, item=item, password=PASSWORD, confirmed=True)
    mark = gold_mark(actor=approver, item=item)
    assert mark.source == "ground truth v2"
    assert mark.answers["$.total"] == {"decision": "set", "value": "1,200.00"}

    by_name = {q.rater: q for q in rater_quality(project)}
    assert (by_name["rita"].gold_n, by_name["rita"].gold_accuracy) == (1, 1.0)  # 1200 = 1,200.00
    assert (by_name["raj"].gold_n, by_name["raj"].gold_accuracy) == (1, 0.0)
    assert by_name["raj"].resolution_agreement == 0.0
    (week,) = by_name["raj"].drift
    assert week[1:] == (1, 0.0) and week[0].weekday() == 0


def test_unmarked_items_do_not_count_and_unknown_answers_refuse(project, review_item, rate, raters):
    item = disputed_item(project, review_item, rate, raters, "1200", "1290")
    with pytest.raises(GoldError, match=r"no known answer to \$\.total"):
        gold_mark(actor=None, item=item)
    assert not GoldMark.objects.exists()
    agreeing = disputed_item(project, review_item, rate, raters, "1290", "1,290")
    gold_mark(actor=None, item=agreeing)  # resolved unanimously: the resolution is known
    assert {q.rater: q.gold_n for q in rater_quality(project)} == {"raj": 1, "rita": 1}
    gold_mark(actor=None, item=agreeing, gold=False)
    assert {q.rater: q.gold_n for q in rater_quality(project)} == {"raj": 0, "rita": 0}


def test_alert_below_threshold_on_the_project_page(client, project, review_item, rate, raters):
    for n in range(3):
        item = disputed_item(project, review_item, rate, raters, "1290", "1290")
        gold_mark(actor=None, item=item)
    # A gold item whose known answer raj gets wrong: adjudicated to rita's value.
    item = disputed_item(project, review_item, rate, raters, "1200", "1290")
    settle(project, item, "1200")
    gold_mark(actor=None, item=item)
    RaterQualitySetting.objects.create(project=project, alert_below=0.8, min_answers=4)
    assert [q.rater for q in rater_alerts(project)] == ["raj"]  # 3 of 4 = 0.75

    admin = member(project, Role.ADMIN)
    client.force_login(admin)
    page = client.get(reverse("project_home", args=[project.slug])).content.decode()
    assert "raj is at 0.75 on gold items (n = 4)" in page
    quality = client.get(reverse("rater_quality", args=[project.slug]))
    assert quality.status_code == 200
    assert 'class="rater-alert"' in quality.content.decode()
    client.force_login(raters[0])
    assert (
        "Rater quality:"
        not in client.get(reverse("project_home", args=[project.slug])).content.decode()
    )
    assert client.get(reverse("rater_quality", args=[project.slug])).status_code == 403


def test_gold_marks_are_history(project, review_item, rate, raters):
    from reviews.models import AppendOnlyError

    item = disputed_item(project, review_item, rate, raters, "1290", "1290")
    mark = gold_mark(actor=None, item=item)
    with pytest.raises(AppendOnlyError):
        mark.save()


def test_admin_action_marks_gold(client, project, review_item, rate, raters):
    from django.contrib.auth import get_user_model

    resolved = disputed_item(project, review_item, rate, raters, "1290", "1290")
    open_item = review_item(project)
    staff = get_user_model().objects.create_superuser("boss", "b@example.com", PASSWORD)
    client.force_login(staff)
    response = client.post(
        reverse("admin:reviews_item_changelist"),
        {"action": "mark_gold", "_selected_action": [resolved.pk, open_item.pk]},
        follow=True,
    )
    text = response.content.decode()
    assert "1 item(s) marked as gold." in text
    assert "no known answer to $.total" in text
    assert list(GoldMark.objects.values_list("item_id", flat=True)) == [resolved.pk]
