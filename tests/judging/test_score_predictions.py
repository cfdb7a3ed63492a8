"""`manage.py score_predictions` and the scoring service on the database."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import ScoreRun
from tests.judging.helpers import INVOICE_ROWS, invoice_predictions, referenced_item, write_jsonl


def score(project, path, *args):
    out, err = StringIO(), StringIO()
    call_command(
        "score_predictions", "--project", project.slug, str(path), *args, stdout=out, stderr=err
    )
    return out.getvalue(), err.getvalue()


@pytest.mark.django_db
def test_command_scores_against_newest_ground_truth_and_stores_a_run(project, tmp_path):
    referenced_item(project, "inv-1", {**INVOICE_ROWS, "$.total": "99"}, version=1)
    referenced_item(project, "inv-1", INVOICE_ROWS, version=3)
    path = write_jsonl(tmp_path / "preds.jsonl", invoice_predictions())
    out, err = score(project, path, "--format", "json")
    report = json.loads(out)
    (section,) = report["sections"]
    stages = {c["stage_id"]: c for c in section["cases"]}
    assert stages["total"]["reference_version"] == 3
    assert stages["invoice_extraction"]["field_accuracy"]["value"] == pytest.approx(2 / 3)
    assert stages["total"]["failure_context"] == "upstream_or_combined"
    assert stages["total"]["producer"] == "openai/gpt-4o"
    run = ScoreRun.objects.get()
    assert run.report == report
    assert f"score run {run.pk}" in err


@pytest.mark.django_db
def test_markdown_labels_provisional_figures(project, tmp_path):
    referenced_item(project, "inv-1", INVOICE_ROWS, authority="generated")
    path = write_jsonl(tmp_path / "preds.jsonl", invoice_predictions(amount="5", total="15"))
    out, _ = score(project, path)
    assert "no approved ground truth" in out
    out, _ = score(project, path, "--allow-generated")
    assert "## Agreement with a provisional AI reference" in out
    provisional = out.split("## Agreement with a provisional AI reference")[1]
    assert "accuracy" not in provisional.lower()


@pytest.mark.django_db
def test_json_keeps_provisional_figures_apart_and_labelled(project, tmp_path):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    referenced_item(project, "inv-2", INVOICE_ROWS, authority="generated")
    records = invoice_predictions("inv-1") + invoice_predictions("inv-2")
    path = write_jsonl(tmp_path / "preds.jsonl", records)
    truth, provisional = json.loads(
        score(project, path, "--allow-generated", "--format", "json")[0]
    )["sections"]
    assert truth["label"] == "accuracy against approved ground truth"
    assert {c["case_id"] for c in truth["cases"]} == {"inv-1"}
    assert provisional["label"] == "agreement with a provisional AI reference"
    assert {c["case_id"] for c in provisional["cases"]} == {"inv-2"}
    assert "accuracy" not in json.dumps(provisional)


@pytest.mark.django_db
def test_unknown_case_is_named_and_nothing_is_stored(project, tmp_path):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    records = invoice_predictions() + invoice_predictions(case_id="inv-404")
    path = write_jsonl(tmp_path / "preds.jsonl", records)
    with pytest.raises(CommandError) as caught:
        score(project, path)
    assert str(
        caught.value
    ) == "preds.jsonl, line 3, $.case_id: no item 'inv-404' in project " + repr(project.slug)
    assert not ScoreRun.objects.exists()


@pytest.mark.django_db
def test_bad_field_is_named(project, tmp_path):
    path = tmp_path / "preds.jsonl"
    path.write_text('{"case_id": "a", "prediction": {}}\n{"case_id": "b", "prediction": 3}\n')
    with pytest.raises(CommandError, match=r"preds.jsonl, line 2, \$.prediction: "):
        score(project, path)
    assert not ScoreRun.objects.exists()


@pytest.mark.django_db
def test_a_negative_seed_is_refused_naming_it(project, tmp_path):
    referenced_item(project, "inv-1", INVOICE_ROWS)
    path = write_jsonl(tmp_path / "preds.jsonl", invoice_predictions())
    with pytest.raises(CommandError, match="--seed: .*-1"):
        score(project, path, "--seed", "-1")
    assert not ScoreRun.objects.exists()


@pytest.mark.django_db
def test_missing_file_and_project(project, tmp_path):
    with pytest.raises(CommandError, match="No such file"):
        score(project, tmp_path / "nope.jsonl")
    with pytest.raises(CommandError, match="No project"):
        call_command("score_predictions", "--project", "nope", str(tmp_path / "x"))


@pytest.mark.django_db
def test_score_runs_are_append_only(project, tmp_path):
    from reviews.models.append_only import AppendOnlyError

    referenced_item(project, "inv-1", INVOICE_ROWS)
    score(project, write_jsonl(tmp_path / "p.jsonl", invoice_predictions()))
    run = ScoreRun.objects.get()
    with pytest.raises(AppendOnlyError):
        run.save()
    with pytest.raises(AppendOnlyError):
        ScoreRun.objects.all().delete()
