"""Row exports of calls, verdicts and labels (judging's kinds): the same rows in CSV, JSONL and
Parquet, from the page, the API and `export_rows`, for project admins only, each a recorded look
at held-out items."""

import csv
import io
import json
import sys

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging.models import HeldOutAccess, HumanLabel, Verdict
from reviews.models import Role
from tests.helpers import bearer

pytestmark = pytest.mark.django_db


def _page(client, world, role, **query):
    client.force_login(world.users[role])
    return client.get(reverse("row_export", args=[world.project.slug]), query)


def _body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_verdicts_as_jsonl_name_each_judge_revision_and_criterion(client, world):
    response = _page(client, world, Role.ADMIN, kind="verdicts", format="jsonl")
    assert response.status_code == 200 and response["Content-Type"] == "application/x-ndjson"
    assert f'filename="{world.project.slug}-verdicts.jsonl"' in response["Content-Disposition"]
    rows = [json.loads(line) for line in _body(response).splitlines()]
    verdicts = Verdict.objects.filter(item__project=world.project)
    assert len(rows) == verdicts.count() == 80
    first = verdicts.order_by("pk").select_related("item", "judge", "criterion").first()
    assert rows[0] == rows[0] | {
        "verdict_id": first.pk,
        "item_id": first.item.external_id,
        "item_revision": 1,
        "criterion": first.criterion.name,
        "judge": f"{first.judge.provider}/{first.judge.model}",
        "label": first.label,
        "confidence": first.confidence,
    }
    assert {r["judge"] for r in rows} == {"openai/gpt-4o", "anthropic/claude"}


def test_the_three_formats_hold_the_same_rows(client, world):
    def get(fmt):
        return _body(_page(client, world, Role.ADMIN, kind="labels", format=fmt))

    from_jsonl = [json.loads(line) for line in get("jsonl").splitlines()]
    from_csv = list(csv.DictReader(io.StringIO(get("csv").decode())))
    from_parquet = pq.read_table(io.BytesIO(get("parquet"))).to_pylist()
    assert len(from_jsonl) == HumanLabel.objects.filter(item__project=world.project).count() == 80
    assert [r["label"] for r in from_csv] == [r["label"] for r in from_jsonl]
    assert [r["label_id"] for r in from_parquet] == [r["label_id"] for r in from_jsonl]
    assert [int(r["item_revision"]) for r in from_csv] == [r["item_revision"] for r in from_parquet]
    assert from_parquet[0]["created_at"].isoformat() == from_jsonl[0]["created_at"]


def test_only_admins_export_rows_and_each_export_is_a_held_out_look(client, world):
    looks = HeldOutAccess.objects.filter(project=world.project)
    before = looks.count()
    for role in (Role.RATER, Role.ADJUDICATOR, Role.APPROVER):
        assert _page(client, world, role, kind="verdicts", format="csv").status_code == 403
    assert _page(client, world, "outsider", kind="verdicts", format="csv").status_code == 404
    assert looks.count() == before
    _page(client, world, Role.ADMIN, kind="verdicts", format="csv")
    assert looks.latest("pk").what == "row export (verdicts)"
    assert looks.latest("pk").user == world.users[Role.ADMIN]


def test_a_bad_kind_on_the_page_is_a_message_not_a_file(client, world):
    response = _page(client, world, Role.ADMIN, kind="secrets", format="csv")
    assert response.status_code == 302


def test_the_api_streams_rows_by_kind(client, world):
    url = reverse("api:rows_download", args=[world.project.slug])
    headers = bearer(world.users[Role.ADMIN])
    response = client.get(url, {"kind": "verdicts"}, headers=headers)
    assert response.status_code == 200
    assert len(_body(response).splitlines()) == 80
    bad = client.get(url, {"kind": "secrets"}, headers=headers)
    assert bad.status_code == 422 and "not one of" in bad.json()["error"]["reason"]
    rater = client.get(url, {"kind": "verdicts"}, headers=bearer(world.users[Role.RATER]))
    assert rater.status_code == 403


def test_export_rows_command_writes_the_file(world, tmp_path):
    out = tmp_path / "verdicts.parquet"
    call_command("export_rows", "--project", world.project.slug, "--kind", "verdicts",
                 "--format", "parquet", "--out", str(out))  # fmt: skip
    table = pq.read_table(out)
    assert table.num_rows == 80 and "judge" in table.column_names
    assert not (tmp_path / "verdicts.parquet.partial").exists()


def test_parquet_without_pyarrow_is_refused_with_how_to_install_it(world, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow now raises ImportError
    out = tmp_path / "v.parquet"
    with pytest.raises(CommandError, match=r"pip install 'evalsite\[parquet\]'"):
        call_command("export_rows", "--project", world.project.slug, "--kind", "verdicts",
                     "--format", "parquet", "--out", str(out))  # fmt: skip
    assert not out.exists()


def test_calls_name_the_judge_version_and_the_price_in_force(world, tmp_path):
    from judging.models import Call, Run
    from tests.judging.run_helpers import judge

    version = judge(world.project, "http://127.0.0.1:9/v1", criterion="faithful").version
    run = Run.objects.create(project=world.project, version=version, split="calibration")
    item = world.item
    Call.objects.create(run=run, item=item, fingerprint="f" * 64, status="done",
                        request={"messages": []}, reply='{"label": "pass"}', input_tokens=12,
                        output_tokens=3, latency_ms=40)  # fmt: skip
    out = tmp_path / "calls.jsonl"
    call_command("export_rows", "--project", world.project.slug, "--kind", "calls",
                 "--format", "jsonl", "--out", str(out))  # fmt: skip
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row | {"created_at": None} == {
        "call_id": row["call_id"], "run_id": run.pk, "judge_version": "j@1",
        "provider": "openai-compatible", "model": "stub", "item_id": item.external_id,
        "item_revision": 1, "sample": 0, "display_order": "", "status": "done",
        "reply": '{"label": "pass"}', "error": "", "input_tokens": 12, "output_tokens": 3,
        "attempts": 1, "latency_ms": 40, "price_id": None, "cost_usd": None,
        "fingerprint": "f" * 64, "created_at": None,
    }  # fmt: skip
