"""Batch approval: one password, one signed approval and event per item, rules per item."""

import re

import pytest
from django.urls import reverse

from reviews.models import Approval, Event, Item, ItemStatus, Role
from reviews.reports.exports import files_export
from reviews.reports.verification import verify_path
from reviews.services.approval import signing
from reviews.services.approval.approve import STATEMENT, ApprovalRefused, approval_diff
from reviews.services.approval.batch import approval_batch_record, approval_waiting
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db


@pytest.fixture
def batch(project, review_item, rate):
    """Three resolved items, one the approver rated alone, one without a generated reference."""
    raters = [member(project, Role.RATER, username=f"r{n}") for n in (1, 2)]
    approver = member(project, Role.APPROVER, Role.RATER, username="appy")
    items = [review_item(project, external_id=f"ok-{n}") for n in range(3)]
    for item in items:
        for rater in raters:
            rate(rater, item, {"$.total": "1,200.00"})
    alone = review_item(project, external_id="alone", overlap=1)
    rate(approver, alone, {"$.total": "1,200.00"})
    bare = Item.objects.create(project=project, external_id="bare", status=ItemStatus.RESOLVED)
    return approver, items, alone, bare


def test_the_queue_lists_only_items_with_a_generated_reference(project, batch):
    _, items, alone, bare = batch
    waiting = set(approval_waiting(project).values_list("external_id", flat=True))
    assert waiting == {"ok-0", "ok-1", "ok-2", "alone"}


def test_one_password_signs_each_item_separately_and_refuses_per_item(project, batch, tmp_path):
    approver, items, alone, _ = batch
    result = approval_batch_record(
        actor=approver, items=[*items, alone], password=PASSWORD, confirmed=True
    )
    assert sorted(a.item.external_id for a in result.approved) == ["ok-0", "ok-1", "ok-2"]
    ((refused, reason),) = result.refused
    assert refused == alone and "separation of duties" in reason
    assert len({a.signature for a in result.approved}) == 3
    assert Event.objects.filter(kind="approved", actor=approver).count() == 3
    for name, content in files_export(actor=None, project=project, format="reference").items():
        (tmp_path / name).write_bytes(content)
    verdicts = verify_path(tmp_path, signing.load_or_create_private_key().public_key())
    assert len(verdicts) == 3 and all(v.ok for v in verdicts)


def test_a_wrong_password_approves_nothing(batch):
    approver, items, _, _ = batch
    with pytest.raises(ApprovalRefused, match="password"):
        approval_batch_record(actor=approver, items=items, password="wrong", confirmed=True)
    with pytest.raises(ApprovalRefused, match="Confirm"):
        approval_batch_record(actor=approver, items=items, password=PASSWORD, confirmed=False)
    assert not Approval.objects.exists()


def test_the_pages_preview_then_sign_all_waiting(client, project, batch):
    approver, items, alone, _ = batch
    client.force_login(approver)
    url = reverse("approval_batch", args=[project.slug])
    preview = client.post(url, {"all": "on"})
    text = preview.content.decode()
    assert "Approve 3 of 4 selected items" in text and "separation of duties" in text
    # The signed statement is per item; the page says it is made for each (before it, not after).
    assert f"For each of the 3 items marked ready: {STATEMENT}" in text
    shown = dict(re.findall(r'name="(shown-\d+)" value="(\w+)"', text))
    assert len(shown) == 3  # the fingerprint of each item's rows as the preview showed them
    done = client.post(
        url,
        {"item": [i.pk for i in items], "confirm": "on", "password": PASSWORD, "sign": "on"}
        | shown,
    )
    assert "Approved 3 items" in done.content.decode()
    assert Approval.objects.count() == 3 and not alone.approvals.exists()


def test_the_summary_lists_each_differing_path_with_its_values(client, project, batch):
    """The approver confirms having checked every decision: each one is on the summary, with
    the generated and the resolved value, behind one expand (<details>) per item."""
    approver, items, _, _ = batch
    client.force_login(approver)
    preview = client.post(reverse("approval_batch", args=[project.slug]), {"item": [items[0].pk]})
    text = preview.content.decode()
    row = re.search(
        r'<tr class="batch-differences[^"]*" data-differences="ok-0">(.*?)</details>', text, re.S
    )
    assert row, text
    summary = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row.group(1)))
    assert "1 path differs from the generated reference: show it" in summary
    # Kept rows ($.currency) stay counted, not listed; the added total shows its value.
    assert "$.total — 1,200.00 added unanimous" in summary
    assert "$.currency" not in summary


def test_rows_no_question_asked_about_were_settled_by_the_models(project, batch):
    _, items, _, _ = batch
    (kept,) = [row for row in approval_diff(items[0]) if row.path == "$.currency"]
    assert (kept.change, kept.decided_by) == ("kept", "models agreed")
