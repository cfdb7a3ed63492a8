"""Signed approval: refused loudly and without a trace, or a new signed ground-truth version."""

import base64

import pytest

from reviews.formats.canonical import rows_canonical_bytes, rows_sha256
from reviews.formats.signed import format_approved_at, payload_bytes
from reviews.models import (
    Approval,
    Authority,
    Decision,
    Event,
    ItemStatus,
    Reference,
    Role,
)
from reviews.services.approval import signing
from reviews.services.approval.approve import ApprovalRefused, approval_blockers, approval_record
from reviews.services.rating.resolution import adjudication_record
from tests.factories import PASSWORD, member

pytestmark = pytest.mark.django_db


def _written():
    return (Reference.objects.count(), Approval.objects.count(), Event.objects.count())


@pytest.fixture
def approver(project):
    return member(project, Role.APPROVER, username="appy")


def _refused(item, actor, message, **kwargs):
    item.refresh_from_db()
    before = (_written(), item.status)
    with pytest.raises(ApprovalRefused, match=message):
        approval_record(
            actor=actor, item=item, **{"password": PASSWORD, "confirmed": True, **kwargs}
        )
    item.refresh_from_db()
    assert (_written(), item.status) == before, "a refused approval wrote something"


def test_approval_with_an_open_question_is_refused(
    project, review_item, rate, approval_raters, approver
):
    item = review_item(project)
    rate(approval_raters[0], item, {"$.total": "1200"})  # the second rater has not answered yet
    _refused(item, approver, "still open")


def test_approval_with_a_question_waiting_for_adjudication_is_refused(
    project, review_item, rate, approval_raters, approver
):
    item = review_item(project)
    rate(approval_raters[0], item, {"$.total": "1200"})
    rate(approval_raters[1], item, {"$.total": "1290"})
    _refused(item, approver, "waiting for adjudication")


def test_wrong_password_is_refused(resolved, approver):
    _refused(resolved, approver, "password is not correct", password="not-my-password")


def test_approval_without_confirming_is_refused(resolved, approver):
    _refused(resolved, approver, "Confirm the statement", confirmed=False)


def test_the_sole_rater_cannot_approve_with_separation_of_duties(project, review_item, rate):
    project.overlap = 1
    project.save()
    item = review_item(project)
    solo = member(project, Role.RATER, Role.APPROVER, username="solo")
    rate(solo, item, {"$.total": "1200"})
    assert approval_blockers(item, solo) == [
        "You rated this item: another approver must approve it (separation of duties)."
    ]
    _refused(item, solo, "You rated this item")


def test_without_separation_of_duties_the_sole_rater_may_approve(project, review_item, rate):
    project.overlap = 1
    project.separation_of_duties = False
    project.save()
    item = review_item(project)
    solo = member(project, Role.RATER, Role.APPROVER)
    rate(solo, item, {"$.total": "1200"})
    approval = approval_record(actor=solo, item=item, password=PASSWORD, confirmed=True)
    assert approval.approver == solo


def test_approval_writes_a_new_ground_truth_version_beside_the_generated_one(resolved, approver):
    generated = Reference.objects.get(item=resolved, authority=Authority.GENERATED)
    generated_before = (generated.sha256, generated.rows, generated.version)

    approval = approval_record(actor=approver, item=resolved, password=PASSWORD, confirmed=True)

    truth = approval.reference
    assert truth.authority == Authority.GROUND_TRUTH
    assert truth.version == generated.version + 1
    assert truth.derived_from == generated
    assert truth.supersedes is None
    assert truth.rows == [
        {"path": "$.currency", "expected_value": "EUR"},
        {"path": "$.total", "expected_value": "1,200.00"},
    ]
    generated.refresh_from_db()
    assert (generated.sha256, generated.rows, generated.version) == generated_before
    assert generated.sha256 == rows_sha256(generated.rows)
    resolved.refresh_from_db()
    assert resolved.status == ItemStatus.APPROVED
    assert (approval.sequence, approval.approver, approval.approver_name) == (
        1,
        approver,
        approver.email,
    )
    assert Event.objects.filter(item=resolved, kind="approved", actor=approver).count() == 1


def test_the_signature_verifies_with_the_public_key_and_binds_case_and_rows(
    resolved, approver, project
):
    approval = approval_record(actor=approver, item=resolved, password=PASSWORD, confirmed=True)
    signed = approval.signed
    assert signed == {
        "format": 3,
        "project": project.slug,
        "case_id": resolved.external_id,
        "version": approval.reference.version,
        "supersedes": None,
        "authority": "ground_truth",
        "parent_generated_sha256": approval.reference.derived_from.sha256,
        "approved_by": approval.approver_name,
        "approved_at": format_approved_at(approval.approved_at),
        "citations": [],  # this item has no review file: nothing cited
    }
    message = payload_bytes(signed, approval.reference.rows)
    public = signing.load_public_key(signing.public_key_pem())
    assert approval.algorithm == "ed25519"
    assert approval.key_id == signing.key_id_of(public)
    assert approval.sha256 == approval.reference.sha256 == rows_sha256(approval.reference.rows)
    assert len(base64.b64decode(approval.signature)) == 64
    assert signing.verify(message, approval.signature, public)
    assert not signing.verify(
        rows_canonical_bytes(approval.reference.rows), approval.signature, public
    )
    tampered = [dict(row) for row in approval.reference.rows]
    tampered[1]["expected_value"] = "1,290.00"
    assert not signing.verify(payload_bytes(signed, tampered), approval.signature, public)
    for field, other in [("case_id", "case-9999"), ("version", 7), ("approved_by", "eve")]:
        moved = {**signed, field: other}
        assert not signing.verify(
            payload_bytes(moved, approval.reference.rows), approval.signature, public
        )


def test_an_approved_item_cannot_be_approved_again(resolved, approver, project):
    approval_record(actor=approver, item=resolved, password=PASSWORD, confirmed=True)
    _refused(resolved, member(project, Role.APPROVER), "approved already")


@pytest.fixture
def corrected(resolved, approver, project):
    """Approved once, then an adjudicator corrects $.total: the item waits for re-approval."""
    first = approval_record(actor=approver, item=resolved, password=PASSWORD, confirmed=True)
    adjudication_record(
        actor=member(project, Role.ADJUDICATOR),
        question=resolved.questions.get(),
        decision=Decision.SET,
        value="1,290.00",
        reason="the total is on page 2",
    )
    resolved.refresh_from_db()
    assert resolved.status == ItemStatus.RESOLVED
    return first


def test_a_correction_needs_a_reason(corrected, resolved, approver):
    _refused(resolved, approver, "give a reason")


def test_a_correction_reason_is_bounded(corrected, resolved, approver):
    """It is signed and kept for good: at most 10,000 characters, whoever calls."""
    _refused(resolved, approver, "at most 10,000 characters", correction_reason="x" * 10_001)


def test_a_correction_supersedes_the_previous_ground_truth_which_stays_readable(
    corrected, resolved, approver
):
    old = corrected.reference
    old_rows, old_sha = old.rows, old.sha256
    second = approval_record(
        actor=approver,
        item=resolved,
        password=PASSWORD,
        confirmed=True,
        correction_reason="total misread",
    )
    new = second.reference
    assert second.sequence == 2 and second.correction_reason == "total misread"
    assert new.supersedes == old and new.reason == "total misread"
    assert new.version == old.version + 1
    assert {"path": "$.total", "expected_value": "1,290.00"} in new.rows
    old.refresh_from_db()
    assert (old.rows, old.sha256) == (old_rows, old_sha)
    assert {"path": "$.total", "expected_value": "1,200.00"} in old.rows
    versions = list(
        Reference.objects.filter(item=resolved, authority=Authority.GROUND_TRUTH)
        .order_by("version")
        .values_list("version", flat=True)
    )
    assert versions == [old.version, new.version]
