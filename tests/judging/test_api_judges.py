"""The API's judges, runs, agreement report and comparisons: the pages' rules (admins run
judges; the dashboard's readers read the report), the CLI's documents, typed by the client
package's models."""

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging.models import HeldOutAccess, JudgeVersion, Run, RunStatus
from judging.stub_model import answer
from reviews.models import Role
from tests.factories import member
from tests.helpers import bearer
from tests.judging.run_helpers import PROMPT, labelled_project
from tests.judging.wire_server import Say, WireServer

pytestmark = pytest.mark.django_db


@pytest.fixture
def server():
    with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]))) as srv:
        yield srv


@pytest.fixture
def admin(project, tmp_path):
    labelled_project(project, tmp_path, n=12)
    return member(project, Role.ADMIN)


def _url(name, *args):
    return reverse(f"api:{name}", args=args)


def _judge(server, **fields):
    return {"name": "j", "provider": "openai-compatible", "model": "stub",
            "base_url": server.url, "criterion": "faithful", "prompt": PROMPT} | fields  # fmt: skip


def test_save_a_judge_then_run_it_and_read_its_runs(client, project, admin, server):
    headers = bearer(admin)
    url = _url("judge_save", project.slug)
    created = client.post(url, _judge(server), content_type="application/json", headers=headers)
    assert created.status_code == 201
    (version,) = created.json()["versions"]
    assert (
        version["ref"] == "j@1"
        and version["prompt_sha256"] == JudgeVersion.objects.get().prompt_sha256
    )
    again = client.post(url, _judge(server), content_type="application/json", headers=headers)
    assert again.status_code == 200 and len(again.json()["versions"]) == 1
    listed = client.get(_url("judge_list", project.slug), headers=headers).json()
    assert [j["name"] for j in listed] == ["j"]

    runs_url = _url("run_start", project.slug, "j")
    started = client.post(runs_url, {"split": "calibration", "concurrency": 2},
                          content_type="application/json", headers=headers)  # fmt: skip
    assert started.status_code == 201  # the immediate task backend ran it already
    run = Run.objects.get()
    status = client.get(_url("run_status", project.slug, run.pk), headers=headers).json()
    assert status["status"] == RunStatus.DONE and status["finished"] == run.planned > 0
    assert status["judge_name"] == "j" and status["judge_version"] == 1
    assert [
        r["id"] for r in client.get(_url("run_list", project.slug), headers=headers).json()
    ] == [run.pk]
    resumed = client.post(_url("run_continue", project.slug, run.pk), headers=headers)
    assert (
        resumed.status_code == 422
        and "none of its calls failed" in resumed.json()["error"]["reason"]
    )
    cancelled = client.post(_url("run_stop", project.slug, run.pk), headers=headers)
    assert cancelled.json()["status"] == RunStatus.DONE  # nothing left to stop


def test_held_out_runs_need_the_confirmation_and_bad_judges_name_the_field(
    client, project, admin, server
):
    headers = bearer(admin)
    client.post(_url("judge_save", project.slug), _judge(server),
                content_type="application/json", headers=headers)  # fmt: skip
    refused = client.post(_url("run_start", project.slug, "j"), {"split": "held_out"},
                          content_type="application/json", headers=headers)  # fmt: skip
    assert (
        refused.status_code == 422 and "explicit confirmation" in refused.json()["error"]["reason"]
    )
    assert not Run.objects.exists()
    private = _judge(server, name="k", base_url="https://10.0.0.1/v1")
    bad = client.post(_url("judge_save", project.slug), private,
                      content_type="application/json", headers=headers)  # fmt: skip
    assert bad.status_code == 422 and JudgeVersion.objects.count() == 1
    samples = client.post(_url("judge_save", project.slug), _judge(server, name="m", samples=99),
                          content_type="application/json", headers=headers)  # fmt: skip
    assert samples.status_code == 422 and "samples" in samples.json()["error"]["reason"]


def test_judges_and_runs_are_for_admins_only(client, project, admin):
    rater, outsider = (
        member(project, Role.APPROVER),
        member(type(project).objects.create(slug="o", name="O"), Role.ADMIN),
    )
    assert client.get(_url("judge_list", project.slug), headers=bearer(rater)).status_code == 403
    assert client.get(_url("run_list", project.slug), headers=bearer(outsider)).status_code == 404


def test_the_agreement_report_is_the_commands_document_and_a_recorded_look(client, project, admin):
    out = StringIO()
    call_command("agreement_report", "--project", project.slug, "--format", "json", stdout=out)
    from_cli = json.loads(out.getvalue())
    reader = member(project, Role.APPROVER)
    response = client.get(_url("agreement", project.slug), headers=bearer(reader))
    assert response.status_code == 200
    from_api = response.json()
    assert from_api | {"computed_at": None} == from_cli | {"computed_at": None}
    assert HeldOutAccess.objects.filter(
        user=reader, what="agreement report, split held_out"
    ).exists()
    rater = member(project, Role.RATER)
    assert client.get(_url("agreement", project.slug), headers=bearer(rater)).status_code == 403
    bad = client.get(_url("agreement", project.slug), {"criterion": "nope"}, headers=bearer(reader))
    assert bad.status_code == 422 and "no criterion 'nope'" in bad.json()["error"]["reason"]


def test_projects_lists_mine_with_my_roles(client, project, admin):
    member(project, Role.RATER)
    other = type(project).objects.create(slug="zz", name="Zz")
    both = member(project, Role.ADMIN, Role.APPROVER)
    member(other, Role.RATER)
    assert client.get(_url("project_list"), headers=bearer(both)).json() == [
        {"slug": project.slug, "name": project.name, "roles": ["admin", "approver"]}
    ]


def test_openapi_documents_the_new_endpoints(client, admin):
    client.force_login(admin)
    paths = client.get("/api/openapi.json").json()["paths"]
    for path in ("/api/projects", "/api/projects/{slug}/judges", "/api/projects/{slug}/runs/{pk}/cancel",
                 "/api/projects/{slug}/agreement", "/api/projects/{slug}/compare",
                 "/api/projects/{slug}/rows"):  # fmt: skip
        assert path in paths
