"""Budgets: a run stops before the call that would pass its own budget or its project's monthly
cap, ends `budget_reached`, and resumes with a new budget making only the missing calls."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db.models import Sum
from django.urls import reverse

from judging.models import Call, ProjectBudget, Run
from judging.services.runs.budgets import BudgetError, budget_set, call_cost_bound
from judging.services.runs.control import RunError, run_create, run_resume
from judging.services.runs.plan import plan_calls
from judging.services.runs.prices import price_add, price_in_force
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


def _known_cost(config) -> Run:
    """One call made without a budget: the version's calls now have a known cost."""
    return run_execute(run_create(config=config, split="all", confirm_held_out=True, limit=1))


def test_a_run_stops_before_the_call_that_would_pass_its_budget_and_resumes(labelled, server):
    _known_cost(judge(labelled, server.url, concurrency=4).config)
    out = _run_judge(labelled, "--split", "all", "--budget-usd", "0.05")
    row = _runs(labelled)[-1]
    assert (row["status"], row["calls"]) == ("budget_reached", 2)  # a third: $0.054 > $0.05
    assert row["cost_usd"] == pytest.approx(0.036) and row["budget_usd"] == 0.05
    assert row["latency_ms"]["p50"] is not None and row["latency_ms"]["p95"] is not None
    assert "budget reached" in row["error"] and "$0.05" in row["error"]
    assert f"--resume {row['id']} --budget-usd X" in out
    assert len(server.requests) == 1 + 2

    _run_judge(labelled, "--resume", str(row["id"]), "--budget-usd", "0.1")
    row = _runs(labelled)[-1]
    assert (row["status"], row["calls"], row["budget_usd"]) == ("budget_reached", 5, 0.1)

    _run_judge(labelled, "--resume", str(row["id"]), "--budget-usd", "1")
    row = _runs(labelled)[-1]
    assert (row["status"], row["calls"]) == ("done", N - 1)
    assert row["cost_usd"] == pytest.approx(float(PER_CALL * (N - 1)))
    texts = [r["json"]["messages"][1]["content"][0]["text"] for r in server.requests]
    assert len(texts) == N == len(set(texts))  # no call was made twice


def test_the_first_call_goes_only_if_the_most_it_can_cost_fits(labelled, server):
    """No call of the version has a cost yet: the first is bounded by its request (every byte a
    token, its whole output cap), so a budget below that bound makes no call at all."""
    saved = judge(labelled, server.url, concurrency=4)
    config = saved.config
    [first, *_] = plan_calls(saved.version, labelled.items.order_by("pk").iterator())
    bound = call_cost_bound(price_in_force("openai-compatible", "stub"), first.request)
    assert bound > PER_CALL * 10  # 11 tokens in and 7 out is what the model reports, afterwards

    below = run_execute(
        run_create(config=config, split="all", confirm_held_out=True, budget_usd=bound / 2)
    )
    assert (below.status, below.done, len(server.requests)) == ("budget_reached", 0, 0)
    assert f"the first call could cost up to ${bound:.4f}" in below.error

    above = run_execute(run_resume(below, budget_usd=bound + PER_CALL * N))
    assert (above.status, above.done, len(server.requests)) == ("done", N, N)
    assert Call.objects.filter(run=above).aggregate(s=Sum("cost_usd"))["s"] <= above.budget_usd


def test_the_projects_monthly_cap_stops_every_run_of_the_month(labelled, server):
    config = judge(labelled, server.url).config
    _known_cost(config)  # $0.018 of this month's spending, and the version's cost per call
    budget_set(project=labelled, monthly_usd="0.058")  # room for two more calls
    first = run_execute(run_create(config=config, split="all", confirm_held_out=True))
    assert (first.status, Call.objects.filter(run=first).count()) == ("budget_reached", 2)
    assert "the project's monthly cap of $0.0580" in first.error
    second = run_execute(run_create(config=config, split="all", confirm_held_out=True))
    assert second.status == "budget_reached" and not Call.objects.filter(run=second).exists()
    budget_set(project=labelled, monthly_usd="10")
    resumed = run_execute(run_resume(first))
    assert (resumed.status, resumed.done) == ("done", N - 1)
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
    _known_cost(config)
    run = run_execute(
        run_create(config=config, split="all", confirm_held_out=True, budget_usd="0.02")
    )
    client.force_login(member(labelled, Role.ADMIN, username="alex"))
    page = client.get(reverse("judge_page", args=[labelled.slug, "j"])).content.decode()
    assert "budget_reached" in page and "New budget (USD)" in page
    assert "latency p50" in page and 'id="run-charts"' in page
    client.post(reverse("run_continue", args=[labelled.slug, run.pk]), {"budget_usd": "5"})
    run.refresh_from_db()  # the test's task backend runs the queued run at once
    assert (run.status, run.budget_usd, run.done) == ("done", Decimal("5"), N - 1)


def test_generation_runs_follow_the_monthly_cap(project, tmp_path):
    """Two readers under a cap that pays for the cheap model's read at its most, not the dear
    one's: the dear read is not made, its run ends budget_reached, the case waits; a raised cap
    and the same command finish it, making only the missing read."""
    from tests.judging.generation_helpers import FIRST, SECOND, generate, reader

    price_add(provider="openai-compatible", model="model-a", input_per_million="0.1",
              output_per_million="0.1")  # fmt: skip
    price_add(provider="openai-compatible", model="model-b", input_per_million=1000,
              output_per_million=1000)  # fmt: skip
    budget_set(project=project, monthly_usd="0.02")
    with WireServer("openai-compatible", answer=reader(FIRST, SECOND)) as srv:
        with pytest.raises(CommandError, match="not imported because a read failed"):
            generate(project, tmp_path, srv)
        assert [r["json"]["model"] for r in srv.requests] == ["model-a"]
        statuses = sorted(Run.objects.values_list("status", flat=True))
        assert statuses == ["budget_reached", "done"]
        stopped = Run.objects.get(status="budget_reached")
        assert stopped.version.model == "model-b"
        assert "the project's monthly cap of $0.0200" in stopped.error
        budget_set(project=project, monthly_usd="100")
        generate(project, tmp_path, srv)
        assert len(srv.requests) == 2  # the first read was reused


def test_a_run_under_a_budget_runs_on_one_worker(labelled, server, settings):
    """Each worker of a shared run counts only its own calls in flight: a budget is kept
    exactly only by one worker, so a run under one is not shared (RUN_WORKERS aside)."""
    settings.RUN_WORKERS = 2
    config = judge(labelled, server.url).config

    def site_run(**kwargs) -> Run:
        return run_create(config=config, split="all", confirm_held_out=True, from_site=True,
                          **kwargs)  # fmt: skip

    shared = site_run()
    assert shared.workers == 2 and site_run(budget_usd="5").workers == 1
    shared.status = "interrupted"
    shared.save(update_fields=["status"])
    assert run_resume(shared, budget_usd="5").workers == 1
    budget_set(project=labelled, monthly_usd="10")
    assert site_run().workers == 1
