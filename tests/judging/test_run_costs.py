"""A run's cost is fixed when its calls are made: each call stores its tokens, latency, the
price in force and its cost; a later price never changes a past run, and a reply without usage
is counted and makes the cost a lower bound."""

import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging.models import Call, ModelPrice
from judging.services.runs.control import run_create
from judging.services.runs.runner import run_execute
from judging.stub_model import answer
from reviews.models import AppendOnlyError, Role
from tests.factories import member
from tests.judging.run_helpers import judge, labelled_project
from tests.judging.wire_server import Raw, Say, WireServer

pytestmark = pytest.mark.django_db
KEYS = {
    "id", "judge", "judge_name", "judge_version", "split", "status", "calls", "tokens_in",
    "tokens_out", "usage_missing", "cost_usd", "started_at", "finished_at", "error", "skipped",
    "budget_usd", "latency_ms", "evidence",
}  # fmt: skip


def command(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def runs_json(project) -> list[dict]:
    return json.loads(command("judge_runs", "--project", project.slug, "--format", "json"))["runs"]


def price(input_usd, output_usd="0"):
    return command(
        "model_price", "--provider", "openai-compatible", "--model", "stub",
        "--input-usd-per-mtok", input_usd, "--output-usd-per-mtok", output_usd,
    )  # fmt: skip


def run_once(project, url, concurrency=4, **fields):
    config = judge(project, url, **fields).config
    run = run_create(config=config, split="all", confirm_held_out=True, concurrency=concurrency)
    return run_execute(run)


def test_a_past_runs_cost_stays_when_the_price_changes(project, tmp_path):
    labelled_project(project, tmp_path, n=6)
    price("1000", "2000")
    with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]), (100, 20))) as s:
        run = run_once(project, s.url, samples=3)
    calls = Call.objects.filter(run=run)
    assert calls.count() == 18
    first = ModelPrice.objects.get()
    for call in calls:
        assert (call.input_tokens, call.output_tokens, call.price) == (100, 20, first)
        assert call.cost_usd == Decimal("0.14")  # (100 * 1000 + 20 * 2000) / 1e6
        assert call.latency_ms is not None and call.latency_ms >= 0
    [row] = runs_json(project)
    assert set(row) == KEYS
    assert row["cost_usd"] == pytest.approx(18 * 0.14)
    latencies = sorted(c.latency_ms for c in calls)
    assert latencies[0] <= row["latency_ms"]["p50"] <= row["latency_ms"]["p95"] <= latencies[-1]
    assert (row["judge"], row["judge_name"], row["judge_version"]) == (
        "openai-compatible/stub",
        "j",
        1,
    )
    assert (row["status"], row["split"], row["calls"], row["usage_missing"]) == (
        "done",
        "all",
        18,
        0,
    )
    assert (row["tokens_in"], row["tokens_out"]) == (1800, 360)
    assert row["started_at"] and row["finished_at"]

    assert "from" in price("5000", "9000")  # the price is raised: a new row, the old one kept
    assert ModelPrice.objects.count() == 2
    assert runs_json(project)[0]["cost_usd"] == pytest.approx(18 * 0.14)
    assert "cost $2.5200" in command("judge_runs", "--project", project.slug)


def test_a_reply_without_usage_is_counted_and_the_cost_is_at_least(client, project, tmp_path):
    labelled_project(project, tmp_path, n=4)
    price("1000")
    no_usage = json.dumps({"choices": [{"message": {"content": '{"label": "pass"}'}}]}).encode()
    replies = iter([Raw(no_usage), Say('{"label": "pass"}', (100, 5))] * 4)
    with WireServer("openai-compatible", answer=lambda r: next(replies)) as server:
        run = run_once(project, server.url, concurrency=1)
    [row] = runs_json(project)
    assert (row["calls"], row["usage_missing"]) == (4, 2)
    assert row["cost_usd"] == pytest.approx(2 * 0.1)
    assert "(2 without usage), cost at least $0.2000" in command(
        "judge_runs", "--project", project.slug
    )
    client.force_login(member(project, Role.ADMIN))
    page = client.get(reverse("judge_page", args=[project.slug, "j"])).content.decode()
    assert "(2 replies without usage)" in page and "cost at least $0.2000" in page
    assert run.input_tokens == 200


def test_a_call_made_without_a_price_in_force_has_no_cost_even_after_one_is_added(
    project, tmp_path
):
    labelled_project(project, tmp_path, n=2)
    with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]))) as server:
        run_once(project, server.url)
    price("1000")
    assert runs_json(project)[0]["cost_usd"] is None
    assert "cost no price" in command("judge_runs", "--project", project.slug)


def test_prices_are_append_only_and_bad_ones_are_refused(project):
    price("1.5")
    row = ModelPrice.objects.get()
    with pytest.raises(AppendOnlyError):
        ModelPrice.objects.filter(pk=row.pk).update(input_per_million=9)
    with pytest.raises(AppendOnlyError):
        row.delete()
    for bad, why in (("-1", "between 0"), ("abc", "not a number"), ("0.00001", "4 decimal")):
        with pytest.raises(CommandError, match=why):
            price(bad)
    assert ModelPrice.objects.count() == 1


def test_the_admin_adds_a_price_and_never_changes_one(admin_client):
    url = reverse("admin:judging_modelprice_add")
    response = admin_client.post(
        url,
        {"provider": "anthropic", "model": "claude", "input_per_million": "3",
         "output_per_million": "15"},
    )  # fmt: skip
    assert response.status_code == 302, response.content.decode()[:2000]
    added = ModelPrice.objects.get()
    assert added.created_by is not None and added.input_per_million == 3
    change = reverse("admin:judging_modelprice_change", args=[added.pk])
    admin_client.post(change, {"provider": "anthropic", "model": "claude",
                               "input_per_million": "99", "output_per_million": "15"})  # fmt: skip
    added.refresh_from_db()
    assert added.input_per_million == 3 and ModelPrice.objects.count() == 1
