"""Separation of duties for generated references: whoever started the generation or configured
one of its readers (the judge version that read) does not approve what it read; another
approver does. Reviews learns who from the item's `generated` timeline event."""

import pytest

from judging.services.generation.reconcile import ground_truth_generate
from judging.services.judges.configs import JudgeSettings, judge_config_save
from reviews.models import Approval, EventKind, Item, Role
from reviews.services.approval.approve import ApprovalRefused, approval_blockers, approval_record
from tests.factories import PASSWORD, member
from tests.judging.generation_helpers import FIELDS, FIRST, SECOND, reader, statement
from tests.judging.wire_server import WireServer

pytestmark = pytest.mark.django_db

SET_UP = "You set up the generation of this item's reference"


@pytest.fixture
def generated(project, tmp_path, rate):
    """`configurer` made the readers' judge versions, `starter` ran the generation; two
    raters then settled the disputed fields."""
    configurer = member(project, Role.ADMIN, Role.APPROVER, username="configurer")
    starter = member(project, Role.ADMIN, Role.APPROVER, username="starter")
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        for name in ("model-a", "model-b"):
            settings = JudgeSettings(
                provider="openai-compatible", model=name, criterion=None, base_url=srv.url,
                prompt="Read the evidence. {{ instruction }} Fields: {{ fields }}",
            )  # fmt: skip
            judge_config_save(project=project, name=name, settings=settings, actor=configurer)
        ground_truth_generate(
            project=project, paths=[statement(tmp_path)], fields=FIELDS,
            instruction="Extract the statement fields.", readers=["model-a", "model-b"],
            actor=starter,
        )  # fmt: skip
    item = Item.objects.get(project=project)
    for name in ("r1", "r2"):
        rate(
            member(project, Role.RATER, username=name),
            item,
            {"$.total": "798.60", "$.iban": "DE00"},
        )
    item.refresh_from_db()
    return item, configurer, starter


def test_the_generated_event_names_who_configured_each_reader(generated):
    item, configurer, starter = generated
    event = item.events.get(kind=EventKind.GENERATED)
    assert event.actor == starter
    assert {r["configured_by"] for r in event.data["readers"]} == {configurer.pk}


@pytest.mark.parametrize("who", ["configurer", "starter"])
def test_who_set_up_the_generation_cannot_approve_it(generated, who):
    item, configurer, starter = generated
    actor = configurer if who == "configurer" else starter
    assert any(SET_UP in reason for reason in approval_blockers(item, actor))
    with pytest.raises(ApprovalRefused, match=SET_UP):
        approval_record(actor=actor, item=item, password=PASSWORD, confirmed=True)
    assert not Approval.objects.exists()


def test_another_approver_can(project, generated):
    item, *_ = generated
    other = member(project, Role.APPROVER, username="other")
    assert approval_blockers(item, other) == []
    approval_record(actor=other, item=item, password=PASSWORD, confirmed=True)
    assert Approval.objects.get(item=item).approver == other
