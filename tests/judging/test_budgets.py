"""Budgets: a run stops before the call that would pass its own budget or its project's monthly
cap, ends `budget_reached`, and resumes with a new budget making only the missing calls."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging.models import Call, ProjectBudget, Run
from judging.services.runs.budgets import BudgetError, budget_set
from judging.services.runs.control import RunError, run_create, run_resume
from judging.services.runs.prices import price_add
from judging.services.runs.runner import run_execute
from reviews.models import ProjectAction, ProjectEvent, Role
from tests.factories import member
from tests.judging.run_helpers import judge, labelled_project
from tests.judging.wire_server import Say, WireServer

N = 10
# 11 tokens in, 7 out (the wire server's usage) at $1,000 per million each: $0.018 a call.
PER_CALL = Decimal("0.018")


@pytest.fixture
def labelled(project, tmp_path):
    price_add(provider="openai-compatible", model="stub", input_per_million=1000,
              output_per_million=1000)  # fmt: skip
    return labelled_project(project, tmp_path, n=N)


@pytest.fixture
def server():
    with WireServer("openai-compatible", [Say('{"label": "pass"}')]) as srv:
        yield srv


def _runs(project) -> list[dict]:
    out = StringIO()
    call_command("judge_runs", "--project", project.slug, "--format", "json", stdout=out)
    return json.loads(out.getvalue())["runs"]


def _run_judge(project, *args) -> str:
    out = StringIO()
    call_command("run_judge", "--project", project.slug, "--judge", "j", *args, stdout=out)
    return out.getvalue()


def test_a_run_stops_before_the_call_that_would_pass_its_budget_and_resumes(labelled, server):
    judge(labelled, server.url, concurrency=4)
    out = _run_judge(labelled, "--split", "all", "--budget-usd", "0.05")
    [row] = _runs(labelled)
    assert (row["status"], row["calls"]) == ("budget_reached", 2)  # a third: $0.054 > $0.05
    assert row["cost_usd"] == pytest.approx(0.036) and row["budget_usd"] == 0.05
    assert row["latency_ms"]["p50"] is not None and row["latency_ms"]["p95"] is not None
    assert "budget reached" in row["error"] and "$0.05" in row["error"]
    assert f"--resume {row['id']} --budget-usd X" in out
    assert len(server.requests) == 2

    _run_judge(labelled, "--resume", str(row["id"]), "--budget-usd", "0.1")
    [row] = _runs(labelled)
    assert (row["status"], row["calls"], row["budget_usd"]) == ("budget_reached", 5, 0.1)

    _run_judge(labelled, "--resume", str(row["id"]), "--budget-usd", "1")
    [row] = _runs(labelled)
    assert (row["status"], row["calls"]) == ("done", N)
    assert row["cost_usd"] == pytest.approx(float(PER_CALL * N))
    texts = [r["json"]["messages"][1]["content"][0]["text"] for r in server.requests]
    assert len(texts) == N == len(set(texts))  # no call was made twice


def test_the_projects_monthly_cap_stops_every_run_of_the_month(labelled, server):
    budget_set(project=labelled, monthly_usd="0.04")
    config = judge(labelled, server.url).config
    first = run_execute(run_create(config=config, split="all", confirm_held_out=True))
    assert (first.status, Call.objects.filter(run=first).count()) == ("budget_reached", 2)
    assert "the project's monthly cap of $0.0400" in first.error
    second = run_execute(run_create(config=config, split="all", confirm_held_out=True))
    assert second.status == "budget_reached" and not Call.objects.filter(run=second).exists()
    budget_set(project=labelled, monthly_usd="10")
    resumed = run_execute(run_resume(first))
    assert (resumed.status, resumed.done) == ("done", N)
    assert len(server.requests) == N


def test_a_budget_needs_a_price_and_a_sane_amount(project, tmp_path, server):
    labelled_project(project, tmp_path, n=2)
    config = judge(project, server.url).config
    with pytest.raises(RunError, match="no price is in force for openai-compatible/stub"):
        run_create(config=config, split="all", confirm_held_out=True, budget_usd="1")
    price_add(provider="openai-compatible", model="stub", input_per_million=1,
              output_per_million=1)  # fmt: skip
    for bad in ("-1", "lots", "1e20"):
        with pytest.raises(RunError, match="budget:"):
            run_create(config=config, split="all", confirm_held_out=True, budget_usd=bad)
    with pytest.raises(BudgetError, match="monthly cap"):
        budget_set(project=project, monthly_usd="-3")


def test_a_zero_budget_makes_no_call(labelled, server):
    config = judge(labelled, server.url).config
    run = run_execute(run_create(config=config, split="all", confirm_held_out=True, budget_usd=0))
    assert (run.status, run.done, len(server.requests)) == ("budget_reached", 0, 0)


def test_the_monthly_cap_is_audited_and_set_in_the_admin(client, labelled, django_user_model):
    root = django_user_model.objects.create_superuser("root", "root@example.org", "pw")
    client.force_login(root)
    url = reverse("admin:judging_projectbudget_add")
    response = client.post(url, {"project": labelled.pk, "monthly_usd": "25"})
    assert response.status_code == 302
    assert ProjectBudget.objects.get(project=labelled).monthly_usd == Decimal("25")
    line = ProjectEvent.objects.get(project=labelled, action=ProjectAction.SETTINGS_CHANGED)
    assert (line.actor_name, line.target) == ("root", "monthly model budget")
    assert line.after == {"monthly_budget_usd": "25.0000"}


def test_the_judge_page_shows_the_budget_stop_and_resumes_with_a_new_budget(
    client, labelled, server
):
    config = judge(labelled, server.url).config
    run = run_execute(
        run_create(config=config, split="all", confirm_held_out=True, budget_usd="0.02")
    )
    client.force_login(member(labelled, Role.ADMIN, username="alex"))
    page = client.get(reverse("judge_page", args=[labelled.slug, "j"])).content.decode()
    assert "budget_reached" in page and "New budget (USD)" in page
    assert "latency p50" in page and 'id="run-charts"' in page
    client.post(reverse("run_continue", args=[labelled.slug, run.pk]), {"budget_usd": "5"})
    run.refresh_from_db()  # the test's task backend runs the queued run at once
    assert (run.status, run.budget_usd, run.done) == ("done", Decimal("5"), N)


def test_generation_runs_follow_the_monthly_cap(project, tmp_path):
    """Two readers under a cap that pays for one read: the other read is not made, its run
    ends budget_reached, the case waits; a raised cap and the same command finish it, making
    only the missing read."""
    from tests.judging.generation_helpers import FIRST, SECOND, generate, reader

    for model in ("model-a", "model-b"):
        price_add(provider="openai-compatible", model=model, input_per_million=1000,
                  output_per_million=1000)  # fmt: skip
    budget_set(project=project, monthly_usd="0.02")
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        with pytest.raises(CommandError, match="not imported because a read failed"):
            generate(project, tmp_path, srv)
        assert len(srv.requests) == 1
        statuses = sorted(Run.objects.values_list("status", flat=True))
        assert statuses == ["budget_reached", "done"]
        stopped = Run.objects.get(status="budget_reached")
        assert "the project's monthly cap of $0.0200" in stopped.error
        budget_set(project=project, monthly_usd="1")
        generate(project, tmp_path, srv)
        assert len(srv.requests) == 2  # the first read was reused
