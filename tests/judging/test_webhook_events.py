"""Judging tells the project's webhooks (through reviews' `webhook_event_emit`) when a run ends,
when a run's worker died, and when a judge's release gate changes."""

from datetime import timedelta

import pytest
from django.utils import timezone

from judging.models import Run, RunStatus
from judging.services.dashboard import dashboard_refresh, gate_changes, latest_snapshot
from judging.services.runs.control import run_create, runs_recover
from judging.services.runs.runner import run_execute
from judging.stub_model import answer
from reviews.services.webhooks.deliver import signature_valid
from tests.judging.helpers import small_project
from tests.judging.run_helpers import judge, labelled_project
from tests.judging.wire_server import Say, WireServer
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]))) as srv:
        yield srv


def test_a_finished_run_is_told_to_the_hooks(
    project, tmp_path, server, django_capture_on_commit_callbacks
):
    labelled_project(project, tmp_path, n=4)
    config = judge(project, server.url).config
    with Receiver() as receiver:
        _, secret = receiver.hook(project, events=["run.finished"])
        run = run_create(config=config, split="all", confirm_held_out=True)
        with django_capture_on_commit_callbacks(execute=True):
            run_execute(run)
    [got] = receiver.received
    assert signature_valid(secret, got.body, got.headers["Evalsite-Signature"])
    data = got.document["data"]
    assert (got.document["event"], data["run"], data["status"]) == ("run.finished", run.pk, "done")
    assert (data["planned"], data["done"], data["failed"]) == (4, 4, 0)


def test_a_run_whose_worker_died_is_told_as_interrupted(
    project, tmp_path, server, settings, django_capture_on_commit_callbacks
):
    labelled_project(project, tmp_path, n=2)
    run = run_create(config=judge(project, server.url).config, split="all", confirm_held_out=True)
    long_ago = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS + 5)
    Run.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, heartbeat_at=long_ago)
    with Receiver() as receiver:
        receiver.hook(project, events=["run.interrupted", "run.finished"])
        with django_capture_on_commit_callbacks(execute=True):
            runs_recover()
            runs_recover()  # told once
    [got] = receiver.received
    assert got.document["event"] == "run.interrupted"
    assert (got.document["data"]["run"], got.document["data"]["status"]) == (run.pk, "interrupted")


def test_a_gate_that_changes_is_told_and_one_that_stays_is_not(
    project, tmp_path, django_capture_on_commit_callbacks
):
    with Receiver() as receiver:
        receiver.hook(project, events=["gate.changed"])
        with django_capture_on_commit_callbacks(execute=True):
            small_project(project, tmp_path)  # its first figures: every judge gated anew
        decisions = latest_snapshot(project).payload["decisions"]
        with django_capture_on_commit_callbacks(execute=True):
            dashboard_refresh(project=project)  # nothing moved: nothing sent
    assert decisions and receiver.events() == ["gate.changed"] * len(decisions)
    told = {r.document["data"]["judge"]: r.document["data"] for r in receiver.received}
    for decision in decisions:
        assert told[decision["label"]]["from"] is None
        assert told[decision["label"]]["to"] == decision["decision"]


def test_gate_changes_names_the_judges_that_moved():
    before = [
        {"label": "a", "decision": "GO", "failing_criteria": []},
        {"label": "b", "decision": "HOLD", "failing_criteria": ["tone"]},
    ]
    after = [
        {"label": "a", "decision": "HOLD", "failing_criteria": ["tone"]},
        {"label": "b", "decision": "HOLD", "failing_criteria": ["tone"]},
    ]
    assert gate_changes(before, after) == [
        {"judge": "a", "from": "GO", "to": "HOLD", "failing_criteria": ["tone"]}
    ]
