"""Gold items and rater quality: known answers, accuracy on gold per week, agreement with the
final resolution, and the project page's alert below the admin's threshold."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from reviews.models import (
    Assignment,
    AssignmentStatus,
    Decision,
    GoldMark,
    RaterQualitySetting,
    Role,
)
from reviews.services.approval.approve import approval_record
from reviews.services.rating.quality import GoldError, gold_mark, rater_accuracy, rater_alerts
from reviews.services.rating.resolution import adjudication_record
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def raters(project):
    return [member(project, Role.RATER, username=name) for name in ("rita", "raj")]


@pytest.fixture
def admin(project):
    return member(project, Role.ADMIN, username="ada")


def disputed_item(project, review_item, rate, raters, rita, raj, **kwargs):
    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]}, **kwargs)
    rate(raters[0], item, {"$.total": rita})
    rate(raters[1], item, {"$.total": raj})
    return item


def settle(project, item, value):
    """An adjudicator sets the disputed total to `value`."""
    adjudication_record(
        actor=member(project, Role.ADJUDICATOR),
        question=item.questions.get(),
        decision=Decision.SET,
        value=value,
        reason="as printed",
    )


def answer_gold(rate, rater, item, total):
    """`rater` answers `item` on a gold assignment (as the queue serves one) and submits."""
    now = timezone.now()
    served = Assignment.objects.create(
        item=item,
        rater=rater,
        gold=True,
        status=AssignmentStatus.ACTIVE,
        opened_at=now,
        lease_expires_at=now + timedelta(hours=1),
    )
    return rate(rater, item, {"$.total": total}, assignment=served)


def test_gold_scores_blind_answers_against_ground_truth(project, review_item, rate, raters, admin):
    item = disputed_item(project, review_item, rate, raters, "1200", "1290")
    settle(project, item, "1,200.00")
    approval_record(
        actor=member(project, Role.APPROVER), item=item, password=PASSWORD, confirmed=True
    )
    mark = gold_mark(actor=admin, item=item)
    assert mark.source == "ground truth v2"
    assert mark.answers["$.total"] == {"decision": "set", "value": "1,200.00"}
    gina, gus = (member(project, Role.RATER, username=name) for name in ("gina", "gus"))
    answer_gold(rate, gina, item, "1200")  # 1200 = 1,200.00 after normalisation
    answer_gold(rate, gus, item, "1290")

    by_name = {q.rater: q for q in rater_accuracy(project)}
    assert (by_name["gina"].gold_n, by_name["gina"].gold_accuracy) == (1, 1.0)
    assert (by_name["gus"].gold_n, by_name["gus"].gold_accuracy) == (1, 0.0)
    (week,) = by_name["gus"].drift
    assert week[1:] == (1, 0.0) and week[0].weekday() == 0
    # The item's own raters made its known answer: their answers are not gold answers, but
    # they count toward agreement with the resolution (gold answers do not).
    assert (by_name["rita"].gold_n, by_name["rita"].resolution_agreement) == (0, 1.0)
    assert (by_name["raj"].gold_n, by_name["raj"].resolution_agreement) == (0, 0.0)
    assert by_name["gus"].resolved_n == 0


def test_unmarked_items_do_not_count_and_unknown_answers_refuse(
    project, review_item, rate, raters, admin
):
    item = disputed_item(project, review_item, rate, raters, "1200", "1290")
    with pytest.raises(GoldError, match=r"no known answer to \$\.total"):
        gold_mark(actor=admin, item=item)
    assert not GoldMark.objects.exists()
    agreeing = disputed_item(project, review_item, rate, raters, "1290", "1,290")
    gold_mark(actor=admin, item=agreeing)  # resolved unanimously: the resolution is known
    gus = member(project, Role.RATER, username="gus")
    answer_gold(rate, gus, agreeing, "1290")
    assert {q.rater: q.gold_n for q in rater_accuracy(project)} == {"gus": 1, "raj": 0, "rita": 0}
    gold_mark(actor=admin, item=agreeing, gold=False)
    assert {q.rater: q.gold_n for q in rater_accuracy(project)} == {"gus": 0, "raj": 0, "rita": 0}


def test_only_the_projects_admins_mark_gold(project, review_item, rate, raters):
    item = disputed_item(project, review_item, rate, raters, "1290", "1290")
    adjudicator = member(project, Role.ADJUDICATOR)
    with pytest.raises(GoldError, match="Only the admins"):
        gold_mark(actor=adjudicator, item=item)
    assert not GoldMark.objects.exists()


def test_alert_below_threshold_on_the_project_page(
    client, project, review_item, rate, raters, admin
):
    gus = member(project, Role.RATER, username="gus")
    for _ in range(3):
        item = disputed_item(project, review_item, rate, raters, "1290", "1290")
        gold_mark(actor=admin, item=item)
        answer_gold(rate, gus, item, "1290")
    # A gold item whose known answer gus gets wrong: adjudicated to rita's value.
    item = disputed_item(project, review_item, rate, raters, "1200", "1290")
    settle(project, item, "1200")
    gold_mark(actor=admin, item=item)
    answer_gold(rate, gus, item, "1290")
    RaterQualitySetting.objects.create(project=project, alert_below=0.8, min_answers=4)
    assert [q.rater for q in rater_alerts(project)] == ["gus"]  # 3 of 4 = 0.75
    RaterQualitySetting.objects.filter(project=project).update(alert_below=0.75)
    assert rater_alerts(project) == []  # at the threshold is not below it

    client.force_login(admin)
    client.post(
        reverse("rater_quality_settings", args=[project.slug]),
        {"alert_below": "0.8", "min_answers": "4"},
    )
    page = client.get(reverse("project_home", args=[project.slug])).content.decode()
    assert "gus is at 0.75 on gold items (n = 4)" in page
    quality = client.get(reverse("rater_quality", args=[project.slug]))
    assert quality.status_code == 200
    assert 'class="rater-alert"' in quality.content.decode()
    client.force_login(raters[0])
    assert (
        "Rater quality:"
        not in client.get(reverse("project_home", args=[project.slug])).content.decode()
    )
    assert client.get(reverse("rater_quality", args=[project.slug])).status_code == 403


def test_alert_threshold_form(client, project, admin):
    url = reverse("rater_quality_settings", args=[project.slug])
    client.force_login(admin)
    client.post(url, {"alert_below": "0.9", "min_answers": "5"})
    setting = RaterQualitySetting.objects.get(project=project)
    assert (setting.alert_below, setting.min_answers) == (0.9, 5)
    response = client.post(url, {"alert_below": "1.5", "min_answers": "5"}, follow=True)
    assert "Alert not saved" in response.content.decode()
    assert RaterQualitySetting.objects.get(project=project).alert_below == 0.9
    client.force_login(member(project, Role.ADJUDICATOR))
    assert client.post(url, {"alert_below": "0.1", "min_answers": "1"}).status_code == 403
    assert client.get(url).status_code == 405


def test_item_page_marks_gold(client, project, review_item, rate, raters, admin):
    resolved = disputed_item(project, review_item, rate, raters, "1290", "1290")
    open_item = review_item(project)
    client.force_login(admin)
    page = client.get(reverse("item_detail", args=[project.slug, resolved.pk])).content.decode()
    assert "Mark as gold" in page
    url = reverse("item_gold", args=[project.slug, resolved.pk])
    page = client.post(url, {"gold": "1"}, follow=True).content.decode()
    assert "is gold (known answer from resolutions)" in page and "Take gold mark back" in page
    refused = client.post(
        reverse("item_gold", args=[project.slug, open_item.pk]), {"gold": "1"}, follow=True
    )
    assert "no known answer to $.total" in refused.content.decode()
    client.post(url, {"gold": "0"})
    assert list(GoldMark.objects.order_by("pk").values_list("item_id", "gold")) == [
        (resolved.pk, True),
        (resolved.pk, False),
    ]
    client.force_login(member(project, Role.ADJUDICATOR))
    assert client.post(url, {"gold": "1"}).status_code == 403
    assert (
        "Mark as gold"
        not in client.get(reverse("item_detail", args=[project.slug, resolved.pk])).content.decode()
    )
    assert GoldMark.objects.count() == 2


def test_gold_marks_are_history(project, review_item, rate, raters):
    from reviews.models import AppendOnlyError

    item = disputed_item(project, review_item, rate, raters, "1290", "1290")
    mark = gold_mark(actor=None, item=item)  # the operator's console
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


def test_admin_actions_refuse_staff_who_do_not_run_the_project(client, project, review_item):
    """Staff given the item permissions, admin of no project: both actions find no item of the
    project to act on (the admin shows them none), no 500."""
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    item = review_item(project)
    staff = UserFactory(is_staff=True)
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="_item"))
    client.force_login(staff)
    for action in ("mark_gold", "unmark_gold"):
        response = client.post(
            reverse("admin:reviews_item_changelist"),
            {"action": action, "_selected_action": [item.pk]},
            follow=True,
        )
        assert response.status_code == 200
        assert project.name not in response.content.decode()
    assert not GoldMark.objects.exists()
