"""The Python client (clients/python) against a live server: every method as a notebook calls
it, the typed models the server declares, errors naming the record, rows streamed back."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from evalsite_client import (
    AgreementReport,
    Client,
    Estimate,
    Estimates,
    EvalsiteError,
    ImportReport,
)
from sklearn.metrics import cohen_kappa_score

from reviews.models import Role
from reviews.services.projects.tokens import token_create
from tests.factories import member
from tests.judging.helpers import criterion_record, human_record, item_record, verdict_record

pytestmark = pytest.mark.django_db(transaction=True)

LABELS = ["pass", "fail", "pass", "pass", "fail", "fail", "pass", "fail", "pass", "pass"]
JUDGED = ["pass", "fail", "fail", "pass", "fail", "pass", "pass", "fail", "pass", "pass"]
JUDGE = {"provider": "openai", "model": "gpt-4o"}


def _records():
    yield criterion_record()
    for n, (human, judged) in enumerate(zip(LABELS, JUDGED, strict=True)):
        yield item_record(f"c{n}")
        yield human_record(f"c{n}", "ana", human)
        yield verdict_record(f"c{n}", judged, judge=JUDGE, confidence=0.8)


@pytest.fixture
def evalsite(live_server, project):
    admin = member(project, Role.ADMIN, username="nina")
    _, secret = token_create(actor=admin, name="notebook")
    with Client(live_server.url, token=secret) as client:
        yield client


def test_import_then_read_the_report_and_the_rows_back(evalsite, project):
    assert [(p.slug, p.roles) for p in evalsite.projects()] == [(project.slug, ["admin"])]
    report = evalsite.import_records(project.slug, _records())  # a generator, streamed
    assert isinstance(report, ImportReport) and report.counts["items_created"] == 10

    agreement = evalsite.agreement_report(project.slug, criterion="faithful")
    assert isinstance(agreement, AgreementReport)
    out = StringIO()
    call_command("agreement_report", "--project", project.slug, "--criterion", "faithful",
                 "--format", "json", stdout=out)  # fmt: skip
    assert agreement.model_dump() | {"computed_at": ""} == json.loads(out.getvalue()) | {
        "computed_at": ""
    }
    (row,) = agreement.results
    assert row["cohen_kappa"]["value"] == pytest.approx(cohen_kappa_score(LABELS, JUDGED))

    verdicts = list(evalsite.export_rows(project.slug, kind="verdicts"))
    assert [v["label"] for v in verdicts] == JUDGED
    assert {v["judge"] for v in verdicts} == {"openai/gpt-4o"}
    frame = evalsite.export_dataframe(project.slug, kind="labels")
    assert list(frame["label"]) == LABELS


def test_import_file_and_a_refused_record_names_it(evalsite, project, tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records()))
    assert evalsite.import_records(project.slug, path).counts["items_created"] == 10
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(item_record("x", slices="math")) + "\n")
    with pytest.raises(EvalsiteError) as refused:
        evalsite.import_file(project.slug, bad)
    assert refused.value.status == 422
    assert (refused.value.error.file, refused.value.error.record) == ("bad.jsonl", "line 1")
    assert refused.value.error.path == "$.slices"


def test_import_a_label_studio_export_with_its_label_config(evalsite, project):
    data = Path(__file__).resolve().parent.parent / "data" / "label_studio"
    report = evalsite.import_file(
        project.slug, data / "text_export.json", label_config=data / "text_label_config.xml"
    )
    assert report.format == "label-studio" and report.counts["human_labels"] == 19
    assert not any("warning: no label config" in note for note in report.notes)
    agreement = evalsite.agreement_report(project.slug, criterion="correct", split="all")
    (pair,) = [e for e in agreement.human_human if e["kind"] == "rater_pair"]
    assert pair["cohen_kappa"]["value"] == pytest.approx(
        cohen_kappa_score(["pass", "fail", "pass", "pass"], ["pass", "fail", "fail", "pass"])
    )


def test_judge_runs_from_the_client(evalsite, project, tmp_path, settings):
    from judging.stub_model import answer
    from tests.judging.run_helpers import labelled_project
    from tests.judging.wire_server import Say, WireServer

    labelled_project(project, tmp_path, n=6)
    with WireServer("openai-compatible", answer=lambda r: Say(answer(r["json"]))) as server:
        from tests.judging.run_helpers import judge

        judge(project, server.url)
        assert [j.name for j in evalsite.judges(project.slug)] == ["j"]
        run = evalsite.run_judge(project.slug, "j", split="calibration")
    assert run.status == "done" and run.judge_version == 1  # the test site runs tasks inline
    assert [r.id for r in evalsite.judge_runs(project.slug)] == [run.id]
    assert evalsite.run(project.slug, run.id).finished == run.planned
    with pytest.raises(EvalsiteError, match="none of its calls failed"):
        evalsite.resume_run(project.slug, run.id)


def test_an_estimate_is_typed_and_the_commands_document(evalsite, project):
    evalsite.import_records(project.slug, _records())
    estimates = evalsite.estimate(
        project.slug, "faithful", "openai/gpt-4o", assume_random_labels=True, half_width=0.2
    )
    assert isinstance(estimates, Estimates)
    (estimate,) = estimates.estimates
    assert isinstance(estimate, Estimate) and estimate.n_labeled == 10
    assert estimate.human_only.value == pytest.approx(LABELS.count("pass") / 10)
    assert estimate.judge_only.value == pytest.approx(JUDGED.count("pass") / 10)
    assert estimate.lam == 0.0  # every item labelled: nothing for the judge to add
    out = StringIO()
    call_command("estimate", "--project", project.slug, "--criterion", "faithful",
                 "--judge", "openai/gpt-4o", "--assume-random-labels", "--half-width", "0.2",
                 "--format", "json", stdout=out)  # fmt: skip
    assert estimates.model_dump() == json.loads(out.getvalue())
    with pytest.raises(EvalsiteError, match="no criterion|unknown criterion|criterion") as refused:
        evalsite.estimate(project.slug, "nope", "openai/gpt-4o")
    assert refused.value.status == 422


def test_the_server_answers_estimates_with_the_clients_model():
    from judging.api import estimates

    (route,) = [r for r in estimates.router.path_operations.values()]
    (operation,) = route.operations
    assert operation.response_models[200].__annotations__["response"] is Estimates


def test_a_bad_token_is_refused(live_server, project):
    with (
        Client(live_server.url, token="evs_nope") as client,
        pytest.raises(EvalsiteError) as refused,
    ):
        client.projects()
    assert refused.value.status == 401
