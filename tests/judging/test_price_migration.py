"""The migration that fixes costs at call time: prices there were take effect from before any
call, and each past call stores its price and cost once (what the pages showed until then)."""

from decimal import Decimal

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)
BEFORE = [("judging", "0008_revisions")]
AFTER = [("judging", "0009_prices_at_call_time")]


def test_past_calls_keep_the_price_there_was_when_prices_became_append_only():
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(BEFORE)
        others = [n for n in executor.loader.graph.leaf_nodes() if n[0] != "judging"]
        apps = executor.loader.project_state(BEFORE + others).apps
        project = apps.get_model("reviews", "Project").objects.create(slug="m", name="M")
        config = apps.get_model("judging", "JudgeConfig").objects.create(project=project, name="j")
        version = apps.get_model("judging", "JudgeVersion").objects.create(
            config=config, number=1, provider="openai", model="gpt", prompt="p", prompt_sha256="0"
        )
        run = apps.get_model("judging", "Run").objects.create(project=project, version=version)
        Call = apps.get_model("judging", "Call")
        done = Call.objects.create(run=run, fingerprint="a", status="done", request={},
                                   input_tokens=1000, output_tokens=500)  # fmt: skip
        no_usage = Call.objects.create(run=run, fingerprint="b", status="done", request={})
        failed = Call.objects.create(run=run, fingerprint="c", status="failed", request={})
        apps.get_model("judging", "ModelPrice").objects.create(
            provider="openai", model="gpt", input_per_million=2, output_per_million=8
        )

        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
        apps = executor.loader.project_state(AFTER + others).apps
        Call = apps.get_model("judging", "Call")
        price = apps.get_model("judging", "ModelPrice").objects.get()
        assert price.effective_from.year == 2000
        assert Call.objects.get(pk=done.pk).cost_usd == Decimal("0.006")  # 1000*2 + 500*8, per 1e6
        assert Call.objects.get(pk=no_usage.pk).cost_usd == 0
        assert Call.objects.get(pk=failed.pk).price_id is None
    finally:  # the next test starts from the latest schema (PostgreSQL's flush needs it)
        latest = MigrationExecutor(connection).loader.graph.leaf_nodes()
        MigrationExecutor(connection).migrate(latest)
