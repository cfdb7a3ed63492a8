"""Gold items in the pull queue: the share mixed into claims, blindness (a gold item's review
page is any item's page), and gold answers scored but never resolved."""

import difflib
import random
import re

import pytest
from django.urls import reverse

from reviews.models import (
    Assignment,
    EventKind,
    ItemStatus,
    QuestionStatus,
    Resolution,
    Role,
)
from reviews.selectors import answers_for_adjudication
from reviews.services.approval.approve import approval_record
from reviews.services.assignment.queue import assignment_claim_next, assignment_skip
from reviews.services.rating.quality import gold_mark, rater_accuracy
from tests.factories import PASSWORD, member
from tests.reviews.conftest import TOTAL

pytestmark = pytest.mark.django_db


class Draws(random.Random):
    """A seeded rng that remembers what `random()` returned (the gold-or-not draws)."""

    def __init__(self, seed):
        super().__init__(seed)
        self.draws = []

    def random(self):
        self.draws.append(super().random())
        return self.draws[-1]

    def getrandbits(self, k):  # keeps `choice` off `random()`: only gold-or-not draws recorded
        return super().getrandbits(k)


def test_claims_are_gold_with_the_projects_share(gold_project, make_gold, review_item):
    gold = make_gold(15)
    for _ in range(40):
        review_item(gold_project, TOTAL)
    gold_project.gold_share = 0.3
    gold_project.save()
    gus, rng = member(gold_project, Role.RATER, username="gus"), Draws(16)
    served = []
    for _ in range(40):
        assignment = assignment_claim_next(rater=gus, project=gold_project, rng=rng)
        served.append(assignment.gold)
        assignment_skip(rater=gus, assignment=assignment, reason="next")
    # One draw per new claim; gold exactly when the draw falls under the share.
    assert served == [draw < 0.3 for draw in rng.draws]
    assert 0.15 <= sum(served) / len(served) <= 0.45
    gold_items = {a.item_id for a in Assignment.objects.filter(rater=gus, gold=True)}
    assert len(gold_items) == sum(served) and gold_items <= {item.pk for item in gold}
    assert all(
        a.item.status == ItemStatus.OPEN for a in Assignment.objects.filter(rater=gus, gold=False)
    )


def test_share_zero_never_draws_and_empty_queue_stays_empty(gold_project, make_gold, review_item):
    make_gold(2)
    review_item(gold_project, TOTAL)
    gus, rng = member(gold_project, Role.RATER, username="gus"), Draws(1)
    ordinary = assignment_claim_next(rater=gus, project=gold_project, rng=rng)
    assert ordinary.gold is False and rng.draws == []  # share 0: no draw, no gold query
    assignment_skip(rater=gus, assignment=ordinary, reason="next")
    gold_project.gold_share = 1
    gold_project.save()
    # rita rated the gold items: she is never served them.
    mine = assignment_claim_next(rater=make_gold.rita, project=gold_project, rng=rng)
    assert mine.gold is False
    assignment_skip(rater=make_gold.rita, assignment=mine, reason="next")
    gwen = member(gold_project, Role.RATER, username="gwen")
    first = assignment_claim_next(rater=gwen, project=gold_project, rng=rng)
    assert first.gold is True
    assignment_skip(rater=gwen, assignment=first, reason="next")
    second = assignment_claim_next(rater=gwen, project=gold_project, rng=rng)
    assert second.gold is True and second.item_id != first.item_id  # never the same twice
    assignment_skip(rater=gwen, assignment=second, reason="next")
    assert (
        assignment_claim_next(rater=gwen, project=gold_project, rng=rng).gold is False
    )  # gold used up
    # gwen holds the only ordinary item: a new rater's queue is empty, gold items or not.
    assert (
        assignment_claim_next(rater=member(gold_project, Role.RATER), project=gold_project) is None
    )


def _normalised(html: str, *names: str) -> str:
    for name in names:
        html = html.replace(name, "NAME")
    html = re.sub(r'(csrfmiddlewaretoken" value=|X-CSRFToken": )"[^"]+"', r"\1T", html)
    return re.sub(r"\d+", "0", html)


def test_a_gold_item_looks_like_any_other_item(client, gold_project, review_item, rate):
    """Same URL shape, same page: only ids, names and tokens differ from an ordinary item."""
    rita = member(gold_project, Role.RATER, username="rita")
    gold = review_item(gold_project, TOTAL, external_id="case-gold")
    rate(rita, gold, {"$.total": "1290"})
    approval_record(
        actor=member(gold_project, Role.APPROVER), item=gold, password=PASSWORD, confirmed=True
    )
    gold_mark(actor=None, item=gold)
    plain = review_item(gold_project, TOTAL, external_id="case-open")
    pages = {}
    for name, share in (("gus", 1.0), ("gwe", 0.0)):
        gold_project.gold_share = share
        gold_project.save()
        client.force_login(member(gold_project, Role.RATER, username=name))
        response = client.post(reverse("review_next", args=[gold_project.slug]))
        assert re.fullmatch(rf"/p/{gold_project.slug}/items/\d+/review/", response.url)
        pages[name] = client.get(response.url).content.decode()
    assert "case-gold" in pages["gus"] and "case-open" in pages["gwe"]
    gold_page = _normalised(pages["gus"], "case-gold", "gus")
    open_page = _normalised(pages["gwe"], "case-open", "gwe")
    diff = "\n".join(difflib.unified_diff(open_page.splitlines(), gold_page.splitlines()))
    assert gold_page == open_page, diff
    assert "gold" not in pages["gus"].replace("case-gold", "").lower()
    assert plain.status == ItemStatus.OPEN and gold.questions.get().status == "resolved"


def test_the_api_tells_a_rater_nothing_of_the_items_they_are_served(
    client, gold_project, make_gold, review_item
):
    """An item's status would give a gold item away (resolved, ground truth, while an item
    being rated is open): the API's item status is for adjudicators, approvers and admins."""
    from tests.helpers import bearer

    (gold,) = make_gold(1)
    plain = review_item(gold_project, TOTAL)
    gus = member(gold_project, Role.RATER, username="gus")
    headers = bearer(gus)
    for share, item in ((1.0, gold), (0.0, plain)):
        gold_project.gold_share = share
        gold_project.save()
        served = assignment_claim_next(rater=gus, project=gold_project)
        assert served.item_id == item.pk and served.gold == (item == gold)
        url = f"/api/projects/{gold_project.slug}/items/{item.external_id}"
        response = client.get(url, headers=headers)
        assert response.status_code == 403, response.content
        assert "resolved" not in response.content.decode()
        assignment_skip(rater=gus, assignment=served, reason="next")


def test_gold_is_never_served_to_a_rater_who_oversees_the_project(
    client, gold_project, make_gold, review_item
):
    """An adjudicator (approver, admin) who also rates reads a gold item's page once served (it
    is not open): its resolutions and ground truth, the known answer their check is scored on."""
    from reviews.services.assignment.batches import batch_create

    make_gold(3)
    for _ in range(4):
        review_item(gold_project, TOTAL)
    gold_project.gold_share = 1.0
    gold_project.save()
    ada = member(gold_project, Role.RATER, Role.ADJUDICATOR, username="ada")
    served = assignment_claim_next(rater=ada, project=gold_project)
    assert served.gold is False
    assignment_skip(rater=ada, assignment=served, reason="next")
    batch = batch_create(actor=None, project=gold_project, name="b", raters=[ada],
                         selection="count", count=2)  # fmt: skip
    assert batch.assignments.count() == 2 and not batch.assignments.filter(gold=True).exists()
    gus = member(gold_project, Role.RATER, username="gus")  # a rater only: gold as before
    assert assignment_claim_next(rater=gus, project=gold_project).gold is True


def test_gold_answers_are_scored_never_resolved(client, gold_project, make_gold, review_item):
    (gold,) = make_gold(1)
    review_item(gold_project, TOTAL)
    gold_project.gold_share = 1
    gold_project.save()
    question = gold.questions.get()
    resolutions = list(Resolution.objects.filter(question=question).values_list("pk", flat=True))
    gus = member(gold_project, Role.RATER, username="gus")
    client.force_login(gus)
    assert client.post(reverse("review_next", args=[gold_project.slug])).url.endswith(
        f"/items/{gold.pk}/review/"
    )
    save = reverse("answer_save", args=[gold_project.slug, gold.pk, question.pk])
    assert (
        client.post(save, {"choice": "value", "value": "1200", "expected_seq": 0}).status_code
        == 200
    )
    client.post(reverse("review_submit", args=[gold_project.slug, gold.pk]))
    page = client.get(reverse("review_item", args=[gold_project.slug, gold.pk])).content.decode()
    assert "you can revise your answers" in page  # as while other raters are still working

    gold.refresh_from_db()
    question.refresh_from_db()
    assert (gold.status, question.status) == (ItemStatus.RESOLVED, QuestionStatus.RESOLVED)
    assert list(Resolution.objects.filter(question=question).values_list("pk", flat=True)) == (
        resolutions
    )
    assert not gold.events.filter(kind=EventKind.NEEDS_ADJUDICATION).exists()
    assert gold.events.filter(kind=EventKind.SUBMITTED, data__gold=True).count() == 1
    panels = answers_for_adjudication(item=gold, show_names=True)
    assert [view.rater_label for view in panels[question.pk]] == ["rita"]
    by_name = {q.rater: q for q in rater_accuracy(gold_project)}
    assert (by_name["gus"].gold_n, by_name["gus"].gold_accuracy) == (1, 0.0)  # 1200 ≠ 1290
    # A revision after submitting is taken (as on an unsettled item); the latest answer counts.
    revised = client.post(save, {"choice": "value", "value": "1,290", "expected_seq": 1})
    assert revised.status_code == 200
    assert {q.rater: q.gold_accuracy for q in rater_accuracy(gold_project)}["gus"] == 1.0
    assert list(Resolution.objects.filter(question=question).values_list("pk", flat=True)) == (
        resolutions
    )


def test_gold_notes_stay_out_of_the_exported_ground_truth(gold_project, rate, tmp_path):
    import shutil
    from datetime import timedelta
    from pathlib import Path

    from django.utils import timezone

    from reviews.models import Decision
    from reviews.reports.exports import approved_items, review_document
    from reviews.services.imports.pipeline import file_import
    from reviews.services.rating.answers import AnswerInput
    from reviews.services.rating.resolution import adjudication_record

    examples = Path(__file__).parents[1] / "data" / "examples"
    for name in ("statement-0912.review.json", "statement-0912.pdf"):
        shutil.copy(examples / name, tmp_path / name)
    file_import(actor=None, project=gold_project, path=tmp_path / "statement-0912.review.json")
    item = gold_project.items.get()
    paths = list(item.questions.values_list("key", flat=True))

    def answers(value, note):
        return {path: AnswerInput(Decision.SET, value, note=note) for path in paths}

    rate(member(gold_project, Role.RATER, username="rita"), item, answers("1", "RITA-NOTE"))
    approver = member(gold_project, Role.APPROVER)
    approval_record(actor=approver, item=item, password=PASSWORD, confirmed=True)
    gold_mark(actor=None, item=item)
    now, gus = timezone.now(), member(gold_project, Role.RATER, username="gus")
    served = Assignment.objects.create(
        item=item, rater=gus, gold=True, opened_at=now, lease_expires_at=now + timedelta(hours=1)
    )
    rate(gus, item, answers("2", "GOLD-NOTE"), assignment=served)
    # A correction and a new approval after the gold check: the notes are read again.
    adjudication_record(
        actor=member(gold_project, Role.ADJUDICATOR),
        question=item.questions.get(key=paths[0]),
        decision=Decision.SET,
        value="3",
        reason="as printed",
    )
    approval_record(
        actor=approver, item=item, password=PASSWORD, confirmed=True, correction_reason="typo"
    )
    (entry,) = approved_items(gold_project)
    exported = review_document(entry).model_dump_json()
    assert "RITA-NOTE" in exported and "GOLD-NOTE" not in exported
