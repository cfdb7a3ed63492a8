"""How workers share a run (judging/services/runs/shared.py), in one process: items are taken
by one worker at a time, and the items of a worker that died (claims older than
RUN_STALE_SECONDS) are taken over, their calls made once. Two real worker processes:
tests/judging/test_run_two_workers.py."""

from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from judging.models import Run, RunClaim, RunStatus, Verdict
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute, run_items
from judging.services.runs.shared import claim_items, claims_create, others_hold
from judging.stub_model import answer
from tests.judging.run_helpers import judge, labelled_project
from tests.judging.wire_server import Say, WireServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def shared_run(project, tmp_path):
    """A run of 10 items that two workers share, started (its claims written)."""
    labelled_project(project, tmp_path, n=10)

    def start(url):
        config = judge(project, url).config
        run = run_create(config=config, split="all", confirm_held_out=True, concurrency=4)
        Run.objects.filter(pk=run.pk).update(workers=2, status=RunStatus.RUNNING)
        run.refresh_from_db()
        claims_create(run, run_items(run).values_list("pk", flat=True))
        return run

    return start


def test_two_workers_never_take_the_same_item(shared_run):
    run = shared_run("http://127.0.0.1:9/v1")
    first, second = claim_items(run, "a", 6), claim_items(run, "b", 6)
    assert (len(first), len(second)) == (6, 4) and not set(first) & set(second)
    assert claim_items(run, "c") == []
    assert others_hold(run, "a") and others_hold(run, "c")


def test_a_dead_workers_items_are_taken_over_and_each_call_made_once(shared_run, settings):
    with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]))) as server:
        run = shared_run(server.url)
        dead = claim_items(run, "dead-worker", 3)
        stale = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS + 1)
        RunClaim.objects.filter(run=run, worker="dead-worker").update(claimed_at=stale)
        run = run_execute(run)
        sent = Counter(r["json"]["messages"][1]["content"][0]["text"] for r in server.requests)
    assert run.status == RunStatus.DONE and run.done == 10
    assert len(sent) == 10 and set(sent.values()) == {1}
    assert set(Verdict.objects.filter(item_id__in=dead).values_list("item_id", flat=True)) == set(
        dead
    )
    assert not RunClaim.objects.filter(run=run).exists()
